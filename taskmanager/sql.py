"""Running the pieces of a planned query (``SqlOperator``) in a task.

A piece is Spark SQL over the task's inputs, each registered as the temporary view its
operator names (``views[i]``: the vertex's sources, then its incoming edges, in order). Two
slots share one JVM, and two tasks may both call their input ``in0``, so the views live in a
session of the task's own (``SparkSessionProvider.isolated``), dropped when it is done. An
input reaches Spark as ``run_spark_query`` hands it any input: Parquet files Spark reads
itself, or an Arrow table written to Parquet; an input with no columns at all is still a view
(of no rows and no columns), so the piece's SQL always finds its names.

Chained members compose into one Spark query, as chained PySpark functions do: the first
member's result (a DataFrame, not yet run) is the next member's one view, or its one argument
for a PySpark function, and so on; only the last member's result runs, into Arrow.

Spark refusing a piece's SQL (``AnalysisException``, of which ``ParseException`` is one: a
column or view that is not there, a type it cannot take, text it cannot parse) would refuse it
again on every attempt: it fails the job at once (``SqlRefused`` is a
``NonRecoverableError``), saying which vertex and which SQL (the task runner logs it, with the
job, vertex and attempt).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import replace

import pyarrow as pa

from jobmanager.errors import NonRecoverableError
from jobmanager.model.operators import SparkFunction, SqlOperator
from taskmanager.inputs import ParquetFiles
from taskmanager.join_memory import (
    build_budget,
    hints_hash_build,
    in_memory_bytes,
    within_budget,
)
from taskmanager.spark import IsolatedSession, SparkTask, checked_frame, run_spark_query

__all__ = ["SqlRefused", "run_query"]

_MAX_SPARK_MESSAGE = 1_500

Member = tuple[str, SqlOperator | SparkFunction]


class SqlRefused(NonRecoverableError):
    """Spark cannot analyse or parse a piece of a planned query: no attempt would do better."""


def run_query(
    members: Sequence[Member],
    tables: Sequence[pa.Table | ParquetFiles],
    task: SparkTask,
    feeds: Sequence[Sequence[int | None]] | None = None,
) -> pa.Table:
    """The result, as Arrow, of ``members`` (vertex name and operator, in chain order) composed
    into one Spark query over ``tables``: the first member gets every input, each later one the
    result before it, unless ``feeds`` says, per member, which of ``tables`` it reads (None:
    the result before it). With a SqlOperator among them, the query runs in a session of its
    own (see the module docstring); PySpark functions alone run in the process's session."""
    spark = task.spark
    feeds = feeds or [tuple(range(len(tables)))] + [(None,)] * (len(members) - 1)
    members = _fitted(members, tables, feeds, build_budget(spark.driver_memory_bytes, spark.slots))
    isolating = any(isinstance(operator, SqlOperator) for _, operator in members)
    if isolating:
        with task.clock.phase("spark_plan"):
            spark.session()  # the JVM's start, for a TaskManager's first Spark task
    with spark.isolated() if isolating else nullcontext() as isolated:
        return run_spark_query(
            lambda frames: _compose(isolated, members, frames, feeds),
            tables,
            task,
            session=isolated.session if isolating else None,
        )


def _fitted(
    members: Sequence[Member],
    tables: Sequence[pa.Table | ParquetFiles],
    feeds: Sequence[Sequence[int | None]],
    budget: int,
) -> list[Member]:
    """``members`` with their in-task hash builds held to ``budget`` (``join_memory``)."""
    if not any(isinstance(op, SqlOperator) and hints_hash_build(op.sql) for _, op in members):
        return list(members)
    sizes = [in_memory_bytes(table) for table in tables]
    fitted = []
    for (name, operator), feed in zip(members, feeds, strict=True):
        if isinstance(operator, SqlOperator):
            view_bytes = {
                view: sum(sizes) if i is None else sizes[i]
                for view, i in zip(operator.views, feed, strict=True)
            }
            operator = replace(operator, sql=within_budget(operator.sql, view_bytes, budget))
        fitted.append((name, operator))
    return fitted


def _compose(
    isolated: IsolatedSession | None,
    members: Sequence[Member],
    inputs: Sequence,
    feeds: Sequence[Sequence[int | None]],
):
    result = None
    for (name, operator), feed in zip(members, feeds, strict=True):
        frames = tuple(result if i is None else inputs[i] for i in feed)
        if isinstance(operator, SparkFunction):
            result = checked_frame(name, operator, operator.fn(*frames))
        else:
            for view, frame in zip(operator.views, frames, strict=True):
                isolated.register(view, frame)
            result = _sql(isolated, name, operator)
    return result


def _sql(isolated: IsolatedSession, vertex: str, operator: SqlOperator):
    from pyspark.errors import AnalysisException

    try:
        return isolated.session.sql(operator.sql)
    except AnalysisException as error:
        spark_says = str(error).strip().partition(";\n")[0]  # the analysed plan follows
        if len(spark_says) > _MAX_SPARK_MESSAGE:
            spark_says = spark_says[:_MAX_SPARK_MESSAGE] + " ..."
        raise SqlRefused(
            f"vertex {vertex!r}: Spark refused its SQL ({type(error).__name__}): {spark_says}\n"
            f"its SQL, over views {', '.join(operator.views) or '(none)'}:\n{operator.sql}"
        ) from error
