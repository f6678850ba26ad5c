"""Fixtures for the example jobs: tiny generated data (the local SparkSession they share with
the SQL tests, and the tiers, are in ``tests/conftest.py``)."""

from __future__ import annotations

import pytest

from examples.tpch_data import generate

TINY_SCALE = 0.002


@pytest.fixture(scope="session")
def tiny_data(tmp_path_factory):
    """TPC-H-shaped tables at scale 0.002 (3,000 orders), generated once per session."""
    directory = tmp_path_factory.mktemp("tpch")
    generate(directory, TINY_SCALE)
    return directory
