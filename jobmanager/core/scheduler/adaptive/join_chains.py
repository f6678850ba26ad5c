"""Joins chained into their big side's scan at run time: build sides first, then decide.

A run-time broadcast join saves the most when the side that turned out small is known before
the other side's producer starts: that producer's tasks can then do the join themselves, and
the big side is never hashed, written or read back (``jobmanager.model.join_chains``). For that
the small side must finish first, so where the job's slots cannot run all its sources at once,
the producer of a join's side that is likely big (it lists more bytes than every source the
other side reads, together) is held back until the other side's producers finished, instead of
starting with the largest sources first. Then:

- the other side wrote at most ``table.optimizer.join.broadcast-threshold``: the core decides
  the chain (``JoinChained``, with the join's ``JoinDecision``), the two vertices become one, and
  the chained vertex is decided like a source vertex with a broadcast input (the producer's
  parallelism; the small side read whole by every task);
- else the held producer starts and the join is decided once both sides finished, as any.

The plan (which producer waits for which side) is made once, when every source's parallelism
is known, from the listed bytes and the slots: the same events give the same plan in a replay,
and a snapshot keeps it. Pure: the scheduler applies what this returns.
"""

from __future__ import annotations

from jobmanager.core.executiongraph import ExecutionGraph, ExecutionJobVertex
from jobmanager.core.executiongraph.inputs import BroadcastInputInfo, WholeInputInfo
from jobmanager.core.scheduler.adaptive.decider import describe_bytes
from jobmanager.core.scheduler.adaptive.decision import InputStats, VertexDecision
from jobmanager.core.scheduler.adaptive.joins import kind_words
from jobmanager.messages import events as ev
from jobmanager.messages.events import Explanation
from jobmanager.messages.joins import JoinDecision
from jobmanager.model.join_chains import (
    JoinChain,
    fuse_graph,
    fused_vertex,
    join_chain_candidates,
)

__all__ = ["JoinChains"]


