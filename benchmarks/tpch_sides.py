"""One timed run of a TPC-H query on either side of ``benchmarks/tpch.py``: PySpark's, in the
baseline session (``local[2]``, adaptive query execution on, the JVM options and heap of Tidal's
default TaskManager on this machine), and Tidal's, a job through ``Client.sql``, with the join
decisions its JobManager made at run time and its wall time split (``benchmarks/wall_split.py``).
A side that cannot run a query raises ``QueryFailed``, and the benchmark goes on without it.
"""

from __future__ import annotations

import time
from typing import Mapping

from pyspark.sql import SparkSession

from benchmarks.wall_split import split_wall
from examples.spark_sql import spark_query

__all__ = [
    "BASELINE_SLOTS",
    "QueryFailed",
    "baseline_jvm",
    "fresh_spark_session",
    "join_decisions",
    "run_spark",
    "run_tidal",
    "spark_session",
]

BASELINE_SLOTS = 2  # local[2], and the slots of Tidal's default TaskManager


def baseline_jvm() -> tuple[list[str], int]:
    """The baseline JVM's options and heap: those of Tidal's default TaskManager here."""
    from taskmanager.heap import default_heap_bytes
    from taskmanager.java import find_java
    from taskmanager.spark import java_options

    return java_options(find_java()[0]), default_heap_bytes(BASELINE_SLOTS)


def spark_session() -> SparkSession:
    """The baseline: two local cores, adaptive query execution on, no UI, the JVM as
    ``baseline_jvm`` says."""
    options, heap = baseline_jvm()
    session = (
        SparkSession.builder.master(f"local[{BASELINE_SLOTS}]")
        .appName("tidal-benchmark-tpch-baseline")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.driver.memory", f"{heap >> 20}m")
        .config("spark.driver.extraJavaOptions", " ".join(options))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def fresh_spark_session(session: SparkSession) -> SparkSession:
    """A new baseline session after a query PySpark failed. Its JVM may have died of it (out of
    memory: q04 at scale 10), and PySpark cannot stop a session whose JVM is gone (its stop
    asks the JVM, and raises); nor does it launch a new JVM while it holds the old gateway.
    So a dead JVM's gateway is dropped, its process reaped, and the session forgotten, and
    the new session launches a JVM of its own."""
    from py4j.protocol import Py4JError
    from pyspark import SparkContext
    from pyspark.sql.context import SQLContext

    try:
        session.stop()
    except (Py4JError, OSError):  # Py4J's words for a lost connection, or the socket's own
        gateway = SparkContext._gateway
        if gateway is not None:
            gateway.close()  # its sockets; the JVM at the other end is gone
            gateway.proc.stdin.close()
            gateway.proc.kill()  # a JVM that no longer answers: ended, if not yet
            gateway.proc.wait()
        SparkContext._gateway = SparkContext._jvm = SparkContext._active_spark_context = None
        SparkSession._instantiatedSession = SparkSession._activeSession = None
        SQLContext._instantiatedContext = None
    return spark_session()


class QueryFailed(Exception):
    """One side could not run a query (out of memory at scale 10, say): the run says so and
    goes on with the next query."""


def run_spark(
    session: SparkSession, text: str, tables: Mapping[str, str] | None, out: str
) -> float:
    """Seconds to run ``text`` and write its result; ``tables``: register the views it reads
    first, in the timer (a cold run), else they are (a warm one)."""
    started = time.perf_counter()
    try:
        frame = session.sql(text) if tables is None else spark_query(session, tables, text)
        frame.write.mode("overwrite").parquet(out)
    except Exception as error:
        first = (str(error).strip().splitlines() or [""])[0][:500]
        raise QueryFailed(f"PySpark failed: {type(error).__name__}: {first}") from error
    return time.perf_counter() - started


def run_tidal(
    client, name: str, text: str, tables: Mapping[str, str], out: str, config: dict[str, str]
):
    """Seconds from the call (planning included) to a finished job, the job's result, the
    join decisions its JobManager made at run time, in words, and its wall time split into
    Spark's work and Tidal's own (``wall_split``); then, untimed, until the job's JobManager
    has left (a second after the job)."""
    from jobmanager.runtime.eventlog import read_log

    started = time.perf_counter()
    handle = client.sql(text, tables=tables, output=out, overwrite=True, config=config)
    result = handle.wait()
    seconds = time.perf_counter() - started
    if result.status != "FINISHED":
        raise QueryFailed(f"Tidal's job {result.status.lower()}: {result.cause[:1000]}")
    joins = join_decisions(handle)
    split = split_wall(read_log(handle.event_log()), seconds)
    _until_gone(handle.actor)
    return seconds, result, joins, split


def join_decisions(handle) -> list[str]:
    """The join decisions in the job's event log, each as ``vertex: its text``."""
    from jobmanager.messages import events as ev

    return [
        f"{event.vertex}: {join.text}"
        for event in handle.events()
        if type(event) is ev.VertexParallelismDecided
        for join in event.joins
    ]


def _until_gone(actor, deadline_s: float = 30.0) -> None:
    """Ask the actor (without Ray's retries: a JobManager is restartable) until it is gone."""
    import ray

    deadline = time.monotonic() + deadline_s
    while actor is not None and (left := deadline - time.monotonic()) > 0:
        try:
            ray.get(actor.__ray_ready__.options(max_task_retries=0).remote(), timeout=left)
        except ray.exceptions.RayActorError:
            return
        except ray.exceptions.GetTimeoutError:
            break
        time.sleep(0.05)
    if actor is not None:
        print(f"the JobManager {actor} did not leave within {deadline_s:.0f} s", flush=True)
