"""Fixtures for the example jobs: tiny generated data, a local SparkSession, and markers.

``spark`` marks tests that start a JVM; ``runtime`` marks tests that need Tidal running on Ray
and are skipped, with the reason, while ``jobmanager.client.client`` cannot be imported.
"""

from __future__ import annotations

import importlib

import pytest

from examples.tpch_data import generate

TINY_SCALE = 0.002


def pytest_configure(config):
    config.addinivalue_line("markers", "spark: starts a local PySpark session (needs Java)")
    config.addinivalue_line("markers", "runtime: runs jobs on Tidal's runtime on a local Ray")


def _client_import_error() -> str | None:
    try:
        importlib.import_module("jobmanager.client.client")
    except ImportError as error:
        return f"Tidal's runtime is not available (jobmanager.client.client: {error})"
    return None


def pytest_collection_modifyitems(config, items):
    runtime = [item for item in items if item.get_closest_marker("runtime")]
    reason = _client_import_error() if runtime else None
    if reason:
        for item in runtime:
            item.add_marker(pytest.mark.skip(reason=reason))


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
