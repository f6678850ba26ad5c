"""Running one task attempt, start to report: code, inputs, operator, outputs.

:func:`run_task` needs no Ray: everything it touches outside the task comes in a
:class:`TaskEnvironment` (the shuffle directory, the registry of served partitions, the blob
cache, the Spark session, how to fetch remote chunks and how to report). It always ends with
exactly one report after TaskRunning:

- TaskFinished, with the bytes per subpartition of every output and the task's metrics;
- TaskCanceled, when its cancel token was set, whatever the task was doing then;
- TaskFailed, with the error and its traceback; ``lost_partition`` when an input could not be
  read, so the scheduler reruns that producer instead of blaming this task's code.

A task that does not finish leaves nothing behind: its partition files and its temporary
directory are removed.
"""

from __future__ import annotations

import itertools
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from blob import BlobCache
from jobmanager.messages.deployment import TaskDeploymentDescriptor
from jobmanager.messages.events import (
    Event,
    TaskCanceled,
    TaskFailed,
    TaskFinished,
    TaskMetrics,
    TaskRunning,
)
from jobmanager.model.chaining import ChainedOperator
from jobmanager.model.operators import SparkFunction, SqlOperator
from shuffle import FetchChunk, ShuffleDirectory
from taskmanager.blobs import load_vertex_code
from taskmanager.cancellation import CancelToken
from taskmanager.failures import InputLost, describe_failure, failure_types
from taskmanager.inputs import read_inputs
from taskmanager.memo import Memo
from taskmanager.operators import run_operator
from taskmanager.outputs import discard_outputs, write_outputs
from taskmanager.timing import TaskClock
from taskmanager.registry import PartitionRegistry
from taskmanager.spark import SparkSessionProvider

__all__ = ["TaskEnvironment", "run_task"]

_TASK_DIRS = ".tasks"  # a result's folder never starts with a dot (ShuffleDirectory quotes it)
_TASK_NUMBERS = itertools.count()  # names of task folders, unique in this process


@dataclass(frozen=True, slots=True, eq=False)
class TaskEnvironment:
    """What a task uses of its TaskManager. ``fetch_chunk`` reads partitions on other nodes
    (None: every partition is expected on ``node_id``); ``wall_clock_ms`` stamps failures."""

    task_manager_id: str
    node_id: str
    shuffle: ShuffleDirectory
    registry: PartitionRegistry
    blobs: BlobCache
    spark: SparkSessionProvider
    report: Callable[[Event], None]
    fetch_chunk: FetchChunk | None = None
    wall_clock_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000
    memo: Memo = field(default_factory=Memo)
    on_jvm_lost: Callable[[], None] = lambda: None  # after the task that found it is reported


def run_task(
    tdd: TaskDeploymentDescriptor, env: TaskEnvironment, cancel: CancelToken, queued_s: float = 0.0
) -> Event:
    """Run the attempt (which waited ``queued_s`` in its slot) and report how it ended;
    returns the final report."""
    log = structlog.get_logger("tidal.task").bind(
        job=tdd.job_id, vertex=tdd.vertex, subtask=tdd.subtask, attempt=tdd.attempt
    )
    clock = TaskClock()
    env.report(TaskRunning(tdd.vertex, tdd.subtask, tdd.attempt, env.wall_clock_ms()))
    log.debug("task running", task_manager=env.task_manager_id)
    task_dir = env.shuffle.root / _TASK_DIRS / str(next(_TASK_NUMBERS))  # this process's own
    try:
        event: Event = _finished(tdd, env, cancel, task_dir, clock, queued_s)
        log.debug(
            "task finished",
            rows_in=event.metrics.rows_in,
            rows_out=event.metrics.rows_out,
            duration_ms=event.metrics.duration_ms,
        )
    except Exception as error:
        discard_outputs(tdd, env.shuffle, env.registry)
        if cancel.cancelled:
            event = TaskCanceled(tdd.vertex, tdd.subtask, tdd.attempt)
            log.info("task canceled", noticed=str(error))
        else:
            lost = error.partition_id if isinstance(error, InputLost) else None
            event = TaskFailed(
                tdd.vertex,
                tdd.subtask,
                tdd.attempt,
                describe_failure(error),
                env.wall_clock_ms(),
                lost,
                failure_types(error),
            )
            log.warning(
                "task failed",
                error=f"{type(error).__name__}: {error}",
                lost_partition=str(lost) if lost else None,
            )
    finally:
        shutil.rmtree(task_dir, ignore_errors=True)
    env.report(event)
    if isinstance(event, TaskFailed) and env.spark.jvm_lost():
        log.error(
            "the TaskManager's Spark JVM has exited (out of memory, as a rule: see the "
            "TaskManager's log); no task can run here any more"
        )
        env.on_jvm_lost()
    return event


def _finished(
    tdd: TaskDeploymentDescriptor,
    env: TaskEnvironment,
    cancel: CancelToken,
    task_dir: Path,
    clock: TaskClock,
    queued_s: float,
) -> TaskFinished:
    with clock.phase("code"):
        code = env.memo.get(("code", tdd.code_key), lambda: load_vertex_code(env.blobs, tdd))
    operator = code.operator.first if isinstance(code.operator, ChainedOperator) else code.operator
    spark_reads = isinstance(operator, (SparkFunction, SqlOperator))  # Spark reads files itself
    inputs = read_inputs(
        tdd,
        code.sources,
        env.blobs,
        env.node_id,
        env.fetch_chunk,
        cancel,
        env.memo,
        files_for_spark=spark_reads,
        clock=clock,
    )
    cancel.check("before the operator")
    result = run_operator(
        code, inputs.tables, tdd, spark=env.spark, task_dir=task_dir, cancel=cancel, clock=clock
    )
    cancel.check("after the operator")
    produced = ()
    if result.table is not None:
        with clock.phase("write_output"):
            produced = write_outputs(result.table, tdd, env.shuffle, env.registry, cancel)
    cancel.check("after writing the outputs")
    metrics = TaskMetrics(
        rows_in=inputs.rows,
        rows_out=result.rows,
        bytes_in=inputs.bytes_read,
        bytes_in_remote=inputs.remote_bytes,
        ranges_read=inputs.ranges_read,
        duration_ms=clock.elapsed_ms(),
        phases=clock.breakdown(),
        queued_ms=int(queued_s * 1000),
        spark_jobs=clock.spark_jobs,
    )
    return TaskFinished(tdd.vertex, tdd.subtask, tdd.attempt, produced, metrics)
