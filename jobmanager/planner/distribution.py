"""How a stage's rows are spread over its tasks, and what that spares the next operator.

A stage's distribution is ``("any",)`` (rows anywhere: a scan's splits, a rebalance),
``("single",)`` (one task) or ``("hash", ids)`` (rows agreeing on those columns in one task:
after a hash edge, a join or an aggregate on them). An aggregate, a window or a join whose
keys include a stage's hash columns needs no exchange of its own; a join key pair whose types
hash differently (a decimal of another scale, an integer against a double) is cast to one type
first on both sides, since equal values must land in the same task.
"""

from __future__ import annotations

from sqlglot import exp

from jobmanager.planner.logical import Aggregate, Project
from jobmanager.planner.types import SqlType, wider

__all__ = ["cast", "co_partitioned", "group_ids", "hash_type", "satisfied", "through_projection"]


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


def co_partitioned(distribution: tuple, into_keys: list[str], other_keys: list[str]
                   ) -> list[str] | None:  # fmt: skip
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
    are (integers of any width, or the same type)."""
    if a == b or (a.is_integral and b.is_integral) or not (a.is_known and b.is_known):
        return None
    if a.is_decimal and b.is_decimal and a.scale == b.scale:
        return None
    return wider(a, b)


def cast(expression: exp.Expression, kind: SqlType) -> exp.Expression:
    return exp.Cast(this=expression.copy(), to=exp.DataType.build(str(kind), dialect="spark"))
