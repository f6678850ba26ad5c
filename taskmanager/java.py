"""The Java PySpark will start, found as PySpark finds it, and whether PySpark 4 can use it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping

from taskmanager.failures import JavaUnavailable

__all__ = ["SUPPORTED_JAVA", "find_java"]

SUPPORTED_JAVA = (17, 21)
_INSTALL_HINT = (
    "install Java 17 or 21 (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) and set "
    "JAVA_HOME to it or put its java on the PATH"
)
_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')


def find_java(environ: Mapping[str, str] = os.environ) -> tuple[str, int]:
    """The java PySpark will start (``$JAVA_HOME/bin/java``, else ``java`` on the PATH) and its
    major version; JavaUnavailable, saying what to install, if it is missing or not 17 or 21."""
    java_home = environ.get("JAVA_HOME")
    if java_home:
        java = os.path.join(java_home, "bin", "java")
        if not os.access(java, os.X_OK):
            raise JavaUnavailable(f"JAVA_HOME={java_home} has no bin/java; {_INSTALL_HINT}")
    else:
        java = shutil.which("java", path=environ.get("PATH"))
        if java is None:
            raise JavaUnavailable(f"PySpark needs Java, and none is on the PATH; {_INSTALL_HINT}")
    try:
        shown = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        ).stderr
    except (OSError, subprocess.TimeoutExpired) as error:
        raise JavaUnavailable(f"{java} -version failed ({error}); {_INSTALL_HINT}") from error
    match = _VERSION.search(shown)
    if match is None:
        raise JavaUnavailable(f"cannot tell the version of {java}: {shown!r}; {_INSTALL_HINT}")
    major = int(match.group(2) if match.group(1) == "1" else match.group(1))
    if major not in SUPPORTED_JAVA:
        raise JavaUnavailable(f"{java} is Java {major}; PySpark 4 needs 17 or 21: {_INSTALL_HINT}")
    return java, major
