"""A table every task of its vertex reads whole: a broadcast input read where it is used.

The SQL planner sends a join's small side whole to the tasks of the other side. When that side
is a few rows of a table read straight from its files (TPC-H's ``nation``, ``region``), a
vertex and an edge of its own cost more than the rows: a Spark query to read them, a partition
file, a wait for a slot, and a second Spark query's input in every consumer. So the consumer's
tasks read the table themselves, in the same Spark query as their join
(``jobmanager.planner.physical.cut``), as Spark's own plan does.

Such a source has no say in its vertex's parallelism (it answers no inference: the vertex's
other sources and inputs decide), and every subtask reads all of its splits.
"""

from __future__ import annotations

from jobmanager.model.sources import FileSource

__all__ = ["BroadcastSource"]


class BroadcastSource:
    """``source`` read whole by every task of the vertex."""

    __slots__ = ("source",)

    def __init__(self, source: FileSource) -> None:
        if not isinstance(source, FileSource):
            raise TypeError(f"a BroadcastSource reads a FileSource, not {source!r}")
        self.source = source

    def __repr__(self) -> str:
        return f"{self.source!r}, whole in every task"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BroadcastSource) and self.source == other.source

    def __hash__(self) -> int:
        return hash(("broadcast", self.source))
