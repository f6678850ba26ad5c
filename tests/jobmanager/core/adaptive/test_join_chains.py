"""A join chained into its big side's scan at run time (FLIP-470's forward case): the side
listed smaller runs first, and when it turns out small the join runs in the other side's
producer tasks, whose output is then never written. Whole runs of the core against simulated
TaskManagers, replayed event by event."""

from collections import namedtuple

import pytest

from jobmanager.core.executiongraph import WholeInputInfo
from jobmanager.messages import events as ev
from jobmanager.model.chaining import ChainedOperator
from jobmanager.model.config import MAX_SLOTS
from jobmanager.model.inference import SourcePlan
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.model.join_chains import fuse_graph, join_chain_candidates
from jobmanager.model.joins import JoinInput
from tests.jobmanager.core.adaptive.test_runtime_joins import MiB, sized
from tests.jobmanager.core.harness import Run

Split = namedtuple("Split", "length")
SLOTS = MAX_SLOTS.key


class Listed:
    """A source listing ``tasks`` splits holding ``size`` bytes together."""

    def __init__(self, tasks, size):
        self.tasks, self.size = tasks, size

    def plan(self, context):
        return SourcePlan(
            self.tasks, tuple(Split(self.size // self.tasks) for _ in range(self.tasks))
        )

    def __repr__(self):
        return f"Listed({self.tasks}, {self.size})"


def join_job(kind="inner", small=(2, 8 * MiB), big=(6, 64 * MiB), dim=False):
    g = JobGraph("chain")
    orders = g.add_vertex("orders", sources=[Listed(*small)], operator="scan orders")
    lineitem = g.add_vertex("lineitem", sources=[Listed(*big)], operator="scan lineitem")
    join = g.add_vertex("join", operator="join")
    sink = g.add_vertex("sink", operator="sink")
    if dim:
        nation = g.add_vertex("nation", 1, operator="nation")
        g.connect(nation, join, Partitioner.BROADCAST)
    g.connect(lineitem, join, Partitioner.hash("k"), join=JoinInput("j1", kind, "left", True))
    g.connect(orders, join, Partitioner.hash("k"), join=JoinInput("j1", kind, "right", True))
    g.connect(join, sink, Partitioner.hash("g"))
    return g


def run(job, written, slots=2, **config):
    settings = {SLOTS: slots, **config}
    r = Run(job, settings, byte_model=sized(written))
    assert r.go().status == "FINISHED"
    r.check_invariants()
    return r


def events(r, kind):
    return [e for e in r.run.events if type(e) is kind]


def test_a_small_side_finishing_first_chains_the_join_into_the_unstarted_scan():
    r = run(join_job(), {"orders": MiB // 4, "lineitem": 16 * MiB})
    (chained,) = events(r, ev.JoinChained)
    assert (chained.producer, chained.consumer, chained.vertex) == (
        "lineitem",
        "join",
        "lineitem -> join",
    )
    decision = chained.decision
    assert (decision.strategy, decision.side, decision.other_read) == (
        "broadcast",
        "right",
        "chained",
    )
    assert (decision.left_bytes, decision.right_bytes) == (-1, MiB // 2)
    assert decision.decided_after == ("orders",)
    graph = r.state.graph
    assert list(graph.job_vertices) == ["orders", "lineitem -> join", "sink"]
    fused = graph.job_vertex("lineitem -> join")
    assert fused.parallelism == 6  # the scan's, from its listing
    assert fused.input_infos["orders->join"] == WholeInputInfo(2, 128, 6)
    assert "lineitem->join" not in graph.results  # never written
    # the scan started only after the orders side finished: no lineitem task ran before
    deployed = [v for v, _, _ in r.cluster.deployed]
    assert deployed.index("lineitem -> join") > max(
        i for i, v in enumerate(deployed) if v == "orders"
    )
    why = r.state.growth.explanations["lineitem -> join"].text
    assert "started after the right side of join 'j1' finished" in why
    assert "broadcast join chained into 'lineitem'" in why
    (decided,) = [
        e for e in events(r, ev.VertexParallelismDecided) if e.vertex == "lineitem -> join"
    ]
    assert decided.joins == (decision,)


def test_a_side_that_turns_out_big_releases_the_scan_and_the_join_stays_shuffled():
    r = run(join_job(), {"orders": 8 * MiB, "lineitem": 16 * MiB})
    assert events(r, ev.JoinChained) == []
    assert list(r.state.graph.job_vertices) == ["orders", "lineitem", "join", "sink"]
    (join,) = [e for e in events(r, ev.VertexParallelismDecided) if e.vertex == "join"][0].joins
    assert join.strategy == "shuffled"
    assert (
        "that side was above the threshold, so it started then"
        in r.state.growth.explanations["lineitem"].text
    )


def test_nothing_is_held_when_the_slots_run_every_source_at_once():
    r = run(join_job(), {"orders": MiB // 4, "lineitem": 16 * MiB}, slots=8)
    assert events(r, ev.JoinChained) == []
    (join,) = [e for e in events(r, ev.VertexParallelismDecided) if e.vertex == "join"][0].joins
    assert (join.strategy, join.other_read) == ("broadcast", "local")


@pytest.mark.parametrize(
    "kind, chains", [("inner", True), ("left", True), ("right", False), ("full", False)]
)
def test_only_a_side_the_join_kind_may_broadcast_is_waited_for(kind, chains):
    """lineitem is the left side: the orders (right) side may be broadcast by inner and left
    outer joins only."""
    r = run(join_job(kind), {"orders": MiB // 4, "lineitem": 16 * MiB})
    assert bool(events(r, ev.JoinChained)) is chains


def test_a_side_that_something_after_the_join_needs_hashed_is_never_chained():
    """An aggregate in the join's task over the join's keys needs the scan's rows hashed: a
    task of the scan holds every key's rows, so the join stays a vertex of its own."""
    job = join_job()
    job.vertex("lineitem").outputs[0].join = JoinInput("j1", "inner", "left", False)
    r = run(job, {"orders": MiB // 4, "lineitem": 16 * MiB})
    assert events(r, ev.JoinChained) == []
    (join,) = [e for e in events(r, ev.VertexParallelismDecided) if e.vertex == "join"][0].joins
    assert (join.strategy, join.other_read) == ("broadcast", "subpartitions")


def test_a_broadcast_input_of_the_join_stays_an_input_of_the_chained_vertex():
    r = run(join_job(dim=True), {"orders": MiB // 4, "lineitem": 16 * MiB, "nation": 1000})
    fused = r.state.graph.job_vertex("lineitem -> join")
    assert [i.id for i in fused.inputs] == ["nation->join", "orders->join"]
    operator = fused.job_vertex.operator
    assert isinstance(operator, ChainedOperator)
    # the scan reads the task's one source; the join the scan's rows where it read lineitem,
    # then the nation and orders inputs (after the source) where it read them
    assert operator.feeds == ((0,), (1, None, 2))


def test_the_chain_survives_a_replay_of_every_prefix_and_a_snapshot():
    from jobmanager.core import snapshot as snapshots
    from jobmanager.core.state import JobManagerState
    from jobmanager.messages.codec import decode, encode

    job = join_job()
    r = run(job, {"orders": MiB // 4, "lineitem": 16 * MiB})
    at = next(i for i, e in enumerate(r.run.events) if type(e) is ev.JoinChained)
    for cut in (at, at + 1, at + 3, len(r.run.events)):
        state = JobManagerState(job, r.config, job_id="test")
        for event in r.run.events[:cut]:
            state.apply(decode(encode(event)))
        image = decode(encode(snapshots.take(state)))
        restored = snapshots.restore(job, r.config, image, "test")
        assert restored.describe() == state.describe()


def test_the_shell_and_the_core_name_and_build_the_same_chained_vertex():
    job = join_job()
    (candidate,) = [c for c in join_chain_candidates(job) if c.producer == "lineitem"]
    assert candidate.other == "orders->join"
    fused = fuse_graph(job, "lineitem", "join")
    assert [v.name for v in fused.vertices] == ["orders", "lineitem -> join", "sink"]
    assert sorted(e.id for e in fused.edges) == ["join->sink", "orders->join"]
    assert [v.name for v in job.vertices] == ["orders", "lineitem", "join", "sink"]  # untouched
