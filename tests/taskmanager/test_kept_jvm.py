"""The JVM keeper's life cycle (``taskmanager.jvm_keeper``, ``taskmanager.kept_jvm``), with a
stand-in for Spark's JVM: a process that writes a gateway connection file as PySpark's gateway
server does, then waits for its stdin to close, as that server does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taskmanager.jvm_keeper import alive
from taskmanager.kept_jvm import JvmKeeping, remembered_schema

STAND_IN = """
import os, struct, sys
path = os.environ["_PYSPARK_DRIVER_CONN_INFO_PATH"]
secret = b"s3cret"
with open(path + ".tmp", "wb") as out:
    out.write(struct.pack(">ii", 4242, len(secret)) + secret)
os.rename(path + ".tmp", path)
sys.stdin.read()
"""


def command(home: Path) -> list[str]:
    return [sys.executable, "-c", STAND_IN]


def eventually(condition, what: str, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.02)
    raise AssertionError(f"not within {timeout} s: {what}")


def state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return stat.read().rsplit(b")", 1)[1].split()[0].decode()


def _reaped_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def orphan(jvm_home: Path) -> None:
    """Make the JVM's owner a process that has exited, as a killed TaskManager has."""
    (jvm_home / "owner").write_text(str(_reaped_pid()))


@pytest.fixture
def registry(tmp_path):
    return tmp_path / "jvms"


def test_a_kept_jvm_outlives_its_owner_frozen_and_a_replacement_adopts_it(registry):
    first = JvmKeeping(registry, "tm-1", "node-a", grace_s=30)
    jvm = first.start(command, dict(os.environ))
    assert (jvm.port, jvm.secret, jvm.adopted) == (4242, "s3cret", False)
    assert registry.stat().st_mode & 0o777 == 0o700  # the secret is this user's alone
    orphan(jvm.home)
    eventually(lambda: state(jvm.pid) == "T", "the orphan frozen")
    second = JvmKeeping(registry, "tm-2", "node-a", adopt="tm-1")
    adopted = second.start(command, dict(os.environ))
    assert (adopted.pid, adopted.home, adopted.adopted) == (jvm.pid, jvm.home, True)
    eventually(lambda: state(jvm.pid) != "T", "the adopted JVM running again")
    assert (registry / "tm-2.jvm").read_text() == jvm.home.name
    assert not (registry / "tm-1.jvm").exists()
    second.release(adopted)
    assert not alive(jvm.pid)
    eventually(lambda: not jvm.home.exists(), "its home removed by its keeper")
    first._keeper.wait(10)  # its keeper exits with its JVM


def test_an_orphan_nobody_adopts_stops_after_the_grace(registry):
    keeping = JvmKeeping(registry, "tm-1", "node-a", grace_s=0.3)
    jvm = keeping.start(command, dict(os.environ))
    orphan(jvm.home)
    eventually(lambda: not alive(jvm.pid), "the orphan stopped")
    eventually(lambda: not jvm.home.exists(), "its home removed")
    eventually(lambda: not (registry / "tm-1.jvm").exists(), "its name for the JVM removed")
    keeping._keeper.wait(10)


def test_a_keeper_stopped_by_a_signal_stops_its_frozen_jvm_with_it(registry):
    keeping = JvmKeeping(registry, "tm-1", "node-a", grace_s=60)
    jvm = keeping.start(command, dict(os.environ))
    orphan(jvm.home)
    eventually(lambda: state(jvm.pid) == "T", "the orphan frozen")
    keeping._keeper.terminate()  # as `pkill -f jvm_keeper` does, within the grace
    assert keeping._keeper.wait(10) == 128 + signal.SIGTERM
    eventually(lambda: not alive(jvm.pid), "the frozen JVM stopped, not left stopped")
    eventually(lambda: not jvm.home.exists(), "its home removed")


def test_a_keeper_killed_outright_takes_its_frozen_jvm_with_it(registry):
    keeping = JvmKeeping(registry, "tm-1", "node-a", grace_s=60)
    jvm = keeping.start(command, dict(os.environ))
    orphan(jvm.home)
    eventually(lambda: state(jvm.pid) == "T", "the orphan frozen")
    keeping._keeper.kill()  # SIGKILL: the keeper runs nothing on its way out
    keeping._keeper.wait(10)
    eventually(lambda: not alive(jvm.pid), "the frozen JVM killed with its keeper")


def test_a_replacement_on_another_node_or_of_a_live_owner_starts_its_own(registry):
    first = JvmKeeping(registry, "tm-1", "node-a")
    jvm = first.start(command, dict(os.environ))
    elsewhere = JvmKeeping(registry, "tm-2", "node-b", adopt="tm-1")
    own = elsewhere.start(command, dict(os.environ))  # tm-1's owner, this process, lives
    assert not own.adopted and own.pid != jvm.pid
    orphan(jvm.home)
    third = JvmKeeping(registry, "tm-3", "node-b", adopt="tm-1")
    its_own = third.start(command, dict(os.environ))
    assert not its_own.adopted and its_own.pid != jvm.pid  # tm-1's JVM is another node's
    for keeping, held in ((first, jvm), (elsewhere, own), (third, its_own)):
        keeping.release(held)
        assert not alive(held.pid)


def test_a_schema_spark_inferred_is_read_back_by_the_jvm_s_next_owner(tmp_path):
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from taskmanager.kept_jvm import KeptJvm

    home = tmp_path / "home"
    home.mkdir()
    kept = KeptJvm(home, 1, "", 1, adopted=False)
    schema = StructType([StructField("k", LongType()), StructField("name", StringType(), False)])
    inferred = []

    def infer():
        inferred.append(1)
        return schema

    key = ("message schema { ... }", (("pandas", "{}"),))
    assert remembered_schema(kept, key, infer) == schema
    assert remembered_schema(kept, key, infer) == schema  # the next owner: from the file
    assert len(inferred) == 1
    assert remembered_schema(None, key, infer) == schema and len(inferred) == 2
