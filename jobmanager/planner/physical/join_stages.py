"""How the stage cutter (``physical``) places a join: in the stage of its big side with the
small side broadcast into it (or read whole by that stage's tasks), hashed into the stage of a
side already partitioned on its keys, in a join stage of its own fed by two hash edges, or, with
no equality keys and no side it may broadcast, in one task."""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from jobmanager.model.jobgraph import Partitioner
from jobmanager.planner.expressions import type_of
from jobmanager.planner.rules.joins import equi_keys
from jobmanager.planner.logical import Join, Node
from jobmanager.planner.physical.distribution import cast, co_partitioned, hash_type
from jobmanager.planner.physical.semi_keys import distinct_keys, kept_keys_only
from jobmanager.planner.physical.stages import OpenStage, Stage, joined_origin
from jobmanager.planner.physical.whole_reads import may_read_whole, read_whole, tiny_read

__all__ = ["JoinStages"]

_BROADCAST_LEFT = ("inner", "cross", "right")
_BROADCAST_RIGHT = ("inner", "cross", "left", "semi", "anti")
_SPLITTABLE = {
    "inner": (True, True),
    "left": (True, False),
    "semi": (True, False),
    "anti": (True, False),
    "right": (False, True),
    "full": (False, False),
}


class JoinStages:
    """The join half of the stage cutter: a mixin of ``physical._Cutter``, whose ``build``,
    ``cont``, ``exchange``, ``fresh``, ``_size``, ``_small`` and ``_with_columns`` it uses."""

    def visit_Join(self, node: Join) -> OpenStage:
        if node.kind == "single":
            return self._broadcast(node, right=True)
        keys, _ = equi_keys(node.condition, set(node.left.ids), set(node.right.ids))
        left_small, right_small = self._small(node.left), self._small(node.right)
        right_ok, left_ok = node.kind in _BROADCAST_RIGHT, node.kind in _BROADCAST_LEFT
        if not keys:
            if right_ok and (not left_ok or self._size(node.right) <= self._size(node.left)):
                return self._broadcast(node, right=True)
            if left_ok:
                return self._broadcast(node, right=False)
            return self._in_one_task(node)
        if (
            right_ok
            and right_small
            and (not (left_ok and left_small) or self._size(node.right) <= self._size(node.left))
        ):
            return self._broadcast(node, right=True)
        if left_ok and left_small:
            return self._broadcast(node, right=False)
        return self._hash_join(node, keys)

    def _broadcast(self, node: Join, right: bool) -> OpenStage:
        """The join in the stage of its big side, the small side sent whole into it; or, when
        the small side is a read of a tiny table, read whole by each of that stage's tasks
        where it may (``whole_reads``)."""
        big, small = (node.left, node.right) if right else (node.right, node.left)
        opened = self.cont(self.build(big))
        if (
            node.kind != "single"
            and may_read_whole(opened.stage)
            and tiny_read(small, self.parents, self.read_whole)
        ):
            leaf = read_whole(small, opened.stage)
        else:
            built = self.build(small)
            if right and node.kind in ("semi", "anti") and not built.shared:
                built.tree = distinct_keys(node, built.tree)
            leaf = opened.stage.input(self.exchange(built, Partitioner.BROADCAST))
        pair = (opened.tree, leaf) if right else (leaf, opened.tree)
        opened.tree = replace(node, left=pair[0], right=pair[1])
        opened.stage.hints[id(opened.tree)] = "right" if right else "left"
        opened.stage.origin = joined_origin(opened.stage.origin, node.origin)
        if node.kind in ("full", "right" if right else "left"):
            opened.distribution = ("any",)
        return opened

    def _in_one_task(self, node: Join) -> OpenStage:
        edges = [
            self.exchange(self.build(side), Partitioner.REBALANCE)
            for side in (node.left, node.right)
        ]
        stage, (left, right) = self.fresh("join", node.origin, edges, parallelism=1)
        return OpenStage(stage, replace(node, left=left, right=right), ("single",))

    def _hash_join(
        self, node: Join, keys: list[tuple[exp.Expression, exp.Expression]]
    ) -> OpenStage:
        left, right = self.build(node.left), self.build(node.right)
        if node.kind in ("semi", "anti") and not right.shared:
            right.tree = distinct_keys(node, right.tree)
        left, left_keys, right, right_keys = self._keyed(left, right, keys)
        for into, other, into_keys, other_keys, into_is_left in (
            (left, right, left_keys, right_keys, True),
            (right, left, right_keys, left_keys, False),
        ):
            matched = co_partitioned(into.distribution, into_keys, other_keys)
            if matched is not None and not into.shared:
                into.stage.relies_on_partitioning = True
                leaf = into.stage.input(self.exchange(other, Partitioner.hash(*matched)))
                pair = (into.tree, leaf) if into_is_left else (leaf, into.tree)
                right_tree = _kept_keys_only(into.stage, node, *pair)
                into.tree = replace(node, left=pair[0], right=right_tree)
                into.stage.hints[id(into.tree)] = self._build_side(node)
                into.stage.origin = joined_origin(into.stage.origin, node.origin)
                into.distribution = _after_join(
                    node.kind, into_is_left, into.distribution, tuple(matched)
                )
                return into
        split_left, split_right = _SPLITTABLE.get(node.kind, (False, False))
        edges = [
            self.exchange(left, Partitioner.hash(*left_keys)),
            self.exchange(right, Partitioner.hash(*right_keys)),
        ]
        edges[0].splittable, edges[1].splittable = split_left, split_right
        stage, (left_leaf, right_leaf) = self.fresh("join", node.origin, edges)
        stage.detail = ", ".join(left_keys)
        distribution = {"right": ("hash", tuple(right_keys)), "full": ("any",)}.get(
            node.kind, ("hash", tuple(left_keys))
        )
        if self.forced_skew and (split_left or split_right):
            distribution = ("any",)  # a cut key's rows leave the join in several tasks
        right_tree = _kept_keys_only(stage, node, left_leaf, right_leaf)
        tree = replace(node, left=left_leaf, right=right_tree)
        stage.hints[id(tree)] = self._build_side(node)
        return OpenStage(stage, tree, distribution)

    def _build_side(self, node: Join) -> str:
        """Which input Spark, inside the task, holds in memory to probe with the other: the
        smaller by the estimates, where the join's kind allows."""
        if node.kind in _BROADCAST_RIGHT and (
            node.kind not in _BROADCAST_LEFT or self._size(node.right) <= self._size(node.left)
        ):
            return "right"
        if node.kind in _BROADCAST_LEFT:
            return "left"
        return "right" if self._size(node.right) <= self._size(node.left) else "left"

    def _keyed(
        self, left: OpenStage, right: OpenStage, keys
    ) -> tuple[OpenStage, list[str], OpenStage, list[str]]:
        """Both sides with a column per join key, of one type on both sides: the hash edges
        hash columns, and equal values must hash alike (a decimal by its stored bytes)."""
        left_types = left.tree.typer()
        right_types = right.tree.typer()
        left_exprs, right_exprs = [], []
        for a, b in keys:
            ta, tb = type_of(a, left_types), type_of(b, right_types)
            common = hash_type(ta, tb)
            left_exprs.append(a if common is None else cast(a, common))
            right_exprs.append(b if common is None else cast(b, common))
        left, left_keys = self._with_columns(left, left_exprs)
        right, right_keys = self._with_columns(right, right_exprs)
        return left, left_keys, right, right_keys


