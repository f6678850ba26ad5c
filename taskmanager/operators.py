"""Running a vertex's operator on its input tables: what each kind of operator means here.

- no operator: the single input passes through;
- ``arrow(fn)``: ``fn(*tables)`` in plain Python, no JVM; it must return a ``pyarrow.Table``;
- ``spark(fn)``: ``fn(*dataframes)`` in the TaskManager's SparkSession (see
  :mod:`taskmanager.spark`);
- ``SqlOperator``: its Spark SQL over the inputs registered as its views, in a session of the
  task's own (see :mod:`taskmanager.sql`);
- ``ParquetSink``: the single input is written as this attempt's part file(s) in the sink's
  staging directory, Parquet or CSV, one per partition directory if partitioned (see
  :mod:`taskmanager.sink_writer`); the JobManager commits the final attempts' files when the
  job finishes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa

from jobmanager.errors import OutputTypeError
from jobmanager.messages.deployment import TaskDeploymentDescriptor
from jobmanager.model.chaining import ChainedOperator
from jobmanager.model.operators import (
    ArrowFunction,
    ParquetSink,
    SparkFunction,
    SqlOperator,
    VertexCode,
)
from taskmanager.cancellation import CancelToken
from taskmanager.sink_writer import write_part_file, write_sink
from taskmanager.spark import SparkSessionProvider, SparkTask
from taskmanager.sql import run_query
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
    operator = _built_on(code.operator, dict(tdd.build_sides))
    if isinstance(operator, ChainedOperator):
        return _run_chain(
            operator, tables, tdd, SparkTask(spark, task_dir, _job_group(tdd), cancel, clock)
        )
    if operator is None:
        table = _single_input(tables, tdd.vertex, "with no operator passes its input through")
        return OperatorResult(table, table.num_rows)
    if isinstance(operator, ParquetSink):
        table = _single_input(tables, tdd.vertex, "is a sink")
        cancel.check("before writing its part file")  # a losing speculative attempt stops here
        with clock.phase("write_output"):
            write_sink(table, operator, tdd.job_id, tdd.subtask, tdd.attempt)
        return OperatorResult(None, table.num_rows)
    if isinstance(operator, ArrowFunction):
        with clock.phase("arrow_function"):
            table = operator.fn(*tables)
        if not isinstance(table, pa.Table):
            raise OutputTypeError(
                f"vertex {tdd.vertex!r}: {operator} returned {type(table).__name__}, "
                "not a pyarrow.Table"
            )
        return OperatorResult(table, table.num_rows)
    if isinstance(operator, _COMPOSED):
        task = SparkTask(spark, task_dir, _job_group(tdd), cancel, clock)
        table = run_query(((tdd.vertex, operator),), tables, task)
        return OperatorResult(table, table.num_rows)
    raise TypeError(
        f"vertex {tdd.vertex!r}: operator {operator!r} is not spark(fn), arrow(fn), SQL or a "
        "ParquetSink"
    )


def _run_chain(
    chain: ChainedOperator,
    tables: tuple,
    tdd: TaskDeploymentDescriptor,
    task: SparkTask,
) -> OperatorResult:
    """A chain's operators one after the other in this task: consecutive PySpark functions and
    SQL pieces as one composed query (one Spark query, see ``taskmanager.sql.run_query``),
    Arrow functions on the table in memory, a sink last writing the chain's result. Each
    member reads what ``chain.member_feeds`` says: the task's inputs by position, or the
    result before it."""
    cancel, clock = task.cancel, task.clock
    members = list(zip(chain.names, chain.operators))
    feeds = [chain.member_feeds(k, len(tables)) for k in range(len(members))]
    previous = None
    position = 0
    while position < len(members):
        name, operator = members[position]
        cancel.check(f"before {name!r}")
        if isinstance(operator, _COMPOSED):
            end = _composed_end(members, position)
            here = tables + ((previous,) if previous is not None else ())
            first = tuple(len(tables) if i is None else i for i in feeds[position])
            previous = run_query(
                members[position:end], here, task, feeds=(first, *feeds[position + 1 : end])
            )
            position = end
            continue
        inputs = tuple(previous if i is None else tables[i] for i in feeds[position])
        position += 1
        if isinstance(operator, ParquetSink):
            table = _single_input(inputs, name, "is a sink")
            cancel.check("before writing its part file")
            with clock.phase("write_output"):
                write_sink(table, operator, tdd.job_id, tdd.subtask, tdd.attempt)
            return OperatorResult(None, table.num_rows)
        previous = _run_member(name, operator, inputs, clock)
    return OperatorResult(previous, previous.num_rows)


def _composed_end(members: list, position: int) -> int:
    """Where the run of PySpark functions and SQL pieces from ``position`` ends."""
    end = position + 1
    while end < len(members) and isinstance(members[end][1], _COMPOSED):
        end += 1
    return end


def _run_member(name: str, operator, inputs: tuple, clock: TaskClock) -> pa.Table:
    """A chain member run on the table in memory: its input passed through (no operator), or
    its Arrow function's table."""
    if operator is None:
        return _single_input(inputs, name, "with no operator passes its input through")
    with clock.phase("arrow_function"):
        table = operator.fn(*inputs)
    if not isinstance(table, pa.Table):
        raise OutputTypeError(
            f"vertex {name!r}: {operator} returned {type(table).__name__}, not a pyarrow.Table"
        )
    return table


def _built_on(operator, sides: dict[str, str]):
    """The operator with its planned joins built on the sides the JobManager decided at run
    time (``SqlOperator.built_on``), in a chain too."""
    if not sides:
        return operator
    if isinstance(operator, SqlOperator):
        return operator.built_on(sides)
    if isinstance(operator, ChainedOperator):
        members = tuple(
            _built_on(m, sides) if isinstance(m, SqlOperator) else m for m in operator.operators
        )
        return replace(operator, operators=members)
    return operator


_COMPOSED = (SparkFunction, SqlOperator)  # chained, these build one Spark query


def _job_group(tdd: TaskDeploymentDescriptor) -> str:
    return f"{tdd.job_id}/{tdd.vertex}/{tdd.subtask}/{tdd.attempt}"


def _single_input(tables: tuple[pa.Table, ...], vertex: str, why: str) -> pa.Table:
    if len(tables) != 1:
        raise ValueError(
            f"vertex {vertex!r} {why}, so it reads one input, but it has {len(tables)}"
        )
    return tables[0]
