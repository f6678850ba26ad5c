"""A Spark JVM launched by one process and handed over to a TaskManager, which owns it from then.

A cold start of a local cluster is a chain: Ray's start, then the ResourceManager's process,
then the first TaskManager's, then its Spark JVM (seconds each on two cores), and the first
task waits for the end of it. The JVM needs nothing from Ray, so the client that starts the
cluster launches it first (:func:`launch`), and it starts while Ray does; the TaskManager the
ResourceManager prepares then connects to it (:func:`adopt`) instead of launching its own.

Ownership is the one thing to get right: PySpark's JVM exits when its standard input ends, so
it never outlives the Python process that launched it. Here its standard input is a named pipe
(a FIFO), which ends when the last process holding it open for writing has closed it. The
launcher holds it open until the TaskManager has opened it too, and then closes its end
(:meth:`LaunchedJvm.hand_over`): from then on the JVM lives exactly as long as the TaskManager
process, however that ends (a kill by pid included), as a JVM PySpark launched there would. A
JVM nobody adopts in time ends when the launcher lets go of it.

This module starts processes and touches files, and nothing of Ray's.
"""

from __future__ import annotations

import errno
import importlib.util
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import structlog

from jobmanager.messages.codec import message
from taskmanager.java import find_java

__all__ = ["AdoptedJvm", "JvmTicket", "LaunchedJvm", "adopt", "decline", "launch", "spark_conf",
           "spark_environment"]

LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.nativecode.name = org.apache.hadoop.util.NativeCodeLoader
logger.nativecode.level = error
"""
BATCH_COLLECTOR = "-XX:+UseParallelGC"
TASK_SQL_CONF = {"spark.sql.shuffle.partitions": "1", "spark.sql.adaptive.enabled": "false"}
_POLL_S = 0.05
_ADOPTED = "adopted"  # the file a TaskManager writes once it holds the pipe
_DECLINED = "declined"  # the file a TaskManager of another shape writes

_log = structlog.get_logger("tidal.taskmanager.jvm")


def spark_conf(java: str, slots: int, driver_memory_bytes: int, work_dir: Path,
               java_options: Sequence[str] | None = None) -> dict[str, str]:  # fmt: skip
    """A TaskManager's Spark settings, those its JVM (``java``) is launched with among them: its
    heap, its scratch under ``work_dir``, its logging, the class archive unless
    ``java_options`` says otherwise. Makes the scratch folder and the logging file."""
    from taskmanager import class_archive

    scratch = work_dir / "tmp"  # Spark's local dirs default to the JVM's temp dir
    scratch.mkdir(parents=True, exist_ok=True)
    log_config = work_dir / "log4j2.properties"
    log_config.write_text(LOG4J2)
    options = (class_archive.java_options(java) if java_options is None
               else list(java_options)) + [BATCH_COLLECTOR]  # fmt: skip
    return {
        "spark.master": f"local[{slots}]",
        "spark.app.name": "tidal-taskmanager",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        **TASK_SQL_CONF,
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.memory": f"{max(1, driver_memory_bytes >> 20)}m",
        "spark.driver.extraJavaOptions": " ".join(f'"{option}"' for option in [
            f"-Dlog4j2.configurationFile=file:{log_config}", f"-Djava.io.tmpdir={scratch}",
            *options]),
    }  # fmt: skip


def spark_environment() -> dict[str, str]:
    """What the JVM and Python's workers need in the environment, unless the user set it."""
    return {"PYSPARK_PYTHON": sys.executable,  # Python UDFs: this venv
            "SPARK_LOCAL_IP": "127.0.0.1",  # local mode: never leaves the host
            **os.environ}  # fmt: skip


@message
class JvmTicket:
    """What a TaskManager needs to adopt a launched JVM, and what it must match."""

    folder: str  # the FIFO, the JVM's connection file, the marks, its Spark scratch
    pid: int
    slots: int
    driver_memory_bytes: int


class LaunchedJvm:
    """The launcher's side: the JVM's process and the write end of its standard input."""

    def __init__(self, ticket: JvmTicket, process: subprocess.Popen, writer: int) -> None:
        self.ticket = ticket
        self.process = process
        self._writer = writer
        self.holding = True  # whether this process still holds the JVM's standard input

    def start_context(self, timeout_s: float) -> bool:
        """Have the JVM create its SparkContext (Spark's environment, its block manager, its
        scheduler: seconds of the JVM's start) now, through a gateway connection of this
        process's own, so that the TaskManager finds it made. False if the JVM did not come
        up in ``timeout_s`` or the context could not be made (the TaskManager then makes it)."""
        from py4j.clientserver import ClientServer, JavaParameters, PythonParameters

        connection = _wait_for_connection(self.ticket.folder,
                                          lambda: self.process.poll() is not None, timeout_s)
        if connection is None:
            return False
        port, secret = connection
        gateway = ClientServer(
            java_parameters=JavaParameters(port=port, auth_token=secret, auto_convert=True),
            python_parameters=PythonParameters(port=0, eager_load=False))  # fmt: skip
        try:
            spark = gateway.jvm.org.apache.spark
            spark.SparkContext.getOrCreate(spark.SparkConf(True))  # the launch's settings
            _log.info("spark context made ahead", pid=self.ticket.pid)
            return True
        except Exception as error:  # noqa: BLE001 - the TaskManager makes it, or says why
            _log.info("spark context not made ahead", error=f"{type(error).__name__}: {error}")
            return False
        finally:
            gateway.close()  # the connection only: never the gateway, which is the JVM's

    def hand_over(self, timeout_s: float, given: bool = True) -> bool:
        """Let go of the JVM once a TaskManager holds its pipe or has declined it (``given``:
        one was asked to), or at ``timeout_s``; a JVM not adopted then exits. Then wait for
        the JVM's exit, and remove its folder. True if adopted."""
        folder = Path(self.ticket.folder)
        deadline = time.monotonic() + timeout_s
        while given and self.process.poll() is None and time.monotonic() < deadline:
            if (folder / _ADOPTED).exists() or (folder / _DECLINED).exists():
                break
            time.sleep(_POLL_S)
        adopted = (folder / _ADOPTED).exists()
        os.close(self._writer)
        self.holding = False
        if not adopted:
            _log.info("launched spark jvm not adopted; it ends", pid=self.ticket.pid)
        self.process.wait()
        shutil.rmtree(folder, ignore_errors=True)
        return adopted