def _after_join(kind: str, into_is_left: bool, into: tuple, other: tuple[str, ...]) -> tuple:
    """How a join's rows are spread when one side was hashed into the tasks of the other,
    ``into`` (hashed on some of its keys), ``other`` the other side's matching keys: every row
    lies where its preserved side's keys hash to (both sides' for an inner join, whose keys are
    equal), so by those columns; a row an outer join keeps unmatched has NULLs on the other
    side, so the other side's keys say nothing of where it is. A semi or anti join hashed into
    its looked-up side's tasks is taken as spread anyhow: the next join on its keys stays a
    stage of its own, which the JobManager may turn into a broadcast once it sees the few rows
    the semi join kept (TPC-H q18: 57 orders against 6 M lines), rather than hashing both into
    this one."""
    if kind == "full" or (kind in ("semi", "anti") and not into_is_left):
        return ("any",)
    preserved_is_left = kind != "right"
    if kind == "inner" or preserved_is_left == into_is_left:
        return into
    return ("hash", other)


def _kept_keys_only(stage: Stage, join: Join, left: Node, right: Node) -> Node:
    """``right`` as the join's tasks build it: cut to ``left``'s keys where the join compares
    more than its keys (``semi_keys.kept_keys_only``), the keys broadcast within the task."""
    cut = kept_keys_only(join, left, right)
    if cut is None:
        return right
    stage.hints[id(cut)] = "right"
    return cut
