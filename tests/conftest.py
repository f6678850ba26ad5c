"""Shared fixtures: one real local Ray cluster for every test that needs one, and one local
SparkSession for every test that runs PySpark alone. A runtime that cannot be imported fails
the suite, so a broken install never passes by skipping; only where
``TIDAL_TESTS_ALLOW_MISSING_RUNTIME=1`` says so, knowingly, are the runtime's tests skipped."""

import importlib
import logging
import os
import shutil
import tempfile

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "runtime: runs jobs on a real local Ray cluster")
    config.addinivalue_line("markers", "spark: starts a real SparkSession (a JVM)")
    # job stores of the tests' jobs go to a temporary home, not the user's ~/.tidal; Ray's
    # processes, started later, inherit it
    home = tempfile.mkdtemp(prefix="tidal-home-")
    os.environ["TIDAL_HOME"] = home
    config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))


ALLOW_MISSING_RUNTIME = "TIDAL_TESTS_ALLOW_MISSING_RUNTIME"


def _client_import_error() -> str | None:
    try:
        importlib.import_module("jobmanager.client.client")
    except ImportError as error:
        return f"Tidal's runtime is not available (jobmanager.client.client: {error})"
    return None


def pytest_collection_modifyitems(config, items):
    """A runtime that cannot be imported fails the suite, so a broken install never passes by
    skipping; only where ``TIDAL_TESTS_ALLOW_MISSING_RUNTIME=1`` says so, knowingly, are the
    runtime's tests skipped instead."""
    runtime = [item for item in items if item.get_closest_marker("runtime")]
    reason = _client_import_error() if runtime else None
    if not reason:
        return
    if os.environ.get(ALLOW_MISSING_RUNTIME) != "1":
        raise pytest.UsageError(f"{reason}; {len(runtime)} tests need it (set "
                                f"{ALLOW_MISSING_RUNTIME}=1 to skip them knowingly)")  # fmt: skip
    for item in runtime:
        item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray cluster with 8 logical CPUs, so a test can ask for up to 8 slots. Its
    address goes to the commands the tests start (``RAY_ADDRESS``), so that ``tidal status``
    after ``tidal run`` asks this cluster even when another one has started on the machine."""
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=8, include_dashboard=False, namespace="tidal",
                 logging_level=logging.WARNING, log_to_driver=False)  # fmt: skip
    before = os.environ.get("RAY_ADDRESS")
    os.environ["RAY_ADDRESS"] = ray.get_runtime_context().gcs_address
    yield ray
    ray.shutdown()
    if before is None:
        os.environ.pop("RAY_ADDRESS", None)
    else:
        os.environ["RAY_ADDRESS"] = before


@pytest.fixture(scope="session")
def spark_session():
    """A local PySpark session (two cores, two shuffle partitions, no UI): the example jobs'
    user code and the SQL reference checks run in it."""
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("tidal-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