def launch(slots: int, driver_memory_bytes: int) -> LaunchedJvm:
    """Start a TaskManager's Spark JVM as PySpark's ``launch_gateway`` does (``spark-submit
    pyspark-shell``), its standard input the FIFO in a folder of its own, its Spark scratch
    in the same folder."""
    java, _ = find_java()
    folder = tempfile.mkdtemp(prefix="tidal-jvm-")
    conf = spark_conf(java, slots, driver_memory_bytes, Path(folder, "spark"))
    fifo = os.path.join(folder, "stdin")
    os.mkfifo(fifo, 0o600)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # does not wait for a writer
    writer = os.open(fifo, os.O_WRONLY)  # a reader is there: does not wait either
    os.set_blocking(reader, True)  # the JVM's reads wait for input, or the end of it
    command = [os.path.join(_spark_home(), "bin", "spark-submit")]
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    env = {**spark_environment(), "SPARK_CONNECT_MODE": "0",
           "_PYSPARK_DRIVER_CONN_INFO_PATH": os.path.join(folder, "connection")}  # fmt: skip
    try:
        process = subprocess.Popen(command + ["pyspark-shell"], stdin=reader, env=env,
                                   preexec_fn=_ignore_interrupts)  # fmt: skip
    except OSError:
        os.close(writer)
        shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        os.close(reader)
    ticket = JvmTicket(folder, process.pid, slots, driver_memory_bytes)
    _log.info("spark jvm launched for a task manager", pid=process.pid, slots=slots)
    return LaunchedJvm(ticket, process, writer)


def _spark_home() -> str:
    """Where PySpark finds Spark: ``SPARK_HOME``, else the installed package (found without
    importing it: a second of this process's start, which is what this module saves)."""
    home = os.environ.get("SPARK_HOME")
    if home:
        return home
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise RuntimeError("PySpark is not installed in this environment")
    return os.path.dirname(spec.origin)


def _ignore_interrupts() -> None:
    """Ctrl-C in the launcher's terminal is not the JVM's to act on, as in PySpark."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class AdoptedJvm:
    """The TaskManager's side: the write end of the JVM's standard input, held for the life of
    the process, and the gateway's port and secret."""

    def __init__(self, pid: int, writer: int, port: int, secret: str) -> None:
        self.pid = pid
        self.port = port
        self.secret = secret
        self._writer: int | None = writer

    def exited(self) -> bool:
        return _exited(self.pid)

    def stop(self, timeout_s: float = 30.0) -> None:
        """End the JVM (its standard input ends) and wait until it has exited."""
        if self._writer is not None:
            os.close(self._writer)
            self._writer = None
        deadline = time.monotonic() + timeout_s
        while not self.exited() and time.monotonic() < deadline:
            time.sleep(_POLL_S)


def decline(ticket: JvmTicket) -> None:
    """Tell the launcher this JVM will not be adopted (it was launched for another shape)."""
    Path(ticket.folder, _DECLINED).touch()


def adopt(ticket: JvmTicket, timeout_s: float = 120.0) -> AdoptedJvm | None:
    """Take the launched JVM over: hold its pipe, say so, wait for its gateway. None if it is
    gone or does not come up in ``timeout_s`` (the caller then launches its own)."""
    try:
        writer = os.open(os.path.join(ticket.folder, "stdin"), os.O_WRONLY | os.O_NONBLOCK)
    except OSError as error:  # ENXIO: nobody reads it any more; ENOENT: the folder is gone
        _log.info("launched spark jvm not there to adopt", pid=ticket.pid,
                  error=errno.errorcode.get(error.errno, str(error)))  # fmt: skip
        return None
    Path(ticket.folder, _ADOPTED).touch()
    connection = _wait_for_connection(ticket.folder, lambda: _exited(ticket.pid), timeout_s)
    if connection is None:
        os.close(writer)
        _log.info("launched spark jvm did not come up", pid=ticket.pid)
        return None
    return AdoptedJvm(ticket.pid, writer, *connection)


def _exited(pid: int) -> bool:
    """Whether the process has ended (a process not ours, which its parent may not have
    reaped yet: a zombie has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def _wait_for_connection(folder: str, exited: Callable[[], bool], timeout_s: float
                         ) -> tuple[int, str] | None:  # fmt: skip
    """The gateway's port and secret, once the JVM has written them (PySpark's format: a
    big-endian int, then a length-prefixed UTF-8 string, the file renamed into place whole);
    None if ``exited()`` says the JVM is gone first, or at ``timeout_s``."""
    path = Path(folder, "connection")
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if exited() or time.monotonic() > deadline:
            return None
        time.sleep(_POLL_S)
    data = path.read_bytes()
    (port,), (length,) = struct.unpack_from(">i", data), struct.unpack_from(">i", data, 4)
    return port, data[8:8 + length].decode()

