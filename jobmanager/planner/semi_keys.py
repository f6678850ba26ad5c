"""The right side of a semi or anti join sent as its distinct keys.

A semi or anti join asks only whether the other side has a row with the key: its right side,
reduced to the key columns once each per task of its stage, gives every task of the join the
same answer from a smaller table, whether it is broadcast or hashed on the keys. Per task, not
overall: a key two tasks both hold comes twice, which changes nothing, and the stage needs no
exchange of its own. TPC-H q22 at scale 10: the NOT EXISTS over 15 million orders, hashed, is
a million customer keys written and built on, not 15 million rows.
"""

from __future__ import annotations

from sqlglot import exp

from jobmanager.planner.joins import equi_keys, repeats
from jobmanager.planner.logical import Aggregate, Join, Node, col

__all__ = ["distinct_keys"]


def distinct_keys(join: Join, tree: Node) -> Node:
    """``tree``, the right side of a semi or anti join on equalities alone, as its key
    columns once each per task, where every key repeats by the files' statistics: only
    whether a key is there matters, and each of the other side's tasks builds its table from
    the distinct keys (TPC-H q22: a million and a half orders, a hundred thousand customers)."""
    keys, rest = equi_keys(join.condition, set(join.left.ids), set(join.right.ids))
    if rest or not keys or not all(isinstance(b, exp.Column) and repeats(join.right, b)
                                   for _, b in keys):  # fmt: skip
        return tree
    ids = list(dict.fromkeys(b.name for _, b in keys))
    return Aggregate(tuple((i, tree.type_of(i)) for i in ids), join.origin, tree,
                     tuple((i, col(i)) for i in ids), ())
