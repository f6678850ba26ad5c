"""Finding Java and configuring the SparkSession, without starting a JVM."""

from __future__ import annotations

import os
import stat

import pytest

from jobmanager.model.config import OPTIONS, Configuration
from taskmanager.failures import JavaUnavailable
from taskmanager.java import find_java
from taskmanager.spark import DRIVER_MEMORY_KEY, SparkSessionProvider


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


@pytest.mark.parametrize("line", ['openjdk version "11.0.2"', 'java version "1.8.0_402"',
                                  'openjdk version "25" 2025-09-16'])
def test_other_java_versions_are_refused_saying_what_to_install(tmp_path, line):
    with pytest.raises(JavaUnavailable, match="needs 17 or 21.*openjdk-17-jre-headless"):
        find_java({"JAVA_HOME": fake_java(tmp_path, line)})


def test_no_java_at_all_says_what_to_install(tmp_path):
    with pytest.raises(JavaUnavailable, match="none is on the PATH.*openjdk-17-jre-headless"):
        find_java({"PATH": str(tmp_path)})
    with pytest.raises(JavaUnavailable, match=f"JAVA_HOME={tmp_path} has no bin/java"):
        find_java({"JAVA_HOME": str(tmp_path)})


def test_driver_memory_comes_from_the_configuration(tmp_path):
    default = OPTIONS[DRIVER_MEMORY_KEY].default
    assert SparkSessionProvider(2, tmp_path, Configuration()).driver_memory_bytes == default
    configured = Configuration({DRIVER_MEMORY_KEY: "3g"})
    assert SparkSessionProvider(2, tmp_path, configured).driver_memory_bytes == 3 << 30
    assert not SparkSessionProvider(2, tmp_path, configured).started
