"""The logical plan cut into stages at its exchanges: each stage becomes one vertex.

An exchange goes where rows must meet that are not in one task yet: a hash edge on the keys at
each shuffled join, each aggregation (after its partial half, chained into the producer's task;
the edge marked pre-aggregated, so where that task is one, the final half runs in it too,
``jobmanager.model.chaining``) and each window's PARTITION BY; a broadcast edge sends a join's
small side whole into the stage of the other side, or a scalar subquery's row into the stage
that reads it; one task (parallelism 1) takes a global aggregate and the final step of a top-N.
The query's final ORDER BY (without LIMIT) goes through a range edge into a sort stage whose
parallelism the JobManager decides from the bytes, each task sorting one key range, so the
result's part files read in name order give the global order
(``jobmanager.core.scheduler.adaptive.ranges``; that edge, out of an aggregate's stage, is
marked pre-aggregated, so the sort of a one-task aggregate's groups runs in that task), or,
ordered by an aggregate's group keys, into the aggregate's stage itself; an ORDER BY anything
reads after (a subquery's) keeps to one task, as its order must survive. No exchange goes where
the rows already sit right: a join on the keys the stage is hashed on joins there, an aggregate
by keys the stage is hashed on (or in one task) aggregates there.

Every other boundary between pieces is a FORWARD edge (a partial aggregate, a top-N per task,
the sink), so chaining runs each piece in its producer's task as one Spark query
(``jobmanager.model.chaining``). A stage read by two consumers (a CTE used twice) is one
vertex with an edge to each.

Join strategy is decided here, statically, as Spark's planner decides it from statistics: a
side whose listed bytes are at most ``table.optimizer.join.broadcast-threshold`` is broadcast
where the join's kind allows it (the right side of inner, left outer, semi and anti joins, the
left of inner and right outer ones); otherwise both sides are hashed on the join keys, and the
inputs a skewed key may be cut across tasks are marked ``splittable`` (inner: both; left, semi,
anti: the left; right: the right; full: none), unless something after the join in the same
stage relies on its partitioning (``graph`` clears them: strategy ``auto``, FLIP-475's skip);
under ``forced`` nothing after such a join relies on it, as its rows count as spread anyhow,
so an aggregate, a window or a join on its keys gets a hash exchange (a stage) of its own.
A join without equality keys broadcasts its smaller side. A broadcast side that only reads a
table (filtered and projected) listed at most ``table.optimizer.join.read-whole-threshold`` is
no stage of its own: the other side's stage's tasks read it whole, where that stage reads a
table or may (``whole_reads``). A semi or anti join's right side whose keys repeat goes as its
distinct keys, broadcast or hashed (``semi_keys``).
The listing is an estimate: ``joinmarks`` marks each shuffled join's two edges so the
JobManager may still broadcast a side its real bytes show small (FLIP-470), and under
``table.optimizer.adaptive-broadcast-join.strategy`` RUNTIME_ONLY the planner is given no
threshold, so it broadcasts no equi-join itself (NONE: no marks).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlglot import exp

from jobmanager.model.jobgraph import Partitioner
from jobmanager.planner.aggregates import split_aggregate
from jobmanager.planner.distribution import (
    cast,
    co_partitioned,
    final_sort,
    group_ids,
    hash_type,
    range_keys,
    satisfied,
    sorts_where_grouped,
    through_projection,
)  # fmt: skip
from jobmanager.planner.expressions import type_of
from jobmanager.planner.joins import equi_keys, estimate_bytes
from jobmanager.planner.logical import (
    Aggregate,
    Expand,
    Filter,
    IdAllocator,
    Join,
    Limit,
    Node,
    OneRow,
    Project,
    Scan,
    SetOp,
    Sort,
    Values,
    SubqueryColumn,
    WholeQuery,
    Window,
    col,
)  # fmt: skip
from jobmanager.planner.pushdown import parent_counts
from jobmanager.planner.semi_keys import distinct_keys, kept_keys_only
from jobmanager.planner.stages import Input, Source, Stage, StageEdge
from jobmanager.planner.whole_reads import may_read_whole, read_whole, tiny_read

__all__ = ["Input", "Source", "Stage", "StageEdge", "cut_into_stages"]

_BROADCAST_LEFT = ("inner", "cross", "right")
_BROADCAST_RIGHT = ("inner", "cross", "left", "semi", "anti")
_SPLITTABLE = {"inner": (True, True), "left": (True, False), "semi": (True, False),
               "anti": (True, False), "right": (False, True), "full": (False, False)}  # fmt: skip


@dataclass
class _Open:
    """A stage still being built: its tree so far and how its rows are partitioned
    (``("any",)``, ``("single",)`` or ``("hash", ids)``). ``shared``: the stage is done (two
    consumers read it) and an operator on it starts a stage of its own."""

    stage: Stage
    tree: Node
    distribution: tuple = ("any",)
    shared: bool = False


def cut_into_stages(root: Node, threshold: int, ids: IdAllocator, skew: str = "auto",
                    read_whole: int = -1) -> Stage:  # fmt: skip
    """The stages of ``root``; returns the last one (the query's result). ``skew``: the
    skewed join strategy (none, auto, forced); forced leaves a join hashed in its own stage,
    since a cut skewed key spreads the join's output over tasks, and the operators after it
    that would use that hashing exchange the rows again. ``read_whole``: the most listed bytes
    of a broadcast side that the other side's tasks read themselves (-1: none)."""
    cutter = _Cutter(parent_counts(root), threshold, ids, final_sort(root), skew == "forced",
                     read_whole)  # fmt: skip
    opened = cutter.cont(cutter.build(root))
    return cutter.close(opened)


class _Cutter:
    def __init__(self, parents: dict[int, int], threshold: int, ids: IdAllocator,
                 final_sort: int | None = None, forced_skew: bool = False,
                 read_whole: int = -1) -> None:  # fmt: skip
        self.parents = parents
        self.read_whole = read_whole
        self.threshold = threshold
        self.ids = ids
        self.final_sort = final_sort
        self.forced_skew = forced_skew
        self.sizes: dict[int, int] = {}
        self.shared: dict[int, _Open] = {}

    # -- opening, continuing and closing stages -------------------------------------------------

    def build(self, node: Node) -> _Open:
        if self.parents.get(id(node), 0) <= 1:
            return self._build(node)
        if id(node) not in self.shared:
            opened = self._build(node)
            self.shared[id(node)] = _Open(self.close(opened), opened.tree, opened.distribution,
                                          shared=True)  # fmt: skip
        return self.shared[id(node)]

    def close(self, opened: _Open) -> Stage:
        if opened.shared:
            return opened.stage
        opened.stage.tree = opened.tree
        return opened.stage

    def exchange(self, opened: _Open, partitioner: Partitioner) -> StageEdge:
        return StageEdge(self.close(opened), partitioner)

    def cont(self, opened: _Open, reading: str = "") -> _Open:
        """A stage the next operator may add to: ``opened`` itself, unless it is shared; then a
        stage reading it through a FORWARD edge (``reading``: what the query calls it)."""
        if not opened.shared:
            return opened
        stage = Stage("read", opened.stage.origin, detail=reading)
        leaf = stage.input(StageEdge(opened.stage, Partitioner.FORWARD))
        return _Open(stage, leaf)

    def fresh(self, kind: str, origin: str, edges: list[StageEdge], parallelism: int | None = None
              ) -> tuple[Stage, list[Input]]:  # fmt: skip
        stage = Stage(kind, origin, parallelism=parallelism)
        return stage, [stage.input(edge) for edge in edges]

    # -- operators ------------------------------------------------------------------------------

    def _build(self, node: Node) -> _Open:
        if isinstance(node, Scan):
            stage = Stage("scan", node.origin, detail=node.table.name if node.alias.lower() ==
                          node.table.name.lower() else f"{node.table.name} {node.alias}")
            return _Open(stage, stage.source(node))
        if isinstance(node, (OneRow, Values)):
            stage = Stage("values", node.origin, parallelism=1)
            return _Open(stage, node, ("single",))
        if isinstance(node, (Filter, Expand)):
            opened = self.cont(self.build(node.child))
            opened.tree = replace(node, child=opened.tree)
            return opened
        if isinstance(node, Project):
            reading = node.origin[len("FROM "):] if node.origin.startswith("FROM ") else ""
            opened = self.cont(self.build(node.child), reading)
            opened.tree = replace(node, child=opened.tree)
            opened.distribution = through_projection(opened.distribution, node)
            return opened
        if isinstance(node, Join):
            return self._join(node)
        if isinstance(node, Aggregate):
            return self._aggregate(node)
        if isinstance(node, Window):
            return self._window(node)
        if isinstance(node, (Sort, Limit)):
            return self._ordered(node)
        if isinstance(node, SetOp):
            return self._set_operation(node)
        if isinstance(node, WholeQuery):
            return self._whole(node)
        if isinstance(node, SubqueryColumn):
            return self._subquery_column(node)
        raise TypeError(f"no stage for {type(node).__name__}")

    def _size(self, node: Node) -> int:
        return estimate_bytes(node, self.sizes)

    def _small(self, node: Node) -> bool:
        return self.threshold >= 0 and self._size(node) <= self.threshold

    def _join(self, node: Join) -> _Open:
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
        if right_ok and right_small and (not (left_ok and left_small) or
                                         self._size(node.right) <= self._size(node.left)):
            return self._broadcast(node, right=True)
        if left_ok and left_small:
            return self._broadcast(node, right=False)
        return self._hash_join(node, keys)

    def _broadcast(self, node: Join, right: bool) -> _Open:
        """The join in the stage of its big side, the small side sent whole into it; or, when
        the small side is a read of a tiny table, read whole by each of that stage's tasks
        where it may (``whole_reads``)."""
        big, small = (node.left, node.right) if right else (node.right, node.left)
        opened = self.cont(self.build(big))
        if node.kind != "single" and may_read_whole(opened.stage) and \
                tiny_read(small, self.parents, self.read_whole):  # fmt: skip
            leaf = read_whole(small, opened.stage)
        else:
            built = self.build(small)
            if right and node.kind in ("semi", "anti") and not built.shared:
                built.tree = distinct_keys(node, built.tree)
            leaf = opened.stage.input(self.exchange(built, Partitioner.BROADCAST))
        pair = (opened.tree, leaf) if right else (leaf, opened.tree)
        opened.tree = replace(node, left=pair[0], right=pair[1])
        opened.stage.hints[id(opened.tree)] = "right" if right else "left"
        opened.stage.origin = _joined(opened.stage.origin, node.origin)
        if node.kind in ("full", "right" if right else "left"):
            opened.distribution = ("any",)
        return opened

    def _in_one_task(self, node: Join) -> _Open:
        edges = [self.exchange(self.build(side), Partitioner.REBALANCE)
                 for side in (node.left, node.right)]  # fmt: skip
        stage, (left, right) = self.fresh("join", node.origin, edges, parallelism=1)
        return _Open(stage, replace(node, left=left, right=right), ("single",))

    def _hash_join(self, node: Join, keys: list[tuple[exp.Expression, exp.Expression]]) -> _Open:
        left, right = self.build(node.left), self.build(node.right)
        if node.kind in ("semi", "anti") and not right.shared:
            right.tree = distinct_keys(node, right.tree)
        left, left_keys, right, right_keys = self._keyed(left, right, keys)
        for into, other, into_keys, other_keys, into_is_left in (
                (left, right, left_keys, right_keys, True),
                (right, left, right_keys, left_keys, False)):  # fmt: skip
            matched = co_partitioned(into.distribution, into_keys, other_keys)
            if matched is not None and not into.shared:
                into.stage.relies_on_partitioning = True
                leaf = into.stage.input(self.exchange(other, Partitioner.hash(*matched)))
                pair = (into.tree, leaf) if into_is_left else (leaf, into.tree)
                right_tree = _kept_keys_only(into.stage, node, *pair)
                into.tree = replace(node, left=pair[0], right=right_tree)
                into.stage.hints[id(into.tree)] = self._build_side(node)
                into.stage.origin = _joined(into.stage.origin, node.origin)
                into.distribution = _after_join(node.kind, into_is_left, into.distribution,
                                                tuple(matched))  # fmt: skip
                return into
        split_left, split_right = _SPLITTABLE.get(node.kind, (False, False))
        edges = [self.exchange(left, Partitioner.hash(*left_keys)),
                 self.exchange(right, Partitioner.hash(*right_keys))]
        edges[0].splittable, edges[1].splittable = split_left, split_right
        stage, (left_leaf, right_leaf) = self.fresh("join", node.origin, edges)
        stage.detail = ", ".join(left_keys)
        distribution = {"right": ("hash", tuple(right_keys)), "full": ("any",)}.get(
            node.kind, ("hash", tuple(left_keys)))
        if self.forced_skew and (split_left or split_right):
            distribution = ("any",)  # a cut key's rows leave the join in several tasks
        right_tree = _kept_keys_only(stage, node, left_leaf, right_leaf)
        tree = replace(node, left=left_leaf, right=right_tree)
        stage.hints[id(tree)] = self._build_side(node)
        return _Open(stage, tree, distribution)

    def _build_side(self, node: Join) -> str:
        """Which input Spark, inside the task, holds in memory to probe with the other: the
        smaller by the estimates, where the join's kind allows."""
        if node.kind in _BROADCAST_RIGHT and (node.kind not in _BROADCAST_LEFT or
                                              self._size(node.right) <= self._size(node.left)):
            return "right"
        if node.kind in _BROADCAST_LEFT:
            return "left"
        return "right" if self._size(node.right) <= self._size(node.left) else "left"

    def _keyed(self, left: _Open, right: _Open, keys) -> tuple[_Open, list[str], _Open, list[str]]:
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

    def _with_columns(self, opened: _Open, exprs: list[exp.Expression]) -> tuple[_Open, list[str]]:
        """``opened`` with a column for each expression that is not one already."""
        if all(isinstance(e, exp.Column) for e in exprs):
            return opened, [e.name for e in exprs]
        opened = self.cont(opened)
        types = opened.tree.typer()
        names, added = [], []
        for expression in exprs:
            if isinstance(expression, exp.Column):
                names.append(expression.name)
                continue
            key_id = self.ids.new("_k")
            added.append((key_id, expression))
            names.append(key_id)
        tree = opened.tree
        columns = tree.columns + tuple((i, type_of(e, types)) for i, e in added)
        opened.tree = Project(columns, tree.origin, tree,
                              tuple((c, col(c)) for c in tree.ids) + tuple(added))  # fmt: skip
        return opened, names

    def _aggregate(self, node: Aggregate) -> _Open:
        opened = self.build(node.child)
        group_columns = [e.name for _, e in node.groups if isinstance(e, exp.Column)]
        if satisfied(opened.distribution, group_columns, len(node.groups)):
            opened = self.cont(opened)
            opened.stage.relies_on_partitioning |= opened.distribution[0] == "hash"
            opened.tree = replace(node, child=opened.tree)
            if opened.distribution[0] == "hash":
                opened.distribution = ("hash", group_ids(node, opened.distribution[1]))
            opened.stage.origin = _joined(opened.stage.origin, node.origin)
            return opened
        single = not node.groups
        split = split_aggregate(node, self.ids)
        if split is not None:
            partial, (leaf,) = self.fresh("partial aggregate", node.origin,
                                          [self.exchange(opened, Partitioner.FORWARD)])
            partial.tree = Aggregate(split.columns, node.origin, leaf, split.groups, split.states)
            partitioner = Partitioner.REBALANCE if single else Partitioner.hash(*split.keys)
            final, (leaf,) = self.fresh("aggregate", node.origin,
                                        [StageEdge(partial, partitioner, pre_aggregated=True)],
                                        1 if single else None)  # fmt: skip
            tree = split.final(leaf)
        else:
            opened, keys = self._with_columns(opened, [e for _, e in node.groups])
            partitioner = Partitioner.REBALANCE if single else Partitioner.hash(*keys)
            final, (leaf,) = self.fresh("aggregate", node.origin,
                                        [self.exchange(opened, partitioner)], 1 if single else None)
            groups = tuple((g, col(k)) for (g, _), k in zip(node.groups, keys))
            tree = replace(node, child=leaf, groups=groups)
        final.detail = ", ".join(g for g, _ in node.groups)
        distribution = ("single",) if single else ("hash", tuple(g for g, _ in node.groups))
        return _Open(final, tree, distribution)

    def _window(self, node: Window) -> _Open:
        opened = self.build(node.child)
        if satisfied(opened.distribution, list(node.partition), len(node.partition)):
            opened = self.cont(opened)
            opened.stage.relies_on_partitioning |= opened.distribution[0] == "hash"
        else:
            single = not node.partition
            partitioner = Partitioner.REBALANCE if single else Partitioner.hash(*node.partition)
            stage, (leaf,) = self.fresh("window", node.origin, [self.exchange(opened, partitioner)],
                                        1 if single else None)  # fmt: skip
            stage.detail = ", ".join(node.partition)
            opened = _Open(stage, leaf, ("single",) if single else ("hash", node.partition))
        opened.tree = replace(node, child=opened.tree)
        return opened

    def _ordered(self, node: Sort | Limit) -> _Open:
        opened = self.build(node.child)
        if opened.distribution[0] == "single":
            opened = self.cont(opened)
            opened.tree = replace(node, child=opened.tree)
            return opened
        if id(node) == self.final_sort:
            keys = range_keys(node, opened.tree.ids)
            if keys is not None and not opened.shared and \
                    sorts_where_grouped(opened.stage, opened.distribution, keys):  # fmt: skip
                opened.tree = replace(node, child=opened.tree)
                opened.stage.origin = _joined(opened.stage.origin, node.origin)
                return _Open(opened.stage, opened.tree, ("any",))
            if keys is not None:
                edge = self.exchange(opened, Partitioner.range(*keys))
                edge.pre_aggregated = _aggregates_what_it_reads(opened.tree)
                stage, (leaf,) = self.fresh("sort", node.origin, [edge])
                return _Open(stage, replace(node, child=leaf), ("any",))
        edge_from = opened
        if node.limit is not None:
            local, (leaf,) = self.fresh("top-n per task" if isinstance(node, Sort) else
                                        "limit per task", node.origin,
                                        [self.exchange(opened, Partitioner.FORWARD)])  # fmt: skip
            local.tree = replace(node, child=leaf, limit=node.limit + node.offset, offset=0)
            local.detail = str(node.limit)
            edge_from = _Open(local, local.tree)
        kind = "sort" if node.limit is None else "top-n" if isinstance(node, Sort) else "limit"
        stage, (leaf,) = self.fresh(kind, node.origin,
                                    [self.exchange(edge_from, Partitioner.REBALANCE)], 1)
        stage.detail = "" if node.limit is None else str(node.limit)
        return _Open(stage, replace(node, child=leaf), ("single",))

    def _set_operation(self, node: SetOp) -> _Open:
        """Equal rows meet in one task: hashed on the columns whose values hash alike on
        every side (any subset of the columns will do), or all in one task if none does."""
        keyed = node.kind != "union" or node.distinct
        alike = [i for i in range(len(node.columns)) if _hash_alike(node.inputs, i)]
        if keyed and not alike:
            edges = [self.exchange(self.build(c), Partitioner.REBALANCE) for c in node.inputs]
            stage, leaves = self.fresh(node.kind + ("" if node.distinct else " all"),
                                       node.origin, edges, 1)  # fmt: skip
            return _Open(stage, replace(node, inputs=tuple(leaves)), ("single",))
        edges = [self.exchange(self.build(child), Partitioner.hash(*[child.ids[i] for i in alike])
                               if keyed else Partitioner.REBALANCE)
                 for child in node.inputs]  # fmt: skip
        kind = node.kind + ("" if node.distinct else " all")
        stage, leaves = self.fresh(kind, node.origin, edges)
        distribution = ("hash", tuple(node.ids[i] for i in alike)) if keyed else ("any",)
        return _Open(stage, replace(node, inputs=tuple(leaves)), distribution)


    def _subquery_column(self, node: SubqueryColumn) -> _Open:
        """The subquery evaluated in the stage of the rows it is evaluated for, its tables
        sent whole into each task."""
        opened = self.cont(self.build(node.child))
        leaves = tuple(opened.stage.input(self.exchange(self.build(i), Partitioner.BROADCAST))
                       for i in node.inputs)  # fmt: skip
        opened.tree = replace(node, child=opened.tree, inputs=leaves)
        opened.stage.origin = _joined(opened.stage.origin, node.origin)
        return opened

    def _whole(self, node: WholeQuery) -> _Open:
        """One task running the query whole: it reads each table itself, whole, and every
        other input through an edge that brings all its rows into that task."""
        stage = Stage("whole", node.origin, parallelism=1)
        leaves = []
        for child in node.inputs:
            if isinstance(child, Scan) and self.parents.get(id(child), 0) <= 1:
                leaves.append(stage.source(child, whole=True))
            else:
                leaves.append(stage.input(self.exchange(self.build(child), Partitioner.REBALANCE)))
        return _Open(stage, replace(node, inputs=tuple(leaves)), ("single",))


def _hash_alike(inputs: tuple[Node, ...], index: int) -> bool:
    """Whether column ``index`` of every input hashes equal values alike: its types known and
    needing no cast between them (``hash_type``)."""
    kinds = [child.columns[index][1] for child in inputs]
    return all(k.is_known for k in kinds) and all(
        hash_type(kinds[0], k) is None for k in kinds[1:])


def _aggregates_what_it_reads(tree: Node) -> bool:
    """Whether a stage's rows are its aggregate's, over what its one input sent (filtered,
    projected or windowed, none of which adds rows): at most a row per group of what the stage
    read, so an edge out of it may be marked pre-aggregated as the partial aggregate's is."""
    while isinstance(tree, (Project, Filter)):
        tree = tree.child
    if not isinstance(tree, Aggregate):
        return False
    tree = tree.child
    while isinstance(tree, (Project, Filter, Window)):
        tree = tree.child
    return isinstance(tree, Input)


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


def _joined(first: str, second: str) -> str:
    return f"{first}; {second}" if first else second


def _kept_keys_only(stage: Stage, join: Join, left: Node, right: Node) -> Node:
    """``right`` as the join's tasks build it: cut to ``left``'s keys where the join compares
    more than its keys (``semi_keys.kept_keys_only``), the keys broadcast within the task."""
    cut = kept_keys_only(join, left, right)
    if cut is None:
        return right
    stage.hints[id(cut)] = "right"
    return cut
