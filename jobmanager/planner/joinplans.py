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

from jobmanager.model.joins import PlannedJoin
from jobmanager.planner.joins import estimate_bytes
from jobmanager.planner.logical import Join, Node
from jobmanager.planner.physical import Input, Source, Stage

__all__ = ["planned_joins"]


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


def _planned(stage: Stage, node: Join, memo: dict) -> PlannedJoin:
    """``node``'s join, its id left empty unless it is marked."""
    edges = {side: _edge(stage, child) for side, child in (("left", node.left), ("right", node.right))}
    views = {side: child.view if isinstance(child, Input) else ""
             for side, child in (("left", node.left), ("right", node.right))}  # fmt: skip
    listed = {side: _listed(stage, child, memo) for side, child in
              (("left", node.left), ("right", node.right))}  # fmt: skip
    hint = stage.hints.get(id(node), "")
    broadcast = [side for side, e in edges.items() if e is not None and e.partitioner.is_broadcast]
    marks = [e.join for e in edges.values() if e is not None and e.join is not None]
    if broadcast:
        strategy, side, join = PlannedJoin.BROADCAST, broadcast[0], ""
    elif len(marks) == 2:
        strategy, side, join = PlannedJoin.RUNTIME, hint, marks[0].join
    else:
        strategy, side, join = PlannedJoin.SHUFFLED, hint, ""
    return PlannedJoin(join, node.kind, strategy, side, views["left"], views["right"],
                       listed["left"], listed["right"])  # fmt: skip


def _edge(stage: Stage, child: Node):
    return stage.inputs[int(child.view[len("in"):])] if isinstance(child, Input) else None


def _listed(stage: Stage, node: Node, memo: dict) -> int:
    """``node``'s bytes as the listing estimates them: an input as its producer's stage."""

    def leaf(n: Node) -> int | None:
        if isinstance(n, Input):
            producer = stage.inputs[int(n.view[len("in"):])].producer
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
