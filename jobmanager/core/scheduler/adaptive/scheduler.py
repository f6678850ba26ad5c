"""The adaptive batch scheduler's part of the JobManager state: growing the execution graph.

The graph starts empty. A job vertex is initialised once its parallelism is decided and all its
producers are initialised: a user-set parallelism (or a forward group's) is known at once;
otherwise, once every producer has finished, the vertex waits for a decision, which the core's
``handle`` makes (``decision_for``) and applies as an event that the log records, so a replay
applies it and never decides again. A source's parallelism comes from what
its sources can tell: a static value known when the graph was built, else a dynamic inference
run off the main loop (FLIP-379), else the upper bound.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

from jobmanager.core import commands as cmd
from jobmanager.core.executiongraph import ExecutionGraph, ExecutionJobVertex
from jobmanager.core.scheduler.adaptive.decider import decide_vertex
from jobmanager.core.scheduler.adaptive.decision import (
    InputStats,
    VertexDecision,
)
from jobmanager.core.scheduler.adaptive.forward import compute_forward_groups
from jobmanager.core.scheduler.adaptive.join_chains import JoinChains
from jobmanager.core.scheduler.adaptive.joins import (
    JoinSides,
    decide_join_vertex,
    join_sides,
)
from jobmanager.core.scheduler.adaptive.ranges import RangeSorts
from jobmanager.core.scheduler.adaptive.settings import (
    decider_settings,
    source_bound,
    source_inference_context,
)
from jobmanager.messages import events as ev
from jobmanager.messages.events import Explanation
from jobmanager.model.config import (
    BROADCAST_THRESHOLD,
    OPERATOR_CHAINING,
    Configuration,
    joins_decided_at_run_time,
)
from jobmanager.model.inference import DynamicFilteringInfo, InferenceContext

__all__ = ["AdaptiveBatchScheduler"]

_INFERRING, _DECIDING = "inferring", "deciding"


class AdaptiveBatchScheduler:
    """``inferred``: source inferences made before the job ran (``JobSubmitted.inferred``),
    taken as answers, so their vertices are never asked again."""

    def __init__(
        self,
        graph: ExecutionGraph,
        config: Configuration,
        emit: Callable[[object], None],
        slots: int | None = None,
        inferred: Sequence[ev.SourceParallelismInferred] = (),
    ) -> None:
        self.graph = graph
        self.slots = slots  # the most the job can hold at once: a hint for sources
        self.config = config
        self.settings = decider_settings(config, slots)
        self.emit = emit
        self.groups = compute_forward_groups(graph)
        self.pending: dict[str, str] = {}
        self.inferred: dict[str, int] = {}
        self.inferred_detail: dict[str, str] = {}
        self.split_keys: dict[str, tuple[str, ...]] = {}
        self.read_bytes: dict[str, int] = {}  # what a source vertex's listed splits hold
        self.explanations: dict[str, Explanation] = {}
        for group in self.groups.values():
            if group.parallelism is not None:
                setter = next(
                    n
                    for n in group.names
                    if graph.job_vertices[n].job_vertex.parallelism is not None
                )
                self._set_parallelism(group.names, group.parallelism)
                self._explain_group(group.names, setter, f"set by the user: {group.parallelism}")
        self.filter_values: dict[str, set[str]] = {}
        self._input_infos: dict[str, dict] = {}
        self.joins: dict[str, tuple] = {}  # vertex -> its JoinDecisions, as decided
        self._joins = self._run_time_joins(graph, config)
        self.ranges = RangeSorts(graph)  # global sorts, each task one key range
        self.chains = JoinChains(
            graph,
            self._joins,
            config[OPERATOR_CHAINING.key],
            slots,
            config[BROADCAST_THRESHOLD.key],
        )
        # a join or sort whose parallelism is fixed still waits for its inputs' bytes (and
        # samples) to be decided
        self._awaiting_join = {
            name
            for name in (*self._joins, *self.ranges.inputs)
            if graph.job_vertices[name].parallelism is not None
        }
        for answer in inferred:
            self._record_inferred(answer)

    # -- growing the graph --------------------------------------------------------------------

    def progress(self) -> list[ExecutionJobVertex]:
        """Ask for what can be decided now; return the vertices that can be initialised.
        Vertices without inputs wait while another one's parallelism is still being found
        (its sources asked, its decision made), as in Flink, where they are all initialised
        when the job starts: the first tasks are then deployed together, the largest first
        (``bytes_per_task``)."""
        self._request_decisions()
        ready: list[ExecutionJobVertex] = []
        names: set[str] = set()
        sources_waiting = any(
            not ejv.inputs and ejv.parallelism is None for ejv in self.graph.job_vertices.values()
        )
        for ejv in self.graph.job_vertices.values():
            if ejv.is_initialized or self._waits(ejv, sources_waiting):
                continue
            if ejv.parallelism is not None and all(
                p.is_initialized or p.name in names for p in ejv.producers
            ):
                ready.append(ejv)
                names.add(ejv.name)
                self._say_if_held(ejv.name)
        return ready

    def _waits(self, ejv: ExecutionJobVertex, sources_waiting: bool) -> bool:
        """A source waits while another's parallelism is found or its join chain holds it; a
        vertex with inputs waits for its join's decision."""
        if ejv.inputs:
            return ejv.name in self._awaiting_join
        return sources_waiting or self.chains.holds(ejv.name, self.read_bytes)

    def _say_if_held(self, name: str) -> None:
        """A producer held back for its join's other side, which turned out big, starts now:
        its explanation says why it started late."""
        why = self.chains.why.get(name)
        if why is not None and name in self.explanations:
            fixed = self.explanations[name]
            self.explanations[name] = replace(
                fixed,
                text=f"{fixed.text}; {why}; that side was above the threshold, so it started then",
            )

    def chains_to_decide(self) -> list[ev.JoinChained]:
        """Joins that can now run chained into their held producer (``JoinChains``)."""
        return self.chains.ready(self.read_bytes)

    def on_chained(self, event: ev.JoinChained) -> None:
        """Fuse the join into its producer; the chained vertex takes over what was known of
        the producer (its listing, its parallelism) and waits for its own decision."""
        ejv = self.chains.apply(event)
        for known in (self.inferred, self.inferred_detail, self.split_keys, self.read_bytes):
            if event.producer in known:
                known[ejv.name] = known.pop(event.producer)
        fixed = self.explanations.pop(event.producer, None)
        why = self.chains.why.get(event.producer, "")
        text = "; ".join(t for t in (fixed.text if fixed else "", why) if t)
        self.explanations[ejv.name] = Explanation(text)
        self._joins.pop(event.consumer, None)
        self._awaiting_join.add(ejv.name)
        self.groups = compute_forward_groups(self.graph)  # the join's group is now the chain's
        group = self.groups.get(ejv.name)
        if group is not None:
            group.parallelism = ejv.parallelism
            self._set_parallelism(group.names, ejv.parallelism)
            self._explain_group(group.names, ejv.name, f"its producer's: {ejv.parallelism}")

    def _request_decisions(self) -> None:
        """Ask for the parallelism of every vertex still without one, and for the join of
        every vertex whose parallelism is fixed but whose join waits for its inputs' bytes."""
        for ejv in self.graph.job_vertices.values():
            if ejv.is_initialized or ejv.name in self.pending:
                continue
            if ejv.parallelism is None or ejv.name in self._awaiting_join:
                self._request_decision(ejv)

    def bytes_per_task(self, ejv: ExecutionJobVertex) -> int:
        """What one task of a source vertex reads, from its listing (0: not known)."""
        read = self.read_bytes.get(ejv.name, 0)
        return read // ejv.parallelism if read and ejv.parallelism else 0

    def pending_inferences(self) -> list[cmd.InferSourceParallelism]:
        """The source inferences asked for and not answered yet, as commands again."""
        return [
            cmd.InferSourceParallelism(name, self._inference_context(self.graph.job_vertex(name)))
            for name, kind in self.pending.items()
            if kind == _INFERRING
        ]

    def deciding(self) -> list[str]:
        """The vertices waiting for a parallelism decision, in the order they began to."""
        return [name for name, kind in self.pending.items() if kind == _DECIDING]

    def input_infos_of(self, vertices: list[ExecutionJobVertex]) -> dict[str, dict]:
        return {
            v.name: self._input_infos.pop(v.name) for v in vertices if v.name in self._input_infos
        }

    def _request_decision(self, ejv: ExecutionJobVertex) -> None:
        if not all(p.is_finished for p in ejv.producers):
            return
        jv = ejv.job_vertex
        if (
            jv.infers_parallelism
            and jv.static_parallelism is None
            and ejv.name not in self.inferred
        ):
            self.pending[ejv.name] = _INFERRING
            self.emit(cmd.InferSourceParallelism(ejv.name, self._inference_context(ejv)))
        else:
            self.pending[ejv.name] = _DECIDING

    def _inference_context(self, ejv: ExecutionJobVertex) -> InferenceContext:
        return source_inference_context(
            self.config, self._max_parallelism(ejv), self.slots, self.dynamic_filters(ejv)
        )

    def dynamic_filters(self, ejv: ExecutionJobVertex) -> tuple[DynamicFilteringInfo, ...]:
        """The partition values that upstream vertices let through to this vertex's sources."""
        return tuple(
            DynamicFilteringInfo(
                r.edge.dynamic_filtering, tuple(sorted(self.filter_values.get(r.id, ())))
            )
            for r in ejv.inputs
            if r.edge.dynamic_filtering
        )

    def upper_bound(self, ejv: ExecutionJobVertex) -> int:
        return source_bound(self.config, self._max_parallelism(ejv))

    def _max_parallelism(self, ejv: ExecutionJobVertex) -> int:
        group = self.groups.get(ejv.name)
        return group.max_parallelism if group else ejv.max_parallelism

    # -- deciding ---------------------------------------------------------------------------------

    def decision_for(self, name: str) -> ev.VertexParallelismDecided:
        """The decision for ``name`` from the bytes its inputs produced: pure, changing nothing
        (the decision takes effect when it is applied as an event, live or from the log)."""
        ejv = self.graph.job_vertex(name)
        decision = self._decide(ejv)
        return ev.VertexParallelismDecided(
            name,
            decision.parallelism,
            tuple(decision.input_infos.items()),
            decision.explanation,
            decision.joins,
            decision.range_bounds,
        )

    def _decide(self, ejv: ExecutionJobVertex) -> VertexDecision:
        jv = ejv.job_vertex
        vertex_max = self._max_parallelism(ejv)
        wanted = jv.static_parallelism or self.inferred.get(ejv.name)
        how = (
            "static parallelism of its sources"
            if jv.static_parallelism
            else "inferred by its sources"
        )
        if not ejv.inputs:
            return self._decide_source(ejv, wanted, how, vertex_max)
        stats = [self._stats(r) for r in ejv.inputs]
        if ejv.name in self.chains.fused:
            return self.chains.decide(ejv, stats)
        if ejv.name in self.ranges.inputs:
            return self.ranges.decide(ejv.name, stats, ejv.parallelism, vertex_max, self.settings)
        sides = self._joins.get(ejv.name)
        if sides is not None and not wanted:  # a parallelism fixed by the user is kept
            settings, threshold = self.settings, self.config[BROADCAST_THRESHOLD.key]
            return decide_join_vertex(
                stats, sides, ejv.parallelism, vertex_max, settings, threshold
            )
        decision = decide_vertex(stats, None, vertex_max, self.settings)
        if not wanted:
            return decision
        return self._with_wanted(ejv, stats, decision, wanted, how, vertex_max)

    def _with_wanted(
        self,
        ejv: ExecutionJobVertex,
        stats: list,
        decision: VertexDecision,
        wanted: int,
        how: str,
        vertex_max: int,
    ) -> VertexDecision:
        """The decision where the vertex's sources want a parallelism: more than its inputs
        need is taken (up to the vertex's max), else the inputs' need stands."""
        if wanted > decision.parallelism:
            decision = decide_vertex(stats, min(wanted, vertex_max), vertex_max, self.settings)
            text = f"{how}: {wanted}, more than its inputs need; {decision.explanation.text}"
        else:
            text = f"{decision.explanation.text}; {how}: {wanted}, no more than that"
        if self.inferred_detail.get(ejv.name):
            text += f"; {self.inferred_detail[ejv.name]}"
        return VertexDecision(
            decision.parallelism,
            decision.input_infos,
            Explanation(
                text, decision.explanation.input_bytes, decision.explanation.broadcast_bytes
            ),
        )

    def _decide_source(
        self, ejv: ExecutionJobVertex, wanted: int | None, how: str, vertex_max: int
    ) -> VertexDecision:
        """A vertex without inputs takes what its sources told, within the upper bound."""
        bound = self.upper_bound(ejv)
        if not wanted:
            return VertexDecision(
                bound, {}, Explanation(f"source that infers nothing: the upper bound {bound}")
            )
        p = max(1, min(wanted, vertex_max))
        text = f"source: {how} {wanted}, within the upper bound {bound} -> {p}"
        if self.inferred_detail.get(ejv.name):
            text += f"; {self.inferred_detail[ejv.name]}"
        return VertexDecision(p, {}, Explanation(text))

    def _stats(self, result) -> InputStats:
        produced = result.produced
        return InputStats(
            result.id,
            pointwise=result.pattern.value == "pointwise",
            broadcast=result.is_broadcast,
            num_partitions=len(result.partitions),
            subpartition_bytes=produced.subpartition_sums,
            partition_bytes=produced.partition_totals,
            per_partition=produced.per_partition,
            splittable=result.edge.splittable,
            forward=result.edge.is_forward,
            join=result.edge.join,
        )

    # -- events -------------------------------------------------------------------------------------

    def on_decided(self, event: ev.VertexParallelismDecided) -> bool:
        """Apply a decision; False if it no longer fits (an input was reset meanwhile)."""
        if self.pending.get(event.vertex) != _DECIDING:
            return False
        del self.pending[event.vertex]
        ejv = self.graph.job_vertex(event.vertex)
        if not self._fits(ejv, event):
            return False
        group = self.groups.get(ejv.name)
        self._input_infos[ejv.name] = dict(event.input_infos)
        if event.joins:
            self.joins[ejv.name] = event.joins
        self.ranges.on_decided(event)
        if ejv.name in self._awaiting_join:  # its parallelism was fixed: say by whom, then why
            self._awaiting_join.discard(ejv.name)
            fixed = self.explanations.get(ejv.name)
            self.explanations[ejv.name] = (
                event.explanation
                if fixed is None
                else replace(event.explanation, text=f"{fixed.text}; {event.explanation.text}")
            )
            return True
        self._set_parallelism(group.names if group else [ejv.name], event.parallelism)
        self.explanations[ejv.name] = event.explanation
        if group is not None:
            self._explain_group(group.names, ejv.name, f"decided for it: {event.parallelism}")
        return True

    def _fits(self, ejv: ExecutionJobVertex, event: ev.VertexParallelismDecided) -> bool:
        """A decision fits while every producer is still finished and the vertex's
        parallelism is open, or fixed (a join awaiting its strategy) at the decided one."""
        if not all(p.is_finished for p in ejv.producers):
            return False
        if ejv.name in self._awaiting_join:
            return ejv.parallelism == event.parallelism
        return ejv.parallelism is None

    @staticmethod
    def _run_time_joins(graph: ExecutionGraph, config: Configuration) -> dict[str, JoinSides]:
        """The vertices whose join's strategy is decided at run time (all, unless the
        strategy is NONE): their inputs are exactly both sides of one shuffled join, and they
        read no sources (whose parallelism would take the decision's place)."""
        if not joins_decided_at_run_time(config):
            return {}
        found = {
            ejv.name: join_sides(ejv.inputs)
            for ejv in graph.job_vertices.values()
            if not ejv.job_vertex.sources
        }
        return {name: sides for name, sides in found.items() if sides is not None}

    def on_inferred(self, event: ev.SourceParallelismInferred) -> None:
        if self.pending.get(event.vertex) == _INFERRING:
            del self.pending[event.vertex]
            self._record_inferred(event)

    def _record_inferred(self, event: ev.SourceParallelismInferred) -> None:
        self.inferred[event.vertex] = event.parallelism
        self.inferred_detail[event.vertex] = event.detail
        if event.split_keys:
            self.split_keys[event.vertex] = event.split_keys
        if event.read_bytes:
            self.read_bytes[event.vertex] = event.read_bytes

    def record_produced(self, partition: int, report: ev.ProducedPartition) -> None:
        """What a finished producer told beyond its bytes: the values that passed its dynamic
        filter, the sample of its range-partitioned output."""
        self.record_filter_values(report.result, report.filter_values)
        self.ranges.record(partition, report)

    def record_filter_values(self, result: str, values: tuple[str, ...]) -> None:
        if values:
            self.filter_values.setdefault(result, set()).update(values)

    def _explain_group(self, names: list[str], origin: str, how: str) -> None:
        """The other members of a forward group take ``origin``'s parallelism: say so."""
        for name in names:
            if name != origin and name not in self.explanations:
                self.explanations[name] = Explanation(
                    f"forward group with {origin!r} (a FORWARD edge joins subtask k to subtask "
                    f"k), whose parallelism was {how}"
                )

    def _set_parallelism(self, names: list[str], parallelism: int) -> None:
        for name in names:
            ejv = self.graph.job_vertices[name]
            if ejv.parallelism is None:
                ejv.parallelism = parallelism

    def export(self) -> tuple:
        return (
            tuple(self.pending.items()),
            tuple(self.inferred.items()),
            tuple(self.explanations.items()),
            tuple((r, tuple(sorted(v))) for r, v in self.filter_values.items()),
            tuple((name, tuple(infos.items())) for name, infos in self._input_infos.items()),
            tuple(self.inferred_detail.items()),
            tuple(self.split_keys.items()),
            tuple(self.read_bytes.items()),
            tuple(self.joins.items()),
            tuple(sorted(self._awaiting_join)),
            self.ranges.export(),
            self.chains.export(),
        )

    def restore(self, image: tuple) -> None:
        (
            pending,
            inferred,
            explanations,
            filter_values,
            input_infos,
            details,
            split_keys,
            read_bytes,
        ) = image[:8]
        if len(image) > 8:  # images written before joins were decided at run time lack them
            self.joins = {name: tuple(joins) for name, joins in image[8]}
            self._awaiting_join = set(image[9])
        if len(image) > 10:  # images written before global sorts were cut by key ranges lack it
            self.ranges.restore(image[10])
        if len(image) > 11:  # and before joins were chained into their producers
            self.chains.restore(image[11])
        self.read_bytes = dict(read_bytes)
        self.pending = dict(pending)
        self.inferred = dict(inferred)
        self.inferred_detail = dict(details)
        self.split_keys = {name: tuple(keys) for name, keys in split_keys}
        self.explanations = dict(explanations)
        self.filter_values = {r: set(v) for r, v in filter_values}
        self._input_infos = {name: dict(infos) for name, infos in input_infos}

    def describe(self) -> tuple:
        return (
            tuple(sorted(self.pending.items())),
            tuple(sorted(self.inferred.items())),
            tuple(sorted(self.split_keys.items())),
            tuple(sorted(self.read_bytes.items())),
            tuple(sorted((k, e.text) for k, e in self.explanations.items())),
            tuple(sorted((k, tuple(sorted(v))) for k, v in self.filter_values.items())),
            tuple((v.name, v.parallelism) for v in self.graph.job_vertices.values()),
            tuple(sorted(self.joins.items())),
            tuple(sorted(self._awaiting_join)),
            self.ranges.describe(),
            self.chains.describe(),
        )
