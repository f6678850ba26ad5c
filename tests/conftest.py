"""Shared fixtures: one real local Ray cluster for every test that needs one, and one local
SparkSession for every test that runs PySpark alone. A runtime that cannot be imported fails
the suite, so a broken install never passes by skipping; only where
``TIDAL_TESTS_ALLOW_MISSING_RUNTIME=1`` says so, knowingly, are the runtime's tests skipped.

The suite runs in two tiers, in one pytest session. The fast tier is every test without a
heavy marker (``runtime``, ``spark``, ``integration``; declared in pyproject.toml): it runs
first, and none of its tests can start Ray or a Spark JVM in this process (``ray.init`` and
the JVM's launch raise). The integration tier, the marked tests, runs after it, and only if
the whole fast tier passed: a mistake in the core fails the run within a minute."""

import importlib
import logging
import os
import shutil
import tempfile
import time

import pytest


HEAVY = ("runtime", "spark", "integration")
LAST_FAST = pytest.StashKey[str]()
STARTED = pytest.StashKey[float]()


def is_heavy(item: pytest.Item) -> bool:
    return any(item.get_closest_marker(name) for name in HEAVY)


def pytest_configure(config):
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


def pytest_sessionstart(session):
    session.config.stash[STARTED] = time.monotonic()


def pytest_collection_modifyitems(config, items):
    """The fast tier first, the integration tier after, each in the order collected."""
    fast = [item for item in items if not is_heavy(item)]
    heavy = [item for item in items if is_heavy(item)]
    items[:] = fast + heavy
    if fast and heavy:
        config.stash[LAST_FAST] = fast[-1].nodeid
    _skip_runtime_tests_knowingly(config, items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Around each fast test, its fixtures of every scope included: no Ray, no Spark JVM.
    After the fast tier's last test, if any of the tier failed: stop there (exit code 1)."""
    if is_heavy(item):
        return (yield)
    with pytest.MonkeyPatch.context() as patch:
        forbid_clusters(patch)
        done = yield
    session = item.session
    if item.nodeid != item.config.stash.get(LAST_FAST, None):
        return done
    heavy = sum(1 for other in session.items if is_heavy(other))
    reporter = item.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        seconds = time.monotonic() - item.config.stash[STARTED]
        reporter.write_line(
            f"\nfast tier: {len(session.items) - heavy} tests in {seconds:.0f} s, "
            f"{session.testsfailed} failed; integration tier: {heavy} tests"
        )
    if session.testsfailed:
        session.shouldfail = (
            f"the fast tier failed ({session.testsfailed} failed), so the "
            f"integration tier was not run ({heavy} tests)"
        )
    return done


def forbid_clusters(patch: pytest.MonkeyPatch) -> None:
    """``ray.init`` and the launch of a Spark JVM raise, saying which marker the test needs (as
    Ray Data's unit tests make ``ray.init`` raise)."""

    def forbidden(what: str, marker: str):
        def refuse(*args, **kwargs):
            raise AssertionError(
                f"a fast-tier test must not start {what}: mark it "
                f"@pytest.mark.{marker} (tests/conftest.py)"
            )

        return refuse

    try:
        import ray
    except ImportError:  # TIDAL_TESTS_ALLOW_MISSING_RUNTIME: nothing to start
        pass
    else:
        patch.setattr(ray, "init", forbidden("Ray", "runtime"))
    try:
        import pyspark.core.context as spark_context
    except ImportError:
        pass
    else:
        patch.setattr(spark_context, "launch_gateway", forbidden("a Spark JVM", "spark"))


def _skip_runtime_tests_knowingly(config, items):
    """A runtime that cannot be imported fails the suite, so a broken install never passes by
    skipping; only where ``TIDAL_TESTS_ALLOW_MISSING_RUNTIME=1`` says so, knowingly, are the
    runtime's tests skipped instead."""
    runtime = [item for item in items if item.get_closest_marker("runtime")]
    reason = _client_import_error() if runtime else None
    if not reason:
        return
    if os.environ.get(ALLOW_MISSING_RUNTIME) != "1":
        raise pytest.UsageError(
            f"{reason}; {len(runtime)} tests need it (set "
            f"{ALLOW_MISSING_RUNTIME}=1 to skip them knowingly)"
        )
    for item in runtime:
        item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray cluster with 8 logical CPUs, so a test can ask for up to 8 slots. Its
    address goes to the commands the tests start (``RAY_ADDRESS``), so that ``tidal status``
    after ``tidal run`` asks this cluster even when another one has started on the machine."""
    import ray

    if not ray.is_initialized():
        ray.init(
            num_cpus=8,
            include_dashboard=False,
            namespace="tidal",
            logging_level=logging.WARNING,
            log_to_driver=False,
        )
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
