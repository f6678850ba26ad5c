"""Running a vertex's operator on its input tables: what each kind of operator means here.

- no operator: the single input passes through;
- ``arrow(fn)``: ``fn(*tables)`` in plain Python, no JVM; it must return a ``pyarrow.Table``;
- ``spark(fn)``: ``fn(*dataframes)`` in the TaskManager's SparkSession (see
  :mod:`taskmanager.spark`);
- ``ParquetSink``: the single input is written as this attempt's part file in the sink's
  staging directory (even with no rows, so the file carries the schema); the JobManager commits
  the final attempts' files when the job finishes.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from jobmanager.messages.deployment import TaskDeploymentDescriptor
from jobmanager.model import storage
from jobmanager.model.chaining import ChainedOperator
from jobmanager.model.operators import (
    ArrowFunction,
    ParquetSink,
    SparkFunction,
    VertexCode,
    part_file,
)
from taskmanager.cancellation import CancelToken
from taskmanager.spark import SparkSessionProvider, run_spark_function
from taskmanager.timing import TaskClock

__all__ = ["OperatorResult", "run_operator", "write_part_file"]


@dataclass(frozen=True, slots=True, eq=False)
class OperatorResult:
    """The operator's output table (None for a sink) and how many rows it produced."""

    table: pa.Table | None
    rows: int


def run_operator(
    code: VertexCode,
    tables: tuple[pa.Table, ...],
    tdd: TaskDeploymentDescriptor,
    *,
    spark: SparkSessionProvider,
    task_dir: Path,
    cancel: CancelToken,
    clock: TaskClock | None = None,
) -> OperatorResult:
    clock = clock or TaskClock()
    operator = code.operator
    if isinstance(operator, ChainedOperator):
        return _run_chain(operator, tables, tdd, spark, task_dir, cancel, clock)
    if operator is None:
        table = _single_input(tables, tdd.vertex, "with no operator passes its input through")
        return OperatorResult(table, table.num_rows)
    if isinstance(operator, ParquetSink):
        table = _single_input(tables, tdd.vertex, "is a sink")
        cancel.check("before writing its part file")  # a losing speculative attempt stops here
        with clock.phase("write_output"):
            write_part_file(table, part_file(operator, tdd.job_id, tdd.subtask, tdd.attempt))
        return OperatorResult(None, table.num_rows)
    if isinstance(operator, ArrowFunction):
        with clock.phase("arrow_function"):
            table = operator.fn(*tables)
        if not isinstance(table, pa.Table):
            raise TypeError(
                f"vertex {tdd.vertex!r}: {operator} returned {type(table).__name__}, "
                "not a pyarrow.Table"
            )
        return OperatorResult(table, table.num_rows)
    if isinstance(operator, SparkFunction):
        table = run_spark_function(
            operator,
            tables,
            spark=spark,
            task_dir=task_dir,
            job_group=f"{tdd.job_id}/{tdd.vertex}/{tdd.subtask}/{tdd.attempt}",
            vertex=tdd.vertex,
            cancel=cancel,
            clock=clock,
        )
        return OperatorResult(table, table.num_rows)
    raise TypeError(
        f"vertex {tdd.vertex!r}: operator {operator!r} is not spark(fn), arrow(fn) or a "
        "ParquetSink"
    )


def _run_chain(chain: ChainedOperator, tables: tuple, tdd: TaskDeploymentDescriptor,
               spark: SparkSessionProvider, task_dir: Path, cancel: CancelToken,
               clock: TaskClock) -> OperatorResult:  # fmt: skip
    """A chain's operators one after the other in this task: consecutive PySpark functions as
    one composed function (one Spark query, one job), Arrow functions on the table in memory,
    a sink last writing the chain's result."""
    inputs = tables
    members = list(zip(chain.names, chain.operators))
    position = 0
    while position < len(members):
        name, operator = members[position]
        cancel.check(f"before {name!r}")
        if isinstance(operator, SparkFunction):
            run = [members[position]]
            while position + len(run) < len(members) and isinstance(members[position + len(run)][1], SparkFunction):
                run.append(members[position + len(run)])
            position += len(run)
            table = run_spark_function(
                SparkFunction(_ComposedSpark(tuple(run))), inputs, spark=spark, task_dir=task_dir,
                job_group=f"{tdd.job_id}/{tdd.vertex}/{tdd.subtask}/{tdd.attempt}",
                vertex=tdd.vertex, cancel=cancel, clock=clock)  # fmt: skip
            inputs = (table,)
            continue
        position += 1
        if isinstance(operator, ParquetSink):
            table = _single_input(inputs, name, "is a sink")
            cancel.check("before writing its part file")
            with clock.phase("write_output"):
                write_part_file(table, part_file(operator, tdd.job_id, tdd.subtask, tdd.attempt))
            return OperatorResult(None, table.num_rows)
        if operator is None:
            inputs = (_single_input(inputs, name, "with no operator passes its input through"),)
            continue
        with clock.phase("arrow_function"):
            table = operator.fn(*inputs)
        if not isinstance(table, pa.Table):
            raise TypeError(f"vertex {name!r}: {operator} returned {type(table).__name__}, "
                            "not a pyarrow.Table")  # fmt: skip
        inputs = (table,)
    table = _single_input(inputs, chain.names[-1], "ends the chain")
    return OperatorResult(table, table.num_rows)


class _ComposedSpark:
    """Chained PySpark functions as one: each one's DataFrame is the next one's input, so Spark
    plans and runs them as one query."""

    def __init__(self, members: tuple[tuple[str, SparkFunction], ...]) -> None:
        self.members = members
        self.__name__ = " -> ".join(getattr(f.fn, "__name__", name) for name, f in members)

    def __call__(self, *frames):
        from pyspark.sql import DataFrame

        result = None
        for name, function in self.members:
            result = function.fn(*frames)
            if not isinstance(result, DataFrame):
                raise TypeError(f"vertex {name!r}: {function} returned "
                                f"{type(result).__name__}, not a pyspark.sql.DataFrame")  # fmt: skip
            frames = (result,)
        return result


def write_part_file(table: pa.Table, path: str) -> None:
    """Write ``table`` to ``path`` whole or not at all. On a local disk: a hidden temporary file
    (ignored by readers and by the sink's commit) renamed into place; on an object store: one
    object, which appears only once its upload completes."""
    if not storage.is_local(path):
        fs, key = storage.filesystem(path)
        with fs.open(key, "wb") as file:
            pq.write_table(table, file)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = os.path.join(os.path.dirname(path), f".{uuid.uuid4().hex}.tmp")
    try:
        pq.write_table(table, temporary)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def _single_input(tables: tuple[pa.Table, ...], vertex: str, why: str) -> pa.Table:
    if len(tables) != 1:
        raise ValueError(
            f"vertex {vertex!r} {why}, so it reads one input, but it has {len(tables)}"
        )
    return tables[0]
