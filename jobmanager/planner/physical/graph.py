"""Stages become the job graph Tidal runs: a vertex per stage, running its SQL, reading its
tables through ``FileSource``s narrowed to the columns it reads and the hive partitions its
filter allows (a tiny table a join reads whole in every task as a ``BroadcastSource``), joined
by the stages' edges, the sink last. A range edge's sort keys carry their columns' types, so
``tidal explain`` can show the sort's bounds as values.
"""

from __future__ import annotations

import datetime
from dataclasses import replace

from sqlglot import exp

from jobmanager.model.broadcast_source import BroadcastSource
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.model.operators import ParquetSink, SqlOperator
from jobmanager.model.partition_filter import PARTITION_TYPES
from jobmanager.model.sources import FileSource, PartitionPredicate
from jobmanager.planner.logical import Scan, conjuncts
from jobmanager.planner.physical.cut import Stage, StageEdge
from jobmanager.planner.physical.joinplans import planned_joins, with_hints
from jobmanager.planner.physical.sqlgen import stage_sql

__all__ = ["job_graph", "stages_in_order"]

_COMPARISONS = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}
_NAME_LENGTH = 60


def stages_in_order(result: Stage) -> list[Stage]:
    """Every stage once, producers before their consumers."""
    order: list[Stage] = []
    seen: set[int] = set()

    def visit(stage: Stage) -> None:
        if id(stage) in seen:
            return
        seen.add(id(stage))
        for edge in stage.inputs:
            visit(edge.producer)
        order.append(stage)

    visit(result)
    return order


def job_graph(result: Stage, sink: ParquetSink, name: str) -> JobGraph:
    graph = JobGraph(name)
    vertices = {}
    names: set[str] = set()
    stages = stages_in_order(result)
    joins = planned_joins(stages)  # each stage's, for explain
    for stage in stages:
        views = tuple(f"s{i}" for i in range(len(stage.sources))) + tuple(
            f"in{i}" for i in range(len(stage.inputs))
        )
        sql = stage_sql(stage)
        operator = SqlOperator(sql, views, stage.origin, with_hints(joins.get(id(stage), ()), sql))
        sources = [
            BroadcastSource(source_of(scan)) if index in stage.whole else source_of(scan)
            for index, scan in enumerate(stage.sources)
        ]
        vertices[id(stage)] = graph.add_vertex(
            _unique(stage, names), stage.parallelism, operator=operator, sources=sources
        )
        for edge in stage.inputs:
            splittable = edge.splittable and not stage.relies_on_partitioning
            graph.connect(
                vertices[id(edge.producer)],
                vertices[id(stage)],
                _typed(edge),
                splittable=splittable,
                join=edge.join,
                pre_aggregated=edge.pre_aggregated,
            )
    last = graph.add_vertex("result", operator=sink)
    graph.connect(vertices[id(result)], last, Partitioner.FORWARD)
    return graph


def _typed(edge: StageEdge) -> Partitioner:
    """The edge's partitioner, a range's sort keys given their columns' Spark types."""
    partitioner = edge.partitioner
    if not partitioner.is_range:
        return partitioner
    type_of = edge.producer.tree.typer()
    known = (replace(key, sql_type=_type_name(type_of(key.column))) for key in partitioner.order)
    return Partitioner.range(*known)


def _type_name(kind) -> str:
    name = str(kind)
    return "" if name == "unknown" else name


def source_of(scan: Scan) -> FileSource:
    return scan.table.source([c for _, c in scan.mapping], partition_predicates(scan))


def partition_predicates(scan: Scan) -> tuple[PartitionPredicate, ...]:
    """The conjuncts of the scan's filters that compare a hive partition column with
    constants, as the source's partition filter (the rows are filtered again after reading)."""
    partitions = {}
    for column_id, name in scan.mapping:
        column = scan.table.column(name)
        if column is not None and column.partition:
            type_name = {"int": "bigint", "tinyint": "bigint", "smallint": "bigint"}.get(
                column.type.name, column.type.name
            )
            if type_name in PARTITION_TYPES:
                partitions[column_id] = (name, type_name)
    found = []
    for conjunct in (c for f in scan.filters for c in conjuncts(f)):
        found.extend(_predicates(conjunct, partitions))
    return tuple(found)


def _predicates(conjunct: exp.Expression, partitions: dict) -> list[PartitionPredicate]:
    if isinstance(conjunct, exp.In) and not conjunct.args.get("query"):
        target = partitions.get(_column(conjunct.this))
        values = [_constant(v) for v in conjunct.expressions]
        if target and all(v is not None for v in values):
            return [(*target, "in", tuple(values))]
        return []
    if isinstance(conjunct, exp.Between):
        target = partitions.get(_column(conjunct.this))
        low, high = _constant(conjunct.args["low"]), _constant(conjunct.args["high"])
        if target and low is not None and high is not None:
            return [(*target, ">=", (low,)), (*target, "<=", (high,))]
        return []
    operator = _COMPARISONS.get(type(conjunct))
    if operator is None:
        return []
    for this, other, op in (
        (conjunct.this, conjunct.expression, operator),
        (conjunct.expression, conjunct.this, _FLIPPED[operator]),
    ):
        target, value = partitions.get(_column(this)), _constant(other)
        if target and value is not None:
            return [(*target, op, (value,))]
    return []


def _column(expression: exp.Expression) -> str | None:
    return expression.name if isinstance(expression, exp.Column) else None


def _constant(expression: exp.Expression) -> str | None:
    """A literal (or a literal cast to a date) as text, else None."""
    if isinstance(expression, (exp.Cast, exp.TryCast)) and isinstance(expression.this, exp.Literal):
        text = expression.this.this
        if expression.to.is_type("date"):
            try:
                return datetime.date.fromisoformat(text).isoformat()
            except ValueError:
                return None
        return text
    if isinstance(expression, exp.Literal):
        return expression.this
    return None


def _unique(stage: Stage, taken: set[str]) -> str:
    base = stage.kind + (f" {stage.detail}" if stage.detail else "")
    if len(base) > _NAME_LENGTH:
        base = base[: _NAME_LENGTH - 3] + "..."
    name, n = base, 2
    while name in taken or name == "result":
        name, n = f"{base} #{n}", n + 1
    taken.add(name)
    return name
