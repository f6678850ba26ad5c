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

from dataclasses import replace

from sqlglot import exp

from jobmanager.model.jobgraph import Partitioner
from jobmanager.planner.physical.aggregates import split_aggregate
from jobmanager.planner.physical.distribution import (
    final_sort,
    group_ids,
    hash_type,
    range_keys,
    satisfied,
    sorts_where_grouped,
    through_projection,
)
from jobmanager.planner.expressions import type_of
from jobmanager.planner.rules.joins import estimate_bytes
from jobmanager.planner.logical import (
    Aggregate,
    Expand,
    Filter,
    IdAllocator,
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
)
from jobmanager.planner.rules.pushdown import parent_counts
from jobmanager.planner.visitor import PlanVisitor
from jobmanager.planner.physical.join_stages import JoinStages
from jobmanager.planner.physical.stages import (
    Input,
    OpenStage,
    Source,
    Stage,
    StageEdge,
    joined_origin,
)

__all__ = ["Input", "Source", "Stage", "StageEdge", "cut_into_stages"]


def cut_into_stages(
    root: Node, threshold: int, ids: IdAllocator, skew: str = "auto", read_whole: int = -1
) -> Stage:
    """The stages of ``root``; returns the last one (the query's result). ``skew``: the
    skewed join strategy (none, auto, forced); forced leaves a join hashed in its own stage,
    since a cut skewed key spreads the join's output over tasks, and the operators after it
    that would use that hashing exchange the rows again. ``read_whole``: the most listed bytes
    of a broadcast side that the other side's tasks read themselves (-1: none)."""
    cutter = _Cutter(
        parent_counts(root), threshold, ids, final_sort(root), skew == "forced", read_whole
    )
    opened = cutter.cont(cutter.build(root))
    return cutter.close(opened)


