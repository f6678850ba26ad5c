"""The class archive of a TaskManager's Spark JVM: named by its PySpark and its Java, mapped by
the JVM of a TaskManager's session (as ``/proc/<pid>/maps`` shows), and a damaged one ignored
without changing any result. The JVMs start in processes of their own
(``class_archive_probe.py``); the environment's archive is made first if ``deploy/run`` has not
made it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from taskmanager import class_archive
from taskmanager.java import find_java

ROOT = Path(__file__).resolve().parents[2]
TOTALS = [{"key": 0, "total": 135}, {"key": 1, "total": 145}, {"key": 2, "total": 155}]


def fake_java(directory: Path) -> str:
    directory.mkdir(parents=True)
    java = directory / "java"
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    return str(java)


def test_each_java_has_its_own_archive_and_the_option_only_once_it_exists(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    one, other = fake_java(tmp_path / "one"), fake_java(tmp_path / "other")
    assert class_archive.archive_path(one) != class_archive.archive_path(other)
    assert class_archive.archive_path(one).parent == tmp_path / "share" / "tidal"
    assert class_archive.java_options(one) == []
    class_archive.archive_path(one).parent.mkdir(parents=True)
    class_archive.archive_path(one).write_bytes(b"archive")
    assert class_archive.java_options(one) == [
        f"-XX:SharedArchiveFile={class_archive.archive_path(one)}"
    ]
    assert class_archive.java_options(other) == []


def probe(*args: str) -> dict:
    run = subprocess.run(
        [sys.executable, "-m", "tests.taskmanager.class_archive_probe", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def archive() -> Path:
    java, _ = find_java()
    if not class_archive.archive_path(java).is_file():
        subprocess.run(
            [sys.executable, "-m", "taskmanager.class_recording", "--if-missing"],
            cwd=ROOT,
            check=True,
            timeout=600,
        )
    return class_archive.archive_path(java)


@pytest.mark.spark
def test_a_taskmanagers_spark_jvm_maps_the_archive(archive):
    found = probe()
    assert found["archive"] == str(archive)
    assert found["mapped"]
    assert found["rows"] == TOTALS


@pytest.mark.spark
def test_a_damaged_archive_is_ignored_and_the_answer_is_the_same(tmp_path):
    damaged = tmp_path / "damaged.jsa"
    damaged.write_bytes(b"not an archive" * 1000)
    found = probe("--archive", str(damaged))
    assert not found["mapped"]
    assert found["rows"] == TOTALS
