"""A join's tiny small side read whole by the other side's tasks, in their Spark query.

A broadcast side that only reads one table (filtered and projected) listed at most
``table.optimizer.join.read-whole-threshold`` needs no stage of its own: a stage costs a Spark
query, a partition file and a slot's wait (100-200 ms) for a few rows, where each of, say, 40
tasks reads 1 MiB of Parquet in a few ms (``jobmanager.model.broadcast_source``). The cutter
(``physical``) asks ``may_read_whole`` of the stage and ``tiny_read`` of the side, then puts the
side's scan into the stage with ``read_whole``.
"""

from __future__ import annotations

from dataclasses import replace

from jobmanager.model.jobgraph import PartitionerKind
from jobmanager.planner.logical import Filter, Node, Project, Scan
from jobmanager.planner.physical.stages import Stage

__all__ = ["may_read_whole", "read_whole", "tiny_read"]


def may_read_whole(stage: Stage) -> bool:
    """Whether ``stage``'s tasks may read a tiny table themselves: a stage that reads a table
    may; one that reads none (TPC-H q02's outer join, after an aggregate) where it costs none
    of the choices made later: no FORWARD input, which chains it to its producer only if it
    reads no table, and not the two hashed sides of a join, which the run time may turn into
    a broadcast or chain into a side's scan only in a vertex that reads no table."""
    if stage.sources:
        return True
    kinds = [edge.partitioner.kind for edge in stage.inputs]
    return PartitionerKind.FORWARD not in kinds and kinds.count(PartitionerKind.HASH) != 2


def tiny_read(node: Node, parents: dict[int, int], threshold: int) -> bool:
    """Whether ``node`` reads one table, filtered and projected, that no other part of the
    plan reads (``parents``), whose listed bytes (the columns read, before any filter) are at
    most ``threshold``."""
    while isinstance(node, (Filter, Project)) and parents.get(id(node), 0) <= 1:
        node = node.child
    return (
        isinstance(node, Scan)
        and parents.get(id(node), 0) <= 1
        and node.table.listed_bytes([c for _, c in node.mapping]) <= threshold
    )


def read_whole(node: Node, stage: Stage) -> Node:
    """``node``, a ``tiny_read``, as a source ``stage``'s every task reads whole."""
    if isinstance(node, Scan):
        return stage.source(node, whole=True)
    return replace(node, child=read_whole(node.child, stage))
