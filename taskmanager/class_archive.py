"""A class-data-sharing archive of the classes a TaskManager's Spark JVM loads, so the next JVM
maps them from one file instead of loading and verifying each from Spark's jars.

A TaskManager's first PySpark task waits for its JVM: on this 2-core machine a fresh PySpark
session took 8.4-8.6 s to start and its first TPC-H Q1 9.2-10.7 s; with an archive of the
classes such a session loads, 5.0 and 7.2-8.1 s. Java 17 (the oldest PySpark 4 takes) cannot
make the archive by itself as a JVM runs (``-XX:+AutoCreateSharedArchive`` came with 19), so
``python -m taskmanager.class_recording`` makes it once, from a JVM started as a TaskManager's,
which runs a small query of each kind a task runs and records what it loaded at its exit
(``-XX:ArchiveClassesAtExit``); ``deploy/run`` does that when the environment has none for its
PySpark and its Java. A cold TPC-H Q1 job on a fresh local cluster: 22.8 s without it,
12.3-13.8 s with it. The archive lives in the virtual environment, named by both, and is
renamed into place only when whole: a JVM whose classpath or Java does not match it, or that
finds it damaged, ignores it and loads its classes as usual.
"""

from __future__ import annotations

import hashlib
import os
import sys
from importlib.metadata import version
from pathlib import Path

__all__ = ["archive_path", "java_options"]


def archive_path(java: str) -> Path:
    """Where the archive for this environment's PySpark and ``java`` goes: both are named,
    since an archive is only good for the jars and the JVM it was made from."""
    real = os.path.realpath(java)
    identity = f"{real}:{os.stat(real).st_mtime_ns}".encode()
    name = f"spark-{version('pyspark')}-java-{hashlib.sha256(identity).hexdigest()[:12]}.jsa"
    return Path(sys.prefix) / "share" / "tidal" / name


def java_options(java: str) -> list[str]:
    """The option that maps the archive into a JVM, if there is one for ``java``."""
    path = archive_path(java)
    return [f"-XX:SharedArchiveFile={path}"] if path.is_file() else []
