"""Fixtures for the TaskManager tests: real files, real partition files, one SparkSession."""

from __future__ import annotations

import pytest
import structlog

from jobmanager.model.config import Configuration
from taskmanager.spark import SparkSessionProvider


@pytest.fixture(autouse=True)
def quiet_logs():
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    yield
    structlog.reset_defaults()


@pytest.fixture(scope="session")
def spark_provider(tmp_path_factory):
    """One SparkSession for the whole test process (its start costs seconds), started only if
    a test asks for it through a PySpark task."""
    provider = SparkSessionProvider(2, tmp_path_factory.mktemp("spark"), Configuration())
    yield provider
    provider.stop()
