"""The suite's two tiers (``tests/conftest.py``): a fast-tier test cannot start Ray or a Spark
JVM; the fast tier runs first, and a failure in it stops the run before the integration tier."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SUITE = """
import os
import pytest

def log(name):
    with open(os.environ["TIERS_LOG"], "a") as out:
        out.write(name + "\\n")

@pytest.mark.integration
def test_heavy():
    log("heavy")

def test_fast():
    log("fast")

def test_fast_that_may_fail():
    log("fast_that_may_fail")
    assert os.environ["TIERS_FAIL"] == "0"
"""


def test_a_fast_test_cannot_start_ray_or_a_spark_jvm():
    import ray
    from pyspark.sql import SparkSession

    with pytest.raises(AssertionError, match="must not start Ray: mark it @pytest.mark.runtime"):
        ray.init(num_cpus=1)
    assert not ray.is_initialized()
    with pytest.raises(AssertionError, match="must not start a Spark JVM: .*mark.spark"):
        SparkSession.builder.master("local[1]").getOrCreate()


def run_suite(tmp_path: Path, fail: bool) -> tuple[subprocess.CompletedProcess, list[str]]:
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    integration: heavy\n    runtime: heavy\n    spark: heavy\n"
    )
    log = tmp_path / f"log-{fail}"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.conftest",
            "-p",
            "no:cacheprovider",
            "--strict-markers",
            "test_suite.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "TIERS_LOG": str(log),
            "TIERS_FAIL": "1" if fail else "0",
        },
    )
    return done, log.read_text().split()


def test_the_fast_tier_runs_first_and_a_failure_in_it_stops_the_run_before_the_integration_tier(
    tmp_path,
):
    passed, order = run_suite(tmp_path, fail=False)
    assert passed.returncode == 0, passed.stdout
    assert order == ["fast", "fast_that_may_fail", "heavy"]

    failed, order = run_suite(tmp_path, fail=True)
    assert failed.returncode == 1, failed.stdout
    assert order == ["fast", "fast_that_may_fail"]
    assert "the fast tier failed (1 failed), so the integration tier was not run (1 tests)" in (
        failed.stdout
    )
