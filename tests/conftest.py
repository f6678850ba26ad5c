"""Shared fixtures: one real local Ray cluster for every test that needs one."""

import logging

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "runtime: runs jobs on a real local Ray cluster")
    config.addinivalue_line("markers", "spark: starts a real SparkSession (a JVM)")


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray cluster with 8 logical CPUs, so a test can ask for up to 8 slots."""
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=8, include_dashboard=False, namespace="tidal",
                 logging_level=logging.WARNING, log_to_driver=False)  # fmt: skip
    yield ray
    ray.shutdown()
