"""What the planner cuts a query into: stages (one vertex each), their edges, and the leaves
of a stage's tree that stand for an edge's rows or a table the stage reads itself.

``physical`` makes them; ``joinmarks`` marks their join edges; ``sqlgen`` writes each stage's
SQL; ``graph`` turns them into the job graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jobmanager.model.jobgraph import Partitioner
from jobmanager.model.joins import JoinInput
from jobmanager.planner.logical import Node, Scan

__all__ = ["Input", "OpenStage", "Source", "Stage", "StageEdge", "joined_origin"]


@dataclass(frozen=True, eq=False)
class Input(Node):
    """An incoming edge's rows, registered under ``view``."""

    view: str = ""


@dataclass(frozen=True, eq=False)
class Source(Node):
    """A table read by this stage itself, registered under ``view``."""

    view: str = ""
    scan: Scan | None = None


@dataclass(eq=False)
class StageEdge:
    producer: Stage
    partitioner: Partitioner
    splittable: bool = False
    join: JoinInput | None = None  # set by joinmarks.mark_joins
    pre_aggregated: bool = False  # an aggregate's rows (JobEdge.pre_aggregated)


@dataclass(eq=False)
class Stage:
    """One vertex: ``tree`` over its ``sources`` and ``inputs`` (edges, in order); ``kind``
    and ``origin`` say what it is and what part of the query it came from. The sources at
    the indices in ``whole`` are read whole by every task, a join's small side read where it
    is joined (``jobmanager.model.broadcast_source``)."""

    kind: str
    origin: str
    tree: Node | None = None
    sources: list[Scan] = field(default_factory=list)
    inputs: list[StageEdge] = field(default_factory=list)
    parallelism: int | None = None
    relies_on_partitioning: bool = False
    detail: str = ""
    hints: dict[int, str] = field(default_factory=dict)  # id(join) -> the side Spark broadcasts
    whole: set[int] = field(default_factory=set)

    def input(self, edge: StageEdge) -> Input:
        self.inputs.append(edge)
        return Input(edge.producer.tree.columns, "", f"in{len(self.inputs) - 1}")

    def source(self, scan: Scan, whole: bool = False) -> Source:
        self.sources.append(scan)
        if whole:
            self.whole.add(len(self.sources) - 1)
        return Source(scan.columns, scan.origin, f"s{len(self.sources) - 1}", scan)


@dataclass
class OpenStage:
    """A stage still being built: its tree so far and how its rows are partitioned
    (``("any",)``, ``("single",)`` or ``("hash", ids)``). ``shared``: the stage is done (two
    consumers read it) and an operator on it starts a stage of its own."""

    stage: Stage
    tree: Node
    distribution: tuple = ("any",)
    shared: bool = False


def joined_origin(first: str, second: str) -> str:
    """The origin of a stage that takes on one more operator: both, in order."""
    return f"{first}; {second}" if first else second
