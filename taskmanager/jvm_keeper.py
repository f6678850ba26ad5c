"""The process that keeps a TaskManager's Spark JVM: ``python -m taskmanager.jvm_keeper HOME``.

PySpark's JVM exits when the stdin its Python process holds closes, so a TaskManager killed
takes its warm JVM with it, and its replacement pays a new one: seven seconds to start on two
cores, and its first queries run with the JIT and Spark's code generation cold (a TPC-H task
three times slower). So a TaskManager's JVM is this process's child instead, in a session of
its own: it lives while its owner does, and when its owner dies it freezes it (SIGSTOP: the
dead owner's Spark jobs stop taking the CPUs its replacement starts on) and waits ``grace``
seconds for a replacement to adopt it (``taskmanager.kept_jvm``). Nobody adopting it, or the
owner asking (by removing the ``owner`` file), it closes the JVM's stdin, the JVM exits, and
its home goes.

Only the standard library: it starts in tens of milliseconds and imports nothing of Tidal's
that could fail. Its home holds ``spec.json`` (the command, the environment, the grace),
``owner`` (the owning process's pid, replaced whole by an adopter), and the ``jvm.json`` it
writes once the JVM's gateway is up (its port, secret and pid).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

POLL_S = 0.1
STOP_WAIT_S = 10.0
_PR_SET_PDEATHSIG = 1  # Linux's prctl option: a signal for this process when its parent dies
_STOPPING = (signal.SIGTERM, signal.SIGHUP)  # the signals a keeper stops its JVM at


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs: a zombie (dead, its parent yet to reap it) does not."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def owner_of(home: Path) -> int | None:
    """The owner's pid; None once the owner asked the JVM to stop."""
    try:
        return int((home / "owner").read_text())
    except (FileNotFoundError, ValueError):
        return None


def write_whole(path: Path, text: str) -> None:
    """Write ``text`` so that a reader sees the old file or the new one, never half of one."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    partial.write_text(text)
    os.replace(partial, path)


def _gateway_info(conn_info: Path) -> tuple[int, str]:
    """The port and secret PySpark's gateway server writes (an int, then a length-prefixed
    UTF-8 string, big-endian, as ``pyspark.serializers`` reads them)."""
    data = conn_info.read_bytes()
    port, length = struct.unpack(">ii", data[:8])
    return port, data[8 : 8 + length].decode()


def keep(home: Path) -> int:
    for stopping in _STOPPING:
        signal.signal(stopping, _exit_on_signal)
    spec = json.loads((home / "spec.json").read_text())
    conn_info = home / "conn-info"
    jvm = subprocess.Popen(
        spec["command"],
        stdin=subprocess.PIPE,
        env={**spec["env"], "_PYSPARK_DRIVER_CONN_INFO_PATH": str(conn_info)},
        preexec_fn=functools.partial(_die_with, os.getpid()),
    )
    try:
        if not _gateway_up(jvm, home, conn_info):
            return 1
        port, secret = _gateway_info(conn_info)
        write_whole(home / "jvm.json", json.dumps({"port": port, "secret": secret, "pid": jvm.pid}))
        _watch_owner(jvm, home, spec["grace_s"])
        return 0
    finally:
        for stopping in _STOPPING:  # a second signal must not cut the stop short
            signal.signal(stopping, signal.SIG_IGN)
        _stop(jvm)
        shutil.rmtree(home, ignore_errors=True)
        for pointer in home.parent.glob("*.jvm"):  # the TaskManagers' names for this JVM
            with contextlib.suppress(OSError):
                if pointer.read_text() == home.name:
                    pointer.unlink()


def _die_with(keeper: int) -> None:
    """In the JVM's process, before it runs Java: be killed when the keeper dies however it
    dies. A keeper's SIGKILL leaves it no way to stop the JVM, and a frozen JVM would never
    read the end of its stdin; a running one exits at it anyway. Where there is no ``prctl``
    (not Linux), nothing."""
    prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)
    if prctl is None:
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != keeper:  # the keeper died before the prctl took hold
        os._exit(1)


def _exit_on_signal(signum: int, _frame) -> None:
    """Stop the JVM on the way out: a keeper that died by a signal without it would leave
    a frozen orphan stopped for good, holding its memory."""
    raise SystemExit(128 + signum)


def _gateway_up(jvm: subprocess.Popen, home: Path, conn_info: Path) -> bool:
    """Wait for the gateway's connection file (the server writes it whole, by a rename);
    False if the JVM exits first, or its owner stops waiting."""
    while not conn_info.is_file():
        if jvm.poll() is not None or owner_of(home) is None:
            return False
        time.sleep(POLL_S / 2)
    return True


def _watch_owner(jvm: subprocess.Popen, home: Path, grace_s: float) -> None:
    """Return when the JVM has exited, its owner asked it to stop, or its owner died and
    nobody adopted it in ``grace_s``."""
    orphaned_at = None
    while jvm.poll() is None:
        owner = owner_of(home)
        if owner is None:
            return
        if alive(owner):
            if orphaned_at is not None:  # adopted: the adopter resumed it, unless it read
                resume(jvm.pid)  # the owner just before this process froze it
            orphaned_at = None
        elif orphaned_at is None:
            orphaned_at = time.monotonic()
            pause(jvm.pid)  # its owner's Spark jobs stop taking the CPUs its replacement needs
        elif time.monotonic() - orphaned_at > grace_s:
            return
        time.sleep(POLL_S)


def pause(pid: int) -> None:
    """Freeze the JVM: an orphan runs nothing until adopted (``resume``) or stopped."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGSTOP)


def resume(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGCONT)


def _stop(jvm: subprocess.Popen) -> None:
    """Close the JVM's stdin (PySpark's gateway server exits at its end), then kill it if it
    has not exited in ``STOP_WAIT_S``."""
    resume(jvm.pid)
    try:
        jvm.stdin.close()
    except OSError:
        pass
    try:
        jvm.wait(STOP_WAIT_S)
    except subprocess.TimeoutExpired:
        jvm.kill()
        jvm.wait()


if __name__ == "__main__":
    sys.exit(keep(Path(sys.argv[1])))
