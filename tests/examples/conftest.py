"""Fixtures for the example jobs: tiny generated data, and markers (the local SparkSession
they share with the SQL tests is in ``tests/conftest.py``).

``spark`` marks tests that start a JVM; ``runtime`` marks tests that need Tidal running on Ray
(``tests/conftest.py`` fails the suite when the runtime cannot be imported).
"""

from __future__ import annotations

import pytest

from examples.tpch_data import generate

TINY_SCALE = 0.002


def pytest_configure(config):
    config.addinivalue_line("markers", "spark: starts a local PySpark session (needs Java)")
    config.addinivalue_line("markers", "runtime: runs jobs on Tidal's runtime on a local Ray")


@pytest.fixture(scope="session")
def tiny_data(tmp_path_factory):
    """TPC-H-shaped tables at scale 0.002 (3,000 orders), generated once per session."""
    directory = tmp_path_factory.mktemp("tpch")
    generate(directory, TINY_SCALE)
    return directory