class _Cutter(JoinStages, PlanVisitor):
    def __init__(
        self,
        parents: dict[int, int],
        threshold: int,
        ids: IdAllocator,
        final_sort: int | None = None,
        forced_skew: bool = False,
        read_whole: int = -1,
    ) -> None:
        self.parents = parents
        self.read_whole = read_whole
        self.threshold = threshold
        self.ids = ids
        self.final_sort = final_sort
        self.forced_skew = forced_skew
        self.sizes: dict[int, int] = {}
        self.shared: dict[int, OpenStage] = {}

    # -- opening, continuing and closing stages -------------------------------------------------

    def build(self, node: Node) -> OpenStage:
        if self.parents.get(id(node), 0) <= 1:
            return self.visit(node)
        if id(node) not in self.shared:
            opened = self.visit(node)
            self.shared[id(node)] = OpenStage(
                self.close(opened), opened.tree, opened.distribution, shared=True
            )
        return self.shared[id(node)]

    def close(self, opened: OpenStage) -> Stage:
        if opened.shared:
            return opened.stage
        opened.stage.tree = opened.tree
        return opened.stage

    def exchange(self, opened: OpenStage, partitioner: Partitioner) -> StageEdge:
        return StageEdge(self.close(opened), partitioner)

    def cont(self, opened: OpenStage, reading: str = "") -> OpenStage:
        """A stage the next operator may add to: ``opened`` itself, unless it is shared; then a
        stage reading it through a FORWARD edge (``reading``: what the query calls it)."""
        if not opened.shared:
            return opened
        stage = Stage("read", opened.stage.origin, detail=reading)
        leaf = stage.input(StageEdge(opened.stage, Partitioner.FORWARD))
        return OpenStage(stage, leaf)

    def fresh(
        self, kind: str, origin: str, edges: list[StageEdge], parallelism: int | None = None
    ) -> tuple[Stage, list[Input]]:
        stage = Stage(kind, origin, parallelism=parallelism)
        return stage, [stage.input(edge) for edge in edges]

    # -- operators ------------------------------------------------------------------------------

    def visit_Scan(self, node: Scan) -> OpenStage:
        named = node.alias.lower() == node.table.name.lower()
        detail = node.table.name if named else f"{node.table.name} {node.alias}"
        stage = Stage("scan", node.origin, detail=detail)
        return OpenStage(stage, stage.source(node))

    def visit_OneRow(self, node: OneRow | Values) -> OpenStage:
        stage = Stage("values", node.origin, parallelism=1)
        return OpenStage(stage, node, ("single",))

    visit_Values = visit_OneRow

    def visit_Filter(self, node: Filter | Expand) -> OpenStage:
        opened = self.cont(self.build(node.child))
        opened.tree = replace(node, child=opened.tree)
        return opened

    visit_Expand = visit_Filter

    def visit_Project(self, node: Project) -> OpenStage:
        reading = node.origin[len("FROM ") :] if node.origin.startswith("FROM ") else ""
        opened = self.cont(self.build(node.child), reading)
        opened.tree = replace(node, child=opened.tree)
        opened.distribution = through_projection(opened.distribution, node)
        return opened

    def visit_Sort(self, node: Sort | Limit) -> OpenStage:
        return self._ordered(node)

    visit_Limit = visit_Sort

    def _size(self, node: Node) -> int:
        return estimate_bytes(node, self.sizes)

    def _small(self, node: Node) -> bool:
        return self.threshold >= 0 and self._size(node) <= self.threshold

    def _with_columns(
        self, opened: OpenStage, exprs: list[exp.Expression]
    ) -> tuple[OpenStage, list[str]]:
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
        opened.tree = Project(
            columns, tree.origin, tree, tuple((c, col(c)) for c in tree.ids) + tuple(added)
        )
        return opened, names

    def visit_Aggregate(self, node: Aggregate) -> OpenStage:
        opened = self.build(node.child)
        group_columns = [e.name for _, e in node.groups if isinstance(e, exp.Column)]
        if satisfied(opened.distribution, group_columns, len(node.groups)):
            opened = self.cont(opened)
            opened.stage.relies_on_partitioning |= opened.distribution[0] == "hash"
            opened.tree = replace(node, child=opened.tree)
            if opened.distribution[0] == "hash":
                opened.distribution = ("hash", group_ids(node, opened.distribution[1]))
            opened.stage.origin = joined_origin(opened.stage.origin, node.origin)
            return opened
        single = not node.groups
        split = split_aggregate(node, self.ids)
        if split is not None:
            partial, (leaf,) = self.fresh(
                "partial aggregate", node.origin, [self.exchange(opened, Partitioner.FORWARD)]
            )
            partial.tree = Aggregate(split.columns, node.origin, leaf, split.groups, split.states)
            partitioner = Partitioner.REBALANCE if single else Partitioner.hash(*split.keys)
            final, (leaf,) = self.fresh(
                "aggregate",
                node.origin,
                [StageEdge(partial, partitioner, pre_aggregated=True)],
                1 if single else None,
            )
            tree = split.final(leaf)
        else:
            opened, keys = self._with_columns(opened, [e for _, e in node.groups])
            partitioner = Partitioner.REBALANCE if single else Partitioner.hash(*keys)
            final, (leaf,) = self.fresh(
                "aggregate",
                node.origin,
                [self.exchange(opened, partitioner)],
                1 if single else None,
            )
            groups = tuple((g, col(k)) for (g, _), k in zip(node.groups, keys))
            tree = replace(node, child=leaf, groups=groups)
        final.detail = ", ".join(g for g, _ in node.groups)
        distribution = ("single",) if single else ("hash", tuple(g for g, _ in node.groups))
        return OpenStage(final, tree, distribution)

    def visit_Window(self, node: Window) -> OpenStage:
        opened = self.build(node.child)
        if satisfied(opened.distribution, list(node.partition), len(node.partition)):
            opened = self.cont(opened)
            opened.stage.relies_on_partitioning |= opened.distribution[0] == "hash"
        else:
            single = not node.partition
            partitioner = Partitioner.REBALANCE if single else Partitioner.hash(*node.partition)
            stage, (leaf,) = self.fresh(
                "window", node.origin, [self.exchange(opened, partitioner)], 1 if single else None
            )
            stage.detail = ", ".join(node.partition)
            opened = OpenStage(stage, leaf, ("single",) if single else ("hash", node.partition))
        opened.tree = replace(node, child=opened.tree)
        return opened

    def _ordered(self, node: Sort | Limit) -> OpenStage:
        opened = self.build(node.child)
        if opened.distribution[0] == "single":
            opened = self.cont(opened)
            opened.tree = replace(node, child=opened.tree)
            return opened
        if id(node) == self.final_sort:
            keys = range_keys(node, opened.tree.ids)
            if (
                keys is not None
                and not opened.shared
                and sorts_where_grouped(opened.stage, opened.distribution, keys)
            ):
                opened.tree = replace(node, child=opened.tree)
                opened.stage.origin = joined_origin(opened.stage.origin, node.origin)
                return OpenStage(opened.stage, opened.tree, ("any",))
            if keys is not None:
                edge = self.exchange(opened, Partitioner.range(*keys))
                edge.pre_aggregated = _aggregates_what_it_reads(opened.tree)
                stage, (leaf,) = self.fresh("sort", node.origin, [edge])
                return OpenStage(stage, replace(node, child=leaf), ("any",))
        edge_from = opened
        if node.limit is not None:
            local, (leaf,) = self.fresh(
                "top-n per task" if isinstance(node, Sort) else "limit per task",
                node.origin,
                [self.exchange(opened, Partitioner.FORWARD)],
            )
            local.tree = replace(node, child=leaf, limit=node.limit + node.offset, offset=0)
            local.detail = str(node.limit)
            edge_from = OpenStage(local, local.tree)
        kind = "sort" if node.limit is None else "top-n" if isinstance(node, Sort) else "limit"
        stage, (leaf,) = self.fresh(
            kind, node.origin, [self.exchange(edge_from, Partitioner.REBALANCE)], 1
        )
        stage.detail = "" if node.limit is None else str(node.limit)
        return OpenStage(stage, replace(node, child=leaf), ("single",))

    def visit_SetOp(self, node: SetOp) -> OpenStage:
        """Equal rows meet in one task: hashed on the columns whose values hash alike on
        every side (any subset of the columns will do), or all in one task if none does."""
        keyed = node.kind != "union" or node.distinct
        alike = [i for i in range(len(node.columns)) if _hash_alike(node.inputs, i)]
        if keyed and not alike:
            edges = [self.exchange(self.build(c), Partitioner.REBALANCE) for c in node.inputs]
            stage, leaves = self.fresh(
                node.kind + ("" if node.distinct else " all"), node.origin, edges, 1
            )
            return OpenStage(stage, replace(node, inputs=tuple(leaves)), ("single",))
        edges = [
            self.exchange(
                self.build(child),
                Partitioner.hash(*[child.ids[i] for i in alike])
                if keyed
                else Partitioner.REBALANCE,
            )
            for child in node.inputs
        ]
        kind = node.kind + ("" if node.distinct else " all")
        stage, leaves = self.fresh(kind, node.origin, edges)
        distribution = ("hash", tuple(node.ids[i] for i in alike)) if keyed else ("any",)
        return OpenStage(stage, replace(node, inputs=tuple(leaves)), distribution)

    def visit_SubqueryColumn(self, node: SubqueryColumn) -> OpenStage:
        """The subquery evaluated in the stage of the rows it is evaluated for, its tables
        sent whole into each task."""
        opened = self.cont(self.build(node.child))
        leaves = tuple(
            opened.stage.input(self.exchange(self.build(i), Partitioner.BROADCAST))
            for i in node.inputs
        )
        opened.tree = replace(node, child=opened.tree, inputs=leaves)
        opened.stage.origin = joined_origin(opened.stage.origin, node.origin)
        return opened

    def visit_WholeQuery(self, node: WholeQuery) -> OpenStage:
        """One task running the query whole: it reads each table itself, whole, and every
        other input through an edge that brings all its rows into that task."""
        stage = Stage("whole", node.origin, parallelism=1)
        leaves = []
        for child in node.inputs:
            if isinstance(child, Scan) and self.parents.get(id(child), 0) <= 1:
                leaves.append(stage.source(child, whole=True))
            else:
                leaves.append(stage.input(self.exchange(self.build(child), Partitioner.REBALANCE)))
        return OpenStage(stage, replace(node, inputs=tuple(leaves)), ("single",))


def _hash_alike(inputs: tuple[Node, ...], index: int) -> bool:
    """Whether column ``index`` of every input hashes equal values alike: its types known and
    needing no cast between them (``hash_type``)."""
    kinds = [child.columns[index][1] for child in inputs]
    return all(k.is_known for k in kinds) and all(hash_type(kinds[0], k) is None for k in kinds[1:])


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
