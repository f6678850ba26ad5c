"""The right side of a semi or anti join sent as its distinct keys.

A semi or anti join asks only whether the other side has a row with the key: its right side,
reduced to the key columns once each per task of its stage, gives every task of the join the
same answer from a smaller table, whether it is broadcast or hashed on the keys. Per task, not
overall: a key two tasks both hold comes twice, which changes nothing, and the stage needs no
exchange of its own. TPC-H q22 at scale 10: the NOT EXISTS over 15 million orders, hashed, is
a million customer keys written and built on, not 15 million rows.

Where the join also compares other columns (TPC-H q21's ``l2.l_suppkey <> l1.l_suppkey``) the
right side keeps its rows, and each task builds its table from all of them. Each task then
first keeps only the right rows whose keys its left side holds: a row with another key meets
no left row in that task, however the join's inputs were split. At scale 10 q21's kept side
is a million and a half late lines of one nation's suppliers, its looked-up sides 60 and 38
million lines.
"""

from __future__ import annotations

from sqlglot import exp

from jobmanager.planner.rules.joins import equi_keys, repeats
from jobmanager.planner.logical import Aggregate, Filter, Join, Node, Project, col, conjoin

__all__ = ["distinct_keys", "kept_keys_only"]


def distinct_keys(join: Join, tree: Node) -> Node:
    """``tree``, the right side of a semi or anti join on equalities alone, as its key
    columns once each per task, where every key repeats by the files' statistics: only
    whether a key is there matters, and each of the other side's tasks builds its table from
    the distinct keys (TPC-H q22: a million and a half orders, a hundred thousand customers)."""
    keys, rest = equi_keys(join.condition, set(join.left.ids), set(join.right.ids))
    if (
        rest
        or not keys
        or not all(isinstance(b, exp.Column) and repeats(join.right, b) for _, b in keys)
    ):
        return tree
    ids = list(dict.fromkeys(b.name for _, b in keys))
    return Aggregate(
        tuple((i, tree.type_of(i)) for i in ids),
        join.origin,
        tree,
        tuple((i, col(i)) for i in ids),
        (),
    )


def kept_keys_only(join: Join, left: Node, right: Node) -> Join | None:
    """``right``, the right side of a semi or anti join (in one task) that compares more than
    its equal keys, semi-joined with the key columns of ``left``; None where the join has no
    such condition or a key is not a column. The keys come from below ``left``'s own semi and
    anti joins and filters, which only drop rows, so a task reads them without recomputing
    those (q21: the NOT EXISTS takes its keys from the late lines, not from the EXISTS)."""
    keys, rest = equi_keys(join.condition, set(join.left.ids), set(join.right.ids))
    if (
        join.kind not in ("semi", "anti")
        or not keys
        or not rest
        or not all(isinstance(a, exp.Column) and isinstance(b, exp.Column) for a, b in keys)
    ):
        return None
    names = list(dict.fromkeys(a.name for a, _ in keys))
    source = left
    while isinstance(source, (Filter, Join)) and (
        isinstance(source, Filter) or source.kind in ("semi", "anti")
    ):
        source = source.children[0]
    if not set(names) <= set(source.ids):
        return None
    kept = Project(
        tuple((i, source.type_of(i)) for i in names),
        join.origin,
        source,
        tuple((i, col(i)) for i in names),
    )
    condition = conjoin(exp.EQ(this=b.copy(), expression=a.copy()) for a, b in keys)
    return Join(right.columns, join.origin, right, kept, "semi", condition)
