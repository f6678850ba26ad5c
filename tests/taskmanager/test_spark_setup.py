"""Finding Java and configuring the SparkSession, without starting a JVM."""

from __future__ import annotations

import os
import stat

import pytest

from jobmanager.model.config import OPTIONS, SPARK_DRIVER_MEMORY, Configuration
from taskmanager.failures import JavaUnavailable
from taskmanager.java import find_java
from taskmanager.heap import default_heap_bytes
from taskmanager.spark import SparkSessionProvider


def fake_java(tmp_path, version_line: str) -> str:
    """A JAVA_HOME whose bin/java prints ``version_line`` as ``java -version`` does."""
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    return str(tmp_path / "jdk")


def test_java_17_from_java_home_is_accepted(tmp_path):
    home = fake_java(tmp_path, 'openjdk version "17.0.15" 2025-04-15')
    assert find_java({"JAVA_HOME": home}) == (os.path.join(home, "bin", "java"), 17)


@pytest.mark.parametrize(
    "line",
    ['openjdk version "11.0.2"', 'java version "1.8.0_402"', 'openjdk version "25" 2025-09-16'],
)
def test_other_java_versions_are_refused_saying_what_to_install(tmp_path, line):
    with pytest.raises(JavaUnavailable, match="needs 17 or 21.*openjdk-17-jre-headless"):
        find_java({"JAVA_HOME": fake_java(tmp_path, line)})


def test_no_java_at_all_says_what_to_install(tmp_path):
    with pytest.raises(JavaUnavailable, match="none is on the PATH.*openjdk-17-jre-headless"):
        find_java({"PATH": str(tmp_path)})
    with pytest.raises(JavaUnavailable, match=f"JAVA_HOME={tmp_path} has no bin/java"):
        find_java({"JAVA_HOME": str(tmp_path)})


def test_driver_memory_comes_from_the_configuration_or_the_machine(tmp_path):
    assert OPTIONS[SPARK_DRIVER_MEMORY.key].default is None
    derived = SparkSessionProvider(2, tmp_path, Configuration()).driver_memory_bytes
    assert derived == default_heap_bytes(2) >= 1 << 30
    configured = Configuration({SPARK_DRIVER_MEMORY.key: "3g"})
    assert SparkSessionProvider(2, tmp_path, configured).driver_memory_bytes == 3 << 30
    assert not SparkSessionProvider(2, tmp_path, configured).started


@pytest.mark.parametrize(
    "memory_gib, cpus, slots, heap_mib",
    [
        (24, 2, 2, 6 << 10),  # this kind of machine: one TaskManager, a quarter of the memory
        (256, 64, 2, 2 << 10),  # 32 TaskManagers share the quarter
        (2, 2, 2, 1 << 10),  # never under 1 GiB
        (1024, 4, 2, 16 << 10),  # never over 16 GiB
        (24, 1, 2, 6 << 10),  # fewer CPUs than slots: still one TaskManager
    ],
)
def test_the_default_heap_is_a_quarter_of_the_node_shared_by_its_task_managers(
    memory_gib, cpus, slots, heap_mib
):
    assert default_heap_bytes(slots, memory_gib << 30, cpus) == heap_mib << 20


def test_the_node_memory_is_the_cgroup_limit_when_lower(tmp_path, monkeypatch):
    from taskmanager import heap

    limit = tmp_path / "memory.max"
    limit.write_text("2147483648\n")
    monkeypatch.setattr(heap, "_CGROUP_LIMITS", (limit,))
    assert heap.node_memory_bytes() == 2 << 30
    limit.write_text("max\n")
    assert heap.node_memory_bytes() > 0
