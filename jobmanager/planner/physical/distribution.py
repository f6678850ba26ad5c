"""How a stage's rows are spread over its tasks, and what that spares the next operator.

A stage's distribution is ``("any",)`` (rows anywhere: a scan's splits, a rebalance),
``("single",)`` (one task) or ``("hash", ids)`` (rows agreeing on those columns in one task:
after a hash edge, a join or an aggregate on them). An aggregate, a window or a join whose
keys include a stage's hash columns needs no exchange of its own; a join key pair whose types
hash differently (a decimal of another scale, an integer against a double) is cast to one type
first on both sides, since equal values must land in the same task. The query's final ORDER
BY is cut by key ranges (a range edge) when its keys are columns of the rows it sorts; by an
aggregate's input's ranges when they are its group keys.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from jobmanager.model.jobgraph import Partitioner, PartitionerKind, SortKey
from jobmanager.planner.logical import Aggregate, Node, Project, Sort
from jobmanager.planner.physical.stages import Stage
from jobmanager.planner.types import SqlType, wider

__all__ = [
    "cast",
    "co_partitioned",
    "final_sort",
    "group_ids",
    "hash_type",
    "range_keys",
    "satisfied",
    "sorts_where_grouped",
    "through_projection",
]


def through_projection(distribution: tuple, node: Project) -> tuple:
    if distribution[0] != "hash":
        return distribution
    renamed = {e.name: i for i, e in node.exprs if isinstance(e, exp.Column)}
    if all(key in renamed for key in distribution[1]):
        return ("hash", tuple(renamed[key] for key in distribution[1]))
    return ("any",)


def satisfied(distribution: tuple, columns: list[str], wanted: int) -> bool:
    """Whether rows agreeing on ``columns`` are already in one task, under ``distribution``
    (``wanted``: how many keys the operator has; none can only be one task)."""
    kind = distribution[0]
    if kind == "single":
        return True
    return kind == "hash" and wanted > 0 and set(distribution[1]) <= set(columns)


def co_partitioned(
    distribution: tuple, into_keys: list[str], other_keys: list[str]
) -> list[str] | None:
    """When a side is hashed (``distribution``) on some of its join keys ``into_keys``: the
    other side's keys to hash on, so its rows reach the tasks holding their matches; else
    None."""
    if distribution[0] != "hash":
        return None
    partition = distribution[1]
    if not partition or not set(partition) <= set(into_keys):
        return None
    position = {key: index for index, key in enumerate(into_keys)}
    return [other_keys[position[key]] for key in partition]


def group_ids(node: Aggregate, partition: tuple[str, ...]) -> tuple[str, ...]:
    by_column = {e.name: g for g, e in node.groups if isinstance(e, exp.Column)}
    return tuple(by_column[key] for key in partition)


def hash_type(a: SqlType, b: SqlType) -> SqlType | None:
    """The type both keys are cast to before hashing, or None when they hash alike as they
    are (integers of any width, or the same type). Where the planner cannot tell one side's
    type (a function its typer does not know), equal values must still hash alike whatever
    that type is: both go as a double when the other is a number (equal numbers are equal
    doubles; unequal ones that meet only share a task), else as the other's type."""
    if not (a.is_known and b.is_known):
        known = a if a.is_known else b if b.is_known else None
        if known is None:
            return None
        return SqlType("double") if known.is_numeric else known
    if a == b or (a.is_integral and b.is_integral):
        return None
    if a.is_decimal and b.is_decimal and a.scale == b.scale:
        return None
    return wider(a, b)


def cast(expression: exp.Expression, kind: SqlType) -> exp.Expression:
    return exp.Cast(this=expression.copy(), to=exp.DataType.build(str(kind), dialect="spark"))


def final_sort(root: Node) -> int | None:
    """The id of the ORDER BY (without LIMIT or OFFSET) whose order is the result's: the root,
    or under the root's projection (dropping a column only the order needed)."""
    node = root.child if isinstance(root, Project) else root
    if isinstance(node, Sort) and node.limit is None and not node.offset:
        return id(node)
    return None


def range_keys(node: Sort, columns: list[str]) -> tuple[SortKey, ...] | None:
    """The sort keys as a range edge takes them: columns of the producer's rows, or None."""
    keys = []
    for ordered in node.keys:
        key = ordered.this
        if not isinstance(key, exp.Column) or key.table or key.name not in columns:
            return None
        keys.append(
            SortKey(key.name, bool(ordered.args.get("desc")), bool(ordered.args.get("nulls_first")))
        )
    return tuple(keys)


def sorts_where_grouped(stage: Stage, distribution: tuple, keys: tuple[SortKey, ...]) -> bool:
    """Whether the final ORDER BY can sort in the aggregate's stage below it, and if so make
    that stage's one input a range edge on those keys instead of a hash edge: when the keys
    are the group keys (in any order and direction), the rows of a group agree on them, so
    cutting by their ranges keeps each group in one task as hashing did, a bound may fall
    between any two groups as a hash may, and each task's groups, sorted, are one range of the
    result. The aggregate's tasks then write the result themselves, one vertex and its tasks
    fewer (TPC-H's q1, q4, q7, q8, q9, q12, q22). Ordered by only some of the group keys, the
    groups agreeing on those would all go to one task, however many: not done."""
    if (
        stage.kind != "aggregate"
        or stage.sources
        or len(stage.inputs) != 1
        or distribution[0] != "hash"
    ):
        return False
    edge = stage.inputs[0]
    if edge.partitioner.kind is not PartitionerKind.HASH or len(edge.partitioner.keys) != len(
        distribution[1]
    ):
        return False
    by_output = dict(zip(distribution[1], edge.partitioner.keys))
    if {key.column for key in keys} != set(by_output):
        return False
    edge.partitioner = Partitioner.range(*(replace(k, column=by_output[k.column]) for k in keys))
    return True
