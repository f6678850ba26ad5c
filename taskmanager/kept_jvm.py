"""A TaskManager's Spark JVM kept by a process of its own, so that a replacement adopts it warm.

``taskmanager.jvm_keeper`` says why. Here is the TaskManager's side: :meth:`JvmKeeping.start`
adopts the JVM of the TaskManager it replaces when that one's process is dead and its JVM is
still up on this node, and otherwise starts a keeper and its JVM; :meth:`JvmKeeping.release`
stops the JVM it holds. The kept JVMs of a node live under ``registry`` (one per Ray cluster:
a TaskManager never adopts another cluster's JVM), each in a home of its own; ``NAME.jvm``
names the home of TaskManager NAME's JVM, so a replacement of a replacement finds it too.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from taskmanager.jvm_keeper import STOP_WAIT_S, alive, owner_of, resume, write_whole

__all__ = [
    "JvmKeeping",
    "KeptJvm",
    "registry_beside",
    "release_named",
    "remembered_schema",
    "session_over",
]

ADOPTION_GRACE_S = 15.0  # how long a JVM whose owner died waits for a replacement to adopt it

_log = structlog.get_logger("tidal.taskmanager.jvm")


@dataclass(frozen=True, slots=True)
class KeptJvm:
    """A JVM held: its home, the gateway's port and secret, its pid, whether it was adopted."""

    home: Path
    port: int
    secret: str
    pid: int
    adopted: bool


@dataclass(slots=True)
class JvmKeeping:
    """How TaskManager ``name`` on ``node`` keeps its JVM: under ``registry``, adopting
    ``adopt``'s if that one ran on the same node."""

    registry: Path
    name: str
    node: str
    adopt: str = ""
    grace_s: float = ADOPTION_GRACE_S
    _keeper: subprocess.Popen | None = None

    def start(self, command: Callable[[Path], list[str]], env: dict[str, str]) -> KeptJvm:
        """Adopt the replaced TaskManager's JVM, or start one with ``command(home)``. The
        registry is this user's alone: a home holds the gateway's secret, which lets whoever
        reads it run code in the JVM."""
        self.registry.mkdir(parents=True, exist_ok=True)
        os.chmod(self.registry, 0o700)
        adopted = self._adopted()
        if adopted is not None:
            return adopted
        home = self.registry / f"{self.name}-{uuid.uuid4().hex[:8]}"
        home.mkdir()
        write_whole(home / "owner", str(os.getpid()))
        argv = command(home)
        (home / "spec.json").write_text(
            json.dumps({"command": argv, "env": env, "grace_s": self.grace_s, "node": self.node})
        )
        self._keeper = subprocess.Popen(
            [sys.executable, "-m", "taskmanager.jvm_keeper", str(home)],
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # not in the Ray worker's process group: it outlives it
            env={**os.environ, "PYTHONPATH": _import_path()},
        )
        while not (home / "jvm.json").is_file():
            if self._keeper.poll() is not None:
                raise RuntimeError(
                    f"the Spark JVM exited before its gateway started: {' '.join(argv)}"
                )
            time.sleep(0.05)
        write_whole(self.registry / f"{self.name}.jvm", home.name)
        return _read(home, adopted=False)

    def _adopted(self) -> KeptJvm | None:
        if not self.adopt:
            return None
        try:
            home = self.registry / (self.registry / f"{self.adopt}.jvm").read_text()
            jvm = _read(home, adopted=True)
            node = json.loads((home / "spec.json").read_text())["node"]
        except (FileNotFoundError, ValueError, KeyError):
            return None
        if node != self.node:
            return None
        owner = owner_of(home)
        if owner is None or alive(owner) or not alive(jvm.pid):
            return None
        write_whole(home / "owner", str(os.getpid()))
        resume(jvm.pid)  # its keeper froze it when its owner died
        write_whole(self.registry / f"{self.name}.jvm", home.name)
        (self.registry / f"{self.adopt}.jvm").unlink(missing_ok=True)
        _log.info("spark jvm adopted", task_manager=self.name, of=self.adopt, pid=jvm.pid)
        return jvm

    def release(self, jvm: KeptJvm) -> None:
        """Ask the keeper to stop the JVM, and wait until it has exited."""
        (jvm.home / "owner").unlink(missing_ok=True)
        (self.registry / f"{self.name}.jvm").unlink(missing_ok=True)
        if self._keeper is not None:
            self._keeper.wait()
            return
        deadline = time.monotonic() + STOP_WAIT_S + 5
        while alive(jvm.pid) and time.monotonic() < deadline:
            time.sleep(0.05)


def registry_beside(scratch: str | os.PathLike[str]) -> Path:
    """Where the kept JVMs of the TaskManagers whose scratch folders are beside ``scratch``
    live: one folder per cluster (the ResourceManager keys the scratch folders by cluster)."""
    return Path(scratch).parent / ".jvms"


def release_named(registry: Path, name: str) -> None:
    """Ask TaskManager ``name``'s JVM to stop, without waiting: the ResourceManager retires
    a TaskManager by killing its process, and its JVM is then nobody's to adopt."""
    try:
        home = registry / (registry / f"{name}.jvm").read_text()
    except (FileNotFoundError, ValueError):
        return
    (home / "owner").unlink(missing_ok=True)


def session_over(kept: KeptJvm):
    """This process's SparkSession over ``kept``'s JVM. An adopted JVM's SparkContext is
    already up, so the session is made over it, and what its dead owner left running is
    cancelled."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_GATEWAY_PORT"] = str(kept.port)
    os.environ["PYSPARK_GATEWAY_SECRET"] = kept.secret
    try:
        gateway = launch_gateway()  # connects to the running gateway these two name
    finally:
        del os.environ["PYSPARK_GATEWAY_PORT"], os.environ["PYSPARK_GATEWAY_SECRET"]
    jvm = gateway.jvm
    context = jvm.org.apache.spark.SparkContext.getOrCreate(jvm.SparkConf(True))
    spark_context = SparkContext(
        gateway=gateway, jsc=jvm.JavaSparkContext.fromSparkContext(context)
    )
    if kept.adopted:
        spark_context.cancelAllJobs()
    return SparkSession.builder.getOrCreate()


def remembered_schema(kept: KeptJvm | None, key: Hashable, infer: Callable[[], Any]):
    """Spark's schema for Parquet files of schema ``key``: read back from the kept JVM's home
    when a TaskManager that held the JVM before inferred it, else ``infer()`` (a Spark job,
    0.1-0.3 s) and kept there. The provider keeps schemas in memory too, but a replacement's
    memory starts empty, and its first tasks would pay one such job per input again."""
    from pyspark.sql.types import StructType

    if kept is None:
        return infer()
    path = kept.home / "schemas" / f"{hashlib.sha1(repr(key).encode()).hexdigest()}.json"
    try:
        return StructType.fromJson(json.loads(path.read_text()))
    except FileNotFoundError:
        pass
    schema = infer()
    path.parent.mkdir(exist_ok=True)
    write_whole(path, schema.json())
    return schema


def _read(home: Path, adopted: bool) -> KeptJvm:
    info = json.loads((home / "jvm.json").read_text())
    return KeptJvm(home, info["port"], info["secret"], info["pid"], adopted)


def _import_path() -> str:
    """This process's import path, so the keeper finds ``taskmanager`` as this process did."""
    return os.pathsep.join(p for p in sys.path if p)