class JoinChains:
    """``consumers``: the vertices whose join the scheduler decides at run time;
    ``slots``: the most tasks the job runs at once (None: unknown, nothing is held)."""

    def __init__(
        self, graph: ExecutionGraph, consumers, enabled: bool, slots: int | None, threshold: int
    ) -> None:
        self.graph = graph
        self.slots = slots
        self.threshold = threshold
        self.candidates = [
            c for c in join_chain_candidates(graph.job_graph, enabled) if c.consumer in consumers
        ]
        self.plan: dict[str, JoinChain] | None = None  # held producer -> its chain
        self.why: dict[str, str] = {}  # held producer -> the order, in words
        self.fused: dict[str, ev.JoinChained] = {}  # chained vertex -> how it came to be

    # -- holding back --------------------------------------------------------------------------

    def holds(self, name: str, read_bytes: dict[str, int]) -> bool:
        """Whether vertex ``name``, a source vertex ready to start, waits for the other side of
        its join to finish first."""
        chain = self._planned(read_bytes).get(name)
        if chain is None or name not in self.graph.job_vertices:
            return False
        other = self.graph.results[chain.other]
        return not other.producer.is_finished or self._small(other)

    def _planned(self, read_bytes: dict[str, int]) -> dict[str, JoinChain]:
        if self.plan is not None:
            return self.plan
        sources = [e for e in self.graph.job_vertices.values() if not e.inputs]
        if any(e.parallelism is None for e in sources):
            return {}  # asked again once every source knows its parallelism
        self.plan = {}
        if not self._sources_contend(sources):
            return self.plan
        for chain in sorted(self.candidates, key=lambda c: -read_bytes.get(c.producer, 0)):
            self._hold_if_bigger(chain, read_bytes)
        return self.plan

    # -- deciding ----------------------------------------------------------------------------------

    def _sources_contend(self, sources: list[ExecutionJobVertex]) -> bool:
        """Whether holding a source back can help: there are chains to plan, and the job's
        slots cannot run every source at once (else holding one back only delays it)."""
        if not self.candidates or self.slots is None:
            return False
        return sum(e.parallelism for e in sources) > self.slots

    def _hold_if_bigger(self, chain: JoinChain, read_bytes: dict[str, int]) -> None:
        """Plan ``chain`` (its producer held until the join's other side finished) if its
        sources list more bytes than the other side's, and its consumer is not planned yet."""
        listed = read_bytes.get(chain.producer, 0)
        other = _listed_upstream(self.graph.results[chain.other].producer, read_bytes)
        taken = {c.consumer for c in self.plan.values()}
        if chain.consumer in taken or other is None or not 0 < other < listed:
            return
        self.plan[chain.producer] = chain
        self.why[chain.producer] = (
            f"started after the {_other(chain.side)} side of join {chain.join!r} finished "
            f"(its sources list {describe_bytes(other)}, this one {describe_bytes(listed)}; "
            f"the job's {self.slots} slots cannot run all its sources at once): if that "
            "side is small, the join runs in this vertex's tasks and this side is never "
            "shuffled"
        )

    def ready(self, read_bytes: dict[str, int]) -> list[ev.JoinChained]:
        """The chains that can be decided now: a held producer whose join's other side
        finished small, its own parallelism known."""
        found = []
        for name, chain in self._planned(read_bytes).items():
            producer = self.graph.job_vertices.get(name)
            if producer is None or producer.parallelism is None or producer.is_initialized:
                continue
            other = self.graph.results[chain.other]
            if other.producer.is_finished and self._small(other):
                found.append(self._chained(chain, producer, other))
        return found

    def _small(self, result) -> bool:
        return 0 <= self.threshold and _total(result) <= self.threshold

    def _chained(self, chain: JoinChain, producer: ExecutionJobVertex, other) -> ev.JoinChained:
        consumer = self.graph.job_vertex(chain.consumer)
        mark = next(r.edge.join for r in consumer.inputs if r.id == chain.other)
        small, side = _total(other), _other(chain.side)
        sizes = {side: small, chain.side: -1}
        text = (
            f"join {mark.join!r} ({kind_words(mark.kind)}): broadcast join "
            f"chained into {producer.name!r}: the {side} side sent whole to each of its "
            f"tasks ({describe_bytes(small)} <= threshold {describe_bytes(self.threshold)}), "
            f"decided once {other.producer.name!r} finished, before {producer.name!r} "
            f"started, so the {chain.side} side is never written or shuffled"
        )
        decision = JoinDecision(
            mark.join,
            JoinDecision.BROADCAST,
            side,
            sizes["left"],
            sizes["right"],
            self.threshold,
            text,
            mark.kind,
            (other.producer.name,),
            JoinDecision.CHAINED,
        )
        name = fused_vertex(producer.job_vertex, consumer.job_vertex).name
        return ev.JoinChained(producer.name, consumer.name, name, decision)

    def apply(self, event: ev.JoinChained) -> ExecutionJobVertex:
        """Fuse the two vertices in the graph; the chained vertex, still to be decided."""
        fused = fuse_graph(self.graph.job_graph, event.producer, event.consumer)
        self.fused[event.vertex] = event
        self.plan = {n: c for n, c in (self.plan or {}).items() if n != event.producer}
        return self.graph.fuse(event.producer, event.consumer, fused)

    def decide(self, ejv: ExecutionJobVertex, stats: list[InputStats]) -> VertexDecision:
        """The chained vertex runs with its producer's parallelism; the small side is read
        whole by each task, any other broadcast input as a broadcast."""
        event = self.fused[ejv.name]
        infos: dict = {}
        broadcast = 0
        for s in stats:
            broadcast += s.total
            if s.broadcast:
                infos[s.result] = BroadcastInputInfo(s.num_partitions, ejv.parallelism)
            else:
                infos[s.result] = WholeInputInfo(
                    s.num_partitions, len(s.subpartition_bytes), ejv.parallelism
                )
        explanation = Explanation(event.decision.text, 0, broadcast)
        return VertexDecision(ejv.parallelism, infos, explanation, joins=(event.decision,))

    # -- snapshots ---------------------------------------------------------------------------------

    def export(self) -> tuple:
        plan = (
            None
            if self.plan is None
            else tuple(
                (c.join, c.producer, c.consumer, c.side, c.other) for c in self.plan.values()
            )
        )
        return plan, tuple(self.why.items()), tuple(self.fused.items())

    def restore(self, image: tuple) -> None:
        plan, why, fused = image
        self.plan = None if plan is None else {c[1]: JoinChain(*c) for c in plan}
        self.why, self.fused = dict(why), dict(fused)

    def describe(self) -> tuple:
        """As ``export``, but a plan not made yet reads as an empty one: it is made when first
        asked for, which a replay and a restored snapshot may do at different events."""
        plan, why, fused = self.export()
        return plan or (), why, fused


def _other(side: str) -> str:
    return "right" if side == "left" else "left"


def _total(result) -> int:
    return int(result.produced.partition_totals.sum())


def _listed_upstream(vertex: ExecutionJobVertex, read_bytes: dict[str, int]) -> int | None:
    """What every source upstream of ``vertex`` (itself included) listed, together; None if
    one of them listed nothing the scheduler knows of."""
    total, seen, stack = 0, set(), [vertex]
    while stack:
        current = stack.pop()
        if current.name in seen:
            continue
        seen.add(current.name)
        if current.job_vertex.sources:
            if not read_bytes.get(current.name):
                return None
            total += read_bytes[current.name]
        stack.extend(current.producers)
    return total
