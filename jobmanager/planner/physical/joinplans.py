"""What the planner decided of each join, kept on the vertex that runs it for ``tidal explain``.

A join's strategy is decided in two places: the planner broadcasts a side whose listed bytes are
under the threshold, or hashes both sides (``physical``), and the JobManager may still turn a
marked shuffled join into a broadcast one from the bytes really written (``joinmarks``). The
run time's decision is an event in the job's log; the planner's would be lost with the plan, so
each stage's joins are described here (``PlannedJoin``, on the stage's ``SqlOperator``): the
strategy, the side broadcast or built on, where each side comes from (an input edge's view, or
the stage's own rows) and each side's bytes as the listing estimated them, a stage's input
estimated as the plan of the stage that writes it.

Ids: a marked join keeps its mark's (``j1``, ``j2``, ... from the scans up); the joins the
planner settled are numbered after them, in the same order.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp, parse_one

from jobmanager.model.joins import PlannedJoin
from jobmanager.planner.rules.joins import estimate_bytes
from jobmanager.planner.logical import Join, Node
from jobmanager.planner.physical.cut import Input, Source, Stage

__all__ = ["planned_joins", "with_hints"]


def planned_joins(stages: list[Stage]) -> dict[int, tuple[PlannedJoin, ...]]:
    """Each stage's joins (by ``id(stage)``), bottom up; ``stages``: producers first."""
    marked = {e.join.join for stage in stages for e in stage.inputs if e.join is not None}
    count, memo, found = len(marked), {}, {}
    for stage in stages:
        joins = []
        for node in _joins(stage.tree):
            planned = _planned(stage, node, memo)
            if not planned.join:
                count += 1
                planned = replace(planned, join=f"j{count}")
            joins.append(planned)
        if joins:
            found[id(stage)] = tuple(joins)
    return found


def with_hints(joins: tuple[PlannedJoin, ...], sql: str) -> tuple[PlannedJoin, ...]:
    """``joins`` with each run-time join's in-task hints for either side (``PlannedJoin.hints``):
    the SQL names each side by its alias (``FROM in0 AS t1``), and a task told the JobManager's
    decision swaps the planner's hint for the other side's."""
    if not any(j.strategy == PlannedJoin.RUNTIME for j in joins):
        return joins
    aliases = {t.name: t.alias_or_name for t in parse_one(sql, read="spark").find_all(exp.Table)}
    hinted = []
    for join in joins:
        name = "SHUFFLE_HASH" if join.kind == "full" else "BROADCAST"
        left, right = aliases.get(join.left), aliases.get(join.right)
        if (
            join.strategy == PlannedJoin.RUNTIME
            and left
            and right
            and join.side
            and f"/*+ {name}({left if join.side == 'left' else right}) */" in sql
        ):
            join = replace(join, hints=(f"{name}({left})", f"{name}({right})"))
        hinted.append(join)
    return tuple(hinted)


def _planned(stage: Stage, node: Join, memo: dict) -> PlannedJoin:
    """``node``'s join, its id left empty unless it is marked."""
    edges = {
        side: _edge(stage, child) for side, child in (("left", node.left), ("right", node.right))
    }
    views = {
        side: child.view if isinstance(child, Input) else _whole_view(stage, child)
        for side, child in (("left", node.left), ("right", node.right))
    }
    listed = {
        side: _listed(stage, child, memo)
        for side, child in (("left", node.left), ("right", node.right))
    }
    hint = stage.hints.get(id(node), "")
    broadcast = [
        side
        for side, child in (("left", node.left), ("right", node.right))
        if _sent_whole(stage, child, edges[side])
    ]
    marks = [e.join for e in edges.values() if e is not None and e.join is not None]
    if broadcast:
        strategy, side, join = PlannedJoin.BROADCAST, broadcast[0], ""
    elif len(marks) == 2:
        strategy, side, join = PlannedJoin.RUNTIME, hint, marks[0].join
    else:
        strategy, side, join = PlannedJoin.SHUFFLED, hint, ""
    return PlannedJoin(
        join,
        node.kind,
        strategy,
        side,
        views["left"],
        views["right"],
        listed["left"],
        listed["right"],
    )


def _sent_whole(stage: Stage, child: Node, edge) -> bool:
    """Whether the side comes through a broadcast edge or is a table every task reads whole."""
    if edge is not None:
        return edge.partitioner.is_broadcast
    return bool(_whole_view(stage, child))


def _whole_view(stage: Stage, child: Node) -> str:
    """The view of the source the side reads, when every task reads that source whole."""
    while not isinstance(child, Source) and len(child.children) == 1:
        child = child.children[0]
    whole = isinstance(child, Source) and int(child.view[len("s") :]) in stage.whole
    return child.view if whole else ""


def _edge(stage: Stage, child: Node):
    return stage.inputs[int(child.view[len("in") :])] if isinstance(child, Input) else None


def _listed(stage: Stage, node: Node, memo: dict) -> int:
    """``node``'s bytes as the listing estimates them: an input as its producer's stage."""

    def leaf(n: Node) -> int | None:
        if isinstance(n, Input):
            producer = stage.inputs[int(n.view[len("in") :])].producer
            return _listed(producer, producer.tree, memo)
        if isinstance(n, Source):
            return estimate_bytes(n.scan, memo)
        return None

    return estimate_bytes(node, memo, leaf)


def _joins(node: Node | None) -> list[Join]:
    """The joins under ``node``, producers first."""
    if node is None:
        return []
    found = [j for child in node.children for j in _joins(child)]
    return found + [node] if isinstance(node, Join) else found
