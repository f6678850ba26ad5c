"""A runtime that cannot be imported fails the suite rather than skipping its tests, unless a
user opts out knowingly (``TIDAL_TESTS_ALLOW_MISSING_RUNTIME=1``): shown by running pytest on a
runtime-marked test where ``ray`` cannot be imported."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_without_ray(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    fake = tmp_path / "fake"
    (fake / "ray").mkdir(parents=True)
    (fake / "ray" / "__init__.py").write_text("raise ImportError('no ray on this machine')\n")
    (tmp_path / "test_needs_runtime.py").write_text(
        "import pytest\n\npytestmark = pytest.mark.runtime\n\n\ndef test_it():\n    pass\n"
    )
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.conftest",
            "-p",
            "no:cacheprovider",
            "-q",
            "test_needs_runtime.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": f"{fake}{os.pathsep}{ROOT}", **env},
    )


def test_a_runtime_that_cannot_be_imported_fails_the_suite(tmp_path):
    done = run_without_ray(tmp_path)
    assert done.returncode != 0
    assert "Tidal's runtime is not available" in done.stdout + done.stderr
    assert "TIDAL_TESTS_ALLOW_MISSING_RUNTIME=1" in done.stdout + done.stderr


def test_the_opt_out_skips_the_runtimes_tests_knowingly(tmp_path):
    done = run_without_ray(tmp_path, TIDAL_TESTS_ALLOW_MISSING_RUNTIME="1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout
