"""The TaskManager's SparkSession, and running a PySpark function on a task's input.

One SparkSession per TaskManager process, started on first use (an Arrow task never starts a
JVM): ``local[slots]``, so the slots' tasks share the JVM's cores as they share the actor's;
no UI; the session time zone is UTC, so a job gives the same answer on machines set to
different zones. Its JVM maps the classes it would load from the environment's class archive
where there is one (``taskmanager.class_archive``): a session started in 5.0 s, not 8.5. It
collects garbage with the parallel collector, not the JVM's default G1: a TaskManager's JVM
runs batch work, where throughput is what counts and pauses cost nothing a user sees.

A task is one partition's worth of its vertex's data: the JobManager's adaptive scheduler has
already done, across tasks, what Spark's adaptive execution does inside one query (sized the
partitions by bytes, split skewed ones, sent the small side whole). So inside a task Spark
plans once and runs one partition after each shuffle (``spark.sql.shuffle.partitions`` = 1,
``spark.sql.adaptive.enabled`` = false): a slot is one of the actor's CPUs, and re-planning at
each stage costs a Spark job and tens of milliseconds for nothing (Q1's final aggregate of a
few rows, warm, in a plain session: 244 ms with adaptive execution and a partition per slot,
127 ms so). A task's scan is still split over the JVM's cores where its files allow. Spark
logs warnings and worse to stderr only, through a log4j2 file written into the work
directory, so stdout stays the job's.

A task's inputs reach Spark as Parquet files in a temporary directory, a large one as a file
per core written side by side: Spark reads them with its own reader, never through Python-side
row conversion. Spark infers a Parquet schema by listing and reading a footer and analysing the
result, some 40 ms a query; the provider keeps each schema Spark inferred, keyed by the Parquet
schema it came from, and hands it to the reader of the next files with that schema. The
function's DataFrame comes back with ``DataFrame.toArrow()``. Each task runs its Spark jobs in
its own job group, so cancelling the task interrupts its running Spark job
(``interruptOnCancel``) and no other task's.

A piece of a planned query (``taskmanager.sql``) names its inputs as temporary views, and two
slots share the JVM, so each such task borrows a session of its own (``isolated``: Spark's
``newSession``, sharing the JVM, the SparkContext and its settings, but not the views). Idle
ones are kept for the next task: a new session per task cost 6 ms more a task (medians of 200
alternating runs of a three-row query, 71 against 68 ms), for its analyzer and catalog. A task
hands its session back with its views still in it: the provider's own thread drops them (a
catalogue call a view, 3 to 27 ms a task among TPC-H's, timed on two cores) while the task is
reported, and only then keeps the session for another task.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import structlog

from jobmanager.errors import OutputTypeError
from jobmanager.model.config import SPARK_DRIVER_MEMORY, Configuration
from jobmanager.model.operators import SparkFunction
from taskmanager.cancellation import CancelToken
from taskmanager.heap import default_heap_bytes
from taskmanager.inputs import ParquetFiles
from taskmanager.java import find_java
from taskmanager.jvm_keeper import alive
from taskmanager.kept_jvm import JvmKeeping, KeptJvm, remembered_schema, session_over
from taskmanager.memo import Memo
from taskmanager.spark_input import write_spark_input
from taskmanager.timing import TaskClock

__all__ = [
    "IsolatedSession",
    "SparkSessionProvider",
    "SparkTask",
    "TASK_SQL_CONF",
    "checked_frame",
    "java_options",
    "run_spark_function",
    "run_spark_query",
]

BATCH_COLLECTOR = "-XX:+UseParallelGC"
TASK_SQL_CONF = {"spark.sql.shuffle.partitions": "1", "spark.sql.adaptive.enabled": "false"}
_LOG4J2 = """\
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

_log = structlog.get_logger("tidal.taskmanager.spark")


class SparkSessionProvider:
    """The process's SparkSession, created on the first :meth:`session` call. Thread-safe."""

    def __init__(
        self,
        slots: int,
        work_dir: str | os.PathLike[str],
        config: Configuration,
        java_options: Sequence[str] | None = None,
        keeping: JvmKeeping | None = None,
    ) -> None:
        """``java_options``: the JVM's own options; None maps the class archive, if any
        (``taskmanager.class_archive``). ``keeping``: the JVM is kept by a process of its
        own, to be adopted by a replacement (``taskmanager.kept_jvm``); None: PySpark starts
        it as this process's child, and it dies with it."""
        self.slots = slots
        self.java_options = java_options
        self.work_dir = Path(work_dir)
        self.driver_memory_bytes = config[SPARK_DRIVER_MEMORY.key] or default_heap_bytes(slots)
        self._session = None
        self._lock = threading.Lock()
        self._schemas = Memo()
        self._idle: list[IsolatedSession] = []  # sessions of their own, between tasks
        self._cleaner: ThreadPoolExecutor | None = None  # drops handed-back sessions' views
        self.keeping = keeping
        self._kept: KeptJvm | None = None

    @property
    def started(self) -> bool:
        return self._session is not None

    @property
    def kept(self) -> KeptJvm | None:
        """The kept JVM the session runs on, once started with ``keeping``."""
        return self._kept

    def session(self):
        with self._lock:
            if self._session is None:
                self._session = self._start()
            return self._session

    @contextmanager
    def isolated(self) -> Iterator[IsolatedSession]:
        """A session of the process's JVM for one task alone: its temporary views are its own.
        Once the task is done with it, the views it registered are dropped on the provider's
        own thread, and then it is kept for the next task (unless dropping them failed, or the
        process's session was stopped)."""
        base = self.session()
        with self._lock:
            isolated = self._idle.pop() if self._idle else None
        if isolated is None or isolated.base is not base:
            isolated = IsolatedSession(_with_task_conf(base.newSession()), base)
        try:
            yield isolated
        finally:
            with self._lock:
                if self._cleaner is None:
                    self._cleaner = ThreadPoolExecutor(1, thread_name_prefix="tidal-spark-views")
                self._cleaner.submit(self._keep_clean, isolated, base)

    def _keep_clean(self, isolated: IsolatedSession, base) -> None:
        reusable = isolated.drop_views()
        with self._lock:
            if reusable and self._session is base:
                self._idle.append(isolated)

    def settle(self) -> None:
        """Wait until the sessions handed back so far are dropped or kept."""
        with self._lock:
            cleaner, self._cleaner = self._cleaner, None
        if cleaner is not None:
            cleaner.shutdown(wait=True)

    def read_parquet(self, files: ParquetFiles, session=None):
        """A DataFrame of ``files``' columns (all of them if ``files.columns`` is None), with
        the schema Spark inferred for earlier files of the same Parquet schema (inferred now if
        there were none). That schema, narrowed to the columns, is what Spark reads with: a
        ``select`` after the read would cost another analysis of the plan (some 15 ms).
        ``session``: the session the DataFrame belongs to (the process's if None)."""
        session = session or self.session()
        if files.schema_key is None:
            return _selected(session.read.parquet(*files.paths), files.columns)
        schema = self._schemas.get(
            files.schema_key,
            lambda: remembered_schema(
                self._kept, files.schema_key, lambda: session.read.parquet(*files.paths).schema
            ),
        )
        narrowed = _narrowed(schema, files.columns)
        if narrowed is None:
            return _selected(session.read.schema(schema).parquet(*files.paths), files.columns)
        return session.read.schema(narrowed).parquet(*files.paths)

    def stop(self) -> None:
        """Stop the session; a kept JVM is released too (its keeper stops it)."""
        self.settle()
        with self._lock:
            session, self._session = self._session, None
            self._idle.clear()
            kept, self._kept = self._kept, None
        if session is not None:
            session.stop()
            _log.info("spark session stopped")
        if kept is not None:
            from pyspark import SparkContext

            SparkContext._gateway.shutdown()
            SparkContext._gateway = SparkContext._jvm = None
            self.keeping.release(kept)

    def jvm_lost(self) -> bool:
        """Whether this process's Spark JVM started and has since exited: on an
        OutOfMemoryError Spark's handler stops it, and nothing run through it can succeed
        again (PySpark keeps talking to the dead process: connection refused)."""
        if self._session is None:
            return False
        if self._kept is not None:
            return not alive(self._kept.pid)
        from pyspark import SparkContext

        process = getattr(SparkContext._gateway, "proc", None)
        return process is not None and process.poll() is not None

    def stop_jvm(self) -> None:
        """Stop the session and the JVM, and wait for the JVM to exit. PySpark keeps its JVM
        for the life of the process otherwise; this process cannot start another."""
        from pyspark import SparkContext

        self.stop()  # a kept JVM has exited when this returns
        gateway = SparkContext._gateway
        if gateway is None:
            return
        gateway.shutdown()
        gateway.proc.stdin.close()  # the JVM exits when its stdin closes
        gateway.proc.wait()

    def _start(self):
        java, major = find_java()
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Python UDFs: this venv
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # local mode: never leaves host
        from taskmanager import jvm_lookups

        options = (
            java_options(java)
            if self.java_options is None
            else [*self.java_options, BATCH_COLLECTOR]
        )
        if self.keeping is None:
            session = self._own_session(self._settings(self.work_dir, options))
        else:
            session = self._kept_session(lambda home: self._settings(home, options))
        session.sparkContext.setLogLevel("WARN")
        jvm_lookups.install(session)
        _log.info(
            "spark session started",
            java=java,
            java_version=major,
            slots=self.slots,
            driver_memory_bytes=self.driver_memory_bytes,
            java_options=options,
            adopted=self._kept is not None and self._kept.adopted,
        )
        return session

    def _settings(self, home: Path, options: Sequence[str]) -> dict[str, str]:
        """The session's settings, its JVM's among them, with its scratch and its log
        configuration under ``home``."""
        scratch = home / "tmp"  # Spark's local dirs default to the JVM's temp dir
        scratch.mkdir(parents=True, exist_ok=True)
        log_config = home / "log4j2.properties"
        log_config.write_text(_LOG4J2)
        extra = [f"-Dlog4j2.configurationFile=file:{log_config}", f"-Djava.io.tmpdir={scratch}"]
        return {
            "spark.master": f"local[{self.slots}]",
            "spark.app.name": "tidal-taskmanager",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            **TASK_SQL_CONF,
            "spark.sql.session.timeZone": "UTC",
            "spark.driver.memory": f"{max(1, self.driver_memory_bytes >> 20)}m",
            "spark.driver.extraJavaOptions": " ".join(f'"{o}"' for o in [*extra, *options]),
        }

    @staticmethod
    def _own_session(settings: dict[str, str]):
        """A session whose JVM PySpark starts as this process's child, as it always does."""
        from pyspark.sql import SparkSession

        return SparkSession.builder.config(map=settings).getOrCreate()

    def _kept_session(self, settings: Callable[[Path], dict[str, str]]):
        """A session over the JVM ``self.keeping`` holds, adopted or started."""
        from pyspark.find_spark_home import _find_spark_home

        submit = os.path.join(_find_spark_home(), "bin", "spark-submit")

        def command(home: Path) -> list[str]:
            pairs = [("--conf", f"{k}={v}") for k, v in settings(home).items()]
            return [submit, *(arg for pair in pairs for arg in pair), "pyspark-shell"]

        self._kept = self.keeping.start(command, {**os.environ, "SPARK_CONNECT_MODE": "0"})
        return session_over(self._kept)


def java_options(java: str) -> list[str]:
    """The JVM options of a TaskManager's Spark JVM (besides its log and scratch settings): the
    class archive where there is one (``taskmanager.class_archive``), and the parallel
    collector, whose throughput a batch task wants rather than G1's short pauses (TPC-H q01 at
    scale 1: 0.77 of PySpark's time against 0.90 with G1). The benchmarks' PySpark baseline
    runs with the same options."""
    from taskmanager import class_archive

    return [*class_archive.java_options(java), BATCH_COLLECTOR]


def _with_task_conf(session):
    """A new session takes its SQL settings from the SparkContext, not from the session it
    was made from: a task's settings are set on it again, so its queries run as any task's
    (in a process whose context another session started, they would not)."""
    for key, value in {**TASK_SQL_CONF, "spark.sql.session.timeZone": "UTC"}.items():
        session.conf.set(key, value)
    return session


class IsolatedSession:
    """A session of its own for one task (see ``SparkSessionProvider.isolated``), and the
    temporary views registered in it, dropped when the task is done."""

    __slots__ = ("session", "base", "_views")

    def __init__(self, session, base) -> None:
        self.session = session
        self.base = base  # the process's session it was made from
        self._views: set[str] = set()

    def register(self, name: str, frame) -> None:
        """``frame`` (a DataFrame of this session) as the temporary view ``name``."""
        frame.createOrReplaceTempView(name)
        self._views.add(name)

    def drop_views(self) -> bool:
        """Drop the views registered; False if that failed (the JVM gone, say): the session
        is not to be used again, and the task's own error, if any, is the one it reports."""
        views, self._views = self._views, set()
        try:
            for name in views:
                self.session.catalog.dropTempView(name)
        except Exception as error:
            _log.warning("a task's spark session is dropped, not reused", error=repr(error))
            return False
        return True


@dataclass(frozen=True, slots=True)
class SparkTask:
    """Where a task's Spark query runs: the process's ``spark``, the task's own ``task_dir``
    for the inputs written for Spark (the caller removes it), the Spark job group its jobs run
    in (a cancel stops the group), the task's cancel token and the clock timing its phases."""

    spark: SparkSessionProvider
    task_dir: Path
    job_group: str
    cancel: CancelToken
    clock: TaskClock = field(default_factory=TaskClock)


def run_spark_function(
    function: SparkFunction,
    tables: Sequence[pa.Table | ParquetFiles],
    task: SparkTask,
    vertex: str,
) -> pa.Table:
    """``function.fn(*dataframes).toArrow()``: see ``run_spark_query``."""
    return run_spark_query(
        lambda frames: checked_frame(vertex, function, function.fn(*frames)), tables, task
    )


def run_spark_query(
    build: Callable[[Sequence[Any]], Any],
    tables: Sequence[pa.Table | ParquetFiles],
    task: SparkTask,
    session=None,
) -> pa.Table:
    """``build(dataframes).toArrow()``, its inputs read by Spark from Parquet files in the
    task's directory into DataFrames of ``session`` (the process's if None), its Spark jobs in
    the task's job group. The task's clock times writing the inputs (``spark_input``),
    building the query (``spark_plan``: ``build``, which only plans, and reading the inputs'
    schemas) and running it into Arrow (``spark_run``).

    An input written here (a gate's rows, not a source's files) is read as one partition:
    it is the task's partition already, and Spark then plans aggregates, joins and sorts
    without an exchange to its one shuffle partition (``TASK_SQL_CONF``), which would write and
    read the rows again. A source's files keep Spark's splits, scanned side by side."""
    spark, clock, cancel, job_group = task.spark, task.clock, task.cancel, task.job_group
    with clock.phase("spark_plan"):
        base = spark.session()
    with clock.phase("spark_input"):
        inputs = [
            table
            if isinstance(table, ParquetFiles)
            else write_spark_input(table, task.task_dir / f"input-{index}.parquet", spark.slots)
            for index, table in enumerate(tables)
        ]
    context = base.sparkContext
    context.setJobGroup(job_group, f"tidal task {job_group}", interruptOnCancel=True)
    stop_jobs = cancel.on_cancel(lambda: context.cancelJobGroup(job_group))
    try:
        cancel.check("before the spark query")
        with clock.phase("spark_plan"):
            frames = [
                _frame(spark, files, session or base, whole=not isinstance(given, ParquetFiles))
                for files, given in zip(inputs, tables)
            ]
            result = build(frames)
        with clock.phase("spark_run"):
            table = result.toArrow()
        clock.spark_jobs += len(context.statusTracker().getJobIdsForGroup(job_group))
        return table
    finally:
        stop_jobs()


def checked_frame(vertex: str, function: SparkFunction, result):
    """``result``, which ``function`` of ``vertex`` returned, if it is a DataFrame."""
    from pyspark.sql import DataFrame

    if not isinstance(result, DataFrame):
        raise OutputTypeError(
            f"vertex {vertex!r}: {function} returned {type(result).__name__}, "
            "not a pyspark.sql.DataFrame"
        )
    return result


def _frame(spark: SparkSessionProvider, files: ParquetFiles | None, session, whole: bool):
    """The DataFrame of ``files``; ``whole``: as one partition (see ``run_spark_query``)."""
    from pyspark.sql.types import StructType

    if files is None:
        return session.createDataFrame([], StructType())
    frame = spark.read_parquet(files, session)
    return frame.coalesce(1) if whole else frame


def _narrowed(schema, columns: Sequence[str] | None):
    """``schema`` with only ``columns``, in their order; None where a ``select`` must do it
    (a column named in another case, or twice, or missing: Spark resolves or names those)."""
    from pyspark.sql.types import StructType

    if not columns:
        return schema
    fields = {field.name: field for field in schema.fields}
    if len(set(columns)) < len(columns) or not all(column in fields for column in columns):
        return None
    return StructType([fields[column] for column in columns])


def _selected(frame, columns: Sequence[str] | None):
    return frame.select(*columns) if columns else frame
