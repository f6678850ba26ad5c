"""Shared fixtures: one real local Ray cluster for every test that needs one."""

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


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray cluster with 8 logical CPUs, so a test can ask for up to 8 slots."""
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=8, include_dashboard=False, namespace="tidal",
                 logging_level=logging.WARNING, log_to_driver=False)  # fmt: skip
    yield ray
    ray.shutdown()
