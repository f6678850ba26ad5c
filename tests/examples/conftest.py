"""Fixtures for the example jobs: tiny generated data, a local SparkSession, and markers.

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


@pytest.fixture(scope="session")
def spark_session():
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("tidal-tests-examples")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
