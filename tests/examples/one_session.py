"""Running a job graph's PySpark functions and SQL pieces in one local SparkSession, without
Tidal.

This checks the example jobs' user code, and the planner's graphs, apart from the runtime.
Each vertex runs as the number of subtasks a test gives it, and a subtask gets what its input
edges would give it: its share of a HASH input by Tidal's own hash, all of a BROADCAST input,
producer subtask ``i``'s output over FORWARD between equal parallelisms, and a disjoint share
of anything else (REBALANCE, RESCALE, a source's files), all of a ``BroadcastSource``. So partial and final aggregates, and local and global top-Ns, really run split, and a
job that only works because everything landed in one task fails here. As in Tidal, what a
subtask hands on is data (an Arrow table), not a plan. A subtask of a ``SqlOperator`` vertex
registers its inputs as the operator's views in a new session of its own (``newSession``), so
no subtask sees another's views and a view the SQL names but the vertex does not have fails.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobmanager.model.broadcast_source import BroadcastSource
from jobmanager.model.jobgraph import JobEdge, JobGraph, PartitionerKind
from shuffle.hashing import hash_columns
from jobmanager.model.operators import ParquetSink, SparkFunction, SqlOperator

__all__ = ["run_in_one_session", "subtask_counts"]


def subtask_counts(graph: JobGraph) -> dict[str, int]:
    """Two subtasks a vertex, as the scheduler would give a vertex it sizes, but the one
    task of a vertex set to one and its forward group's (FORWARD keeps the parallelism), and
    of a sort behind a range edge (this runner shares a range edge's rows out as any other,
    not by key range, so only one task keeps their order)."""
    counts: dict[str, int] = {}
    for vertex in graph.topological_order():
        forward = [e.source.name for e in vertex.inputs if e.is_forward]
        ranged = any(e.partitioner.is_range for e in vertex.inputs)
        counts[vertex.name] = vertex.parallelism or (
            counts[forward[0]] if forward else 1 if ranged else 2
        )
    return counts


def run_in_one_session(
    graph: JobGraph, session: SparkSession, parallelism: dict[str, int] | None = None
) -> pa.Table:
    """The rows the graph's only sink would write, its subtasks' files read in order."""
    parallelism = parallelism or {}
    outputs: dict[str, list[pa.Table]] = {}
    for vertex in graph.topological_order():
        count = parallelism.get(vertex.name, 1)
        subtasks = []
        for index in range(count):
            own = session.newSession() if isinstance(vertex.operator, SqlOperator) else session
            inputs = [
                _read(own, source.source)
                if isinstance(source, BroadcastSource)
                else _share(_read(own, source), index, count, None)
                for source in vertex.sources
            ]
            inputs += [
                _edge_input(own, edge, outputs[edge.source.name], index, count)
                for edge in vertex.inputs
            ]
            subtasks.append(_run(vertex.name, vertex.operator, inputs, own).toArrow())
        outputs[vertex.name] = subtasks
    sinks = [v for v in graph.vertices if isinstance(v.operator, ParquetSink)]
    if len(sinks) != 1:
        raise ValueError(f"expected one sink, found {[v.name for v in sinks]}")
    return pa.concat_tables(outputs[sinks[0].name])


def _read(session: SparkSession, source) -> DataFrame:
    """A source's rows as Tidal's reader gives them (its format, its columns, its partitions
    pruned, hive partition values as strings)."""
    return _frame(session, source.read(source.splits(1 << 62)))


def _edge_input(
    session: SparkSession, edge: JobEdge, produced: list[pa.Table], index: int, count: int
) -> DataFrame:
    kind = edge.partitioner.kind if edge.partitioner else PartitionerKind.REBALANCE
    if kind is PartitionerKind.FORWARD and len(produced) == count:
        return _frame(session, produced[index])
    rows = pa.concat_tables(produced)
    if kind is PartitionerKind.HASH and count > 1:
        return _frame(session, _hash_share(rows, edge.partitioner.keys, index, count))
    everything = _frame(session, rows)
    if kind is PartitionerKind.BROADCAST:
        return everything
    return _share(everything, index, count, None)


def _hash_share(rows: pa.Table, keys, index: int, count: int) -> pa.Table:
    """The rows a HASH edge sends subtask ``index``, by Tidal's own hash (``shuffle.hashing``):
    the two sides of a join agree by value, an int key and a bigint one alike, as in Tidal."""
    if not rows.num_rows:
        return rows
    chosen = hash_columns(rows, list(keys)) % np.uint64(count) == index
    return rows.filter(pa.array(chosen))


def _frame(session: SparkSession, table: pa.Table) -> DataFrame:
    """One chunk: PySpark 4.3's ``createDataFrame`` returns no rows at all for a table whose
    first chunk is empty, as a concatenation of subtask outputs often is."""
    return session.createDataFrame(table.combine_chunks())


def _share(frame: DataFrame, index: int, count: int, keys) -> DataFrame:
    """Rows whose hash (of ``keys``, or of every column) falls to subtask ``index``."""
    if count == 1:
        return frame
    columns = keys or frame.columns
    return frame.where(F.pmod(F.hash(*columns), F.lit(count)) == index)


def _run(name: str, operator, inputs: list[DataFrame], session: SparkSession) -> DataFrame:
    if isinstance(operator, SparkFunction):
        return operator.fn(*inputs)
    if isinstance(operator, SqlOperator):
        for view, frame in zip(operator.views, inputs, strict=True):
            frame.createOrReplaceTempView(view)
        return session.sql(operator.sql)
    if operator is None or isinstance(operator, ParquetSink):
        (single,) = inputs
        return single
    raise TypeError(f"vertex {name!r}: {operator!r} cannot run in one SparkSession")
