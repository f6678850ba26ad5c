"""Whole adaptive runs of the real core against simulated TaskManagers."""

import numpy as np
import pytest

from jobmanager.core.state import JobManagerState
from jobmanager.errors import JobGraphError
from jobmanager.messages import events as ev
from jobmanager.model.inference import InferenceContext, SourcePlan
from jobmanager.model.jobgraph import JobGraph, Partitioner, ResultPartitionType
from jobmanager.simulation.cluster import uniform_bytes
from shuffle.ids import PartitionId
from jobmanager.model.config import (
    AVG_DATA_VOLUME_PER_TASK,
    Configuration,
    DEFAULT_SOURCE_PARALLELISM,
    MAX_SLOTS,
    MIN_DATA_VOLUME_PER_TASK,
    NUMBER_OF_TASK_SLOTS,
    SKEWED_THRESHOLD,
    SLOT_PREFETCH,
)
from tests.jobmanager.core.harness import SIZED, Run

MiB, GiB = 1 << 20, 1 << 30


def spread(total_per_task):
    """Each producer task writes ``total_per_task`` bytes spread evenly over subpartitions."""
    return uniform_bytes(total_per_task)


def daily_job():
    g = JobGraph("daily")
    src = g.add_vertex("src", parallelism=10)
    agg = g.add_vertex("agg")
    sink = g.add_vertex("sink")
    g.connect(src, agg, Partitioner.hash("key"))
    g.connect(agg, sink, Partitioner.FORWARD)
    return g


def test_a_forward_group_member_says_whose_parallelism_it_took():
    g = JobGraph("fixed")
    src = g.add_vertex("src", parallelism=4)
    agg = g.add_vertex("agg", parallelism=3)
    sink = g.add_vertex("sink")
    g.connect(src, agg, Partitioner.hash("key"))
    g.connect(agg, sink, Partitioner.FORWARD)
    run = Run(g, byte_model=spread(MiB))
    assert run.go().status == "FINISHED"
    assert run.state.graph.job_vertex("sink").parallelism == 3
    why = run.state.growth.explanations["sink"].text
    assert why.startswith("forward group with 'agg'") and why.endswith("set by the user: 3")


@pytest.mark.parametrize(
    "daily_bytes, expected",
    [(10 * MiB, 1), (1 * GiB, 64), (100 * GiB, 128)],  # 16 MiB per task, at most 128
)
def test_parallelism_follows_the_data_day_by_day(daily_bytes, expected):
    run = Run(daily_job(), byte_model=spread(daily_bytes // 10))
    assert run.go().status == "FINISHED"
    parallelism = {n: v.parallelism for n, v in run.state.graph.job_vertices.items()}
    assert parallelism["agg"] == expected
    assert parallelism["sink"] == expected  # forward group: same parallelism, decided once
    inherited = run.state.growth.explanations["sink"].text  # decided once, for agg, and said so
    assert (
        inherited.startswith("forward group with 'agg'")
        and f"decided for it: {expected}" in inherited
    )
    why = run.state.growth.explanations["agg"]
    assert why.input_bytes == daily_bytes // 10 * 10 and "per task" in why.text
    run.check_invariants()


def test_a_vertex_under_the_slots_worth_of_tasks_is_spread_over_the_jobs_slots():
    """With ``min-data-volume-per-task`` set, 32 MiB at 64 MiB a task runs as two tasks on the
    job's two slots (Spark's parallelismFirst), and a replay rebuilds the same graph."""
    spread_config = {
        AVG_DATA_VOLUME_PER_TASK.key: "64 mb",
        MIN_DATA_VOLUME_PER_TASK.key: "1 mb",
        MAX_SLOTS.key: 2,
    }
    run = Run(daily_job(), config=spread_config, byte_model=spread(32 * MiB // 10))
    assert run.go().status == "FINISHED"
    assert run.state.graph.job_vertex("agg").parallelism == 2
    assert "to spread over the job's 2 slots" in run.state.growth.explanations["agg"].text
    assert run.check_replay().graph.job_vertex("agg").parallelism == 2
    run.check_invariants()


def test_a_replay_applies_recorded_decisions_instead_of_deciding_again():
    run = Run(daily_job(), byte_model=spread(GiB // 10))
    run.go()
    # a JobManager restarted with another data volume per task still rebuilds the same graph
    other = {AVG_DATA_VOLUME_PER_TASK.key: "1 mb"}
    replayed = run.check_replay(config=other)
    assert replayed.graph.job_vertex("agg").parallelism == 64


def skewed_model(hot_subpartition, hot_bytes, other_bytes):
    def model(vertex, subtask, result, n):
        counts = np.full(n, other_bytes, dtype="<i8")
        if result.startswith("probe"):
            counts[hot_subpartition] = hot_bytes
        return counts.tobytes()

    return model


def task_bytes(state, model_bytes):
    """Bytes each consumer task of 'join' reads, from its input ranges."""
    ejv = state.graph.job_vertex("join")
    loads = []
    for k in range(ejv.parallelism):
        total = 0
        for result_id, info in ejv.input_infos.items():
            for sl in info[k].slices:
                for s in sl.subpartitions:
                    total += model_bytes(result_id, s) * len(sl.partitions)
        loads.append(total)
    return loads


def test_a_hot_key_is_spread_and_the_largest_task_shrinks_at_least_4x():
    g = JobGraph("skewed")
    probe = g.add_vertex("probe", parallelism=40)
    build = g.add_vertex("build", parallelism=4)
    join = g.add_vertex("join", max_parallelism=64)
    g.connect(probe, join, Partitioner.hash("k"), splittable=True)
    g.connect(build, join, Partitioner.hash("k"))
    hot, other = 100 * MiB, MiB // 4
    run = Run(
        g,
        {SKEWED_THRESHOLD.key: "64 mb"},
        byte_model=skewed_model(5, hot, other),
    )
    assert run.go().status == "FINISHED"
    run.check_invariants()

    def model_bytes(result_id, s):
        return hot if result_id.startswith("probe") and s == 5 else other

    balanced = task_bytes(run.state, model_bytes)
    p = len(balanced)
    even = []
    for k in range(p):
        first, last = k * 64 // p, (k + 1) * 64 // p - 1
        even.append(
            sum(
                model_bytes("probe->join", s) * 40 + model_bytes("build->join", s) * 4
                for s in range(first, last + 1)
            )
        )
    assert max(even) >= 4 * max(balanced), (max(even), max(balanced))
    assert "skewed subpartition 5" in run.state.growth.explanations["join"].text


class CountingSource:
    """A source that infers its parallelism from a number of files, and remembers what the
    scheduler told it."""

    def __init__(self, files, partition_column=None):
        self.files = files
        self.partition_column = partition_column
        self.contexts = []

    def infer_parallelism(self, context: InferenceContext) -> int:
        self.contexts.append(context)
        files = self.files
        if self.partition_column and context.filter_for(self.partition_column):
            kept = set(context.filter_for(self.partition_column).values)
            files = [f for f in files if f.split("=")[1] in kept]
        return min(len(files), context.parallelism_upper_bound)


class StaticSource(CountingSource):
    def static_parallelism(self):
        return 3


def source_job(*sources, parallelism=None):
    g = JobGraph("sources")
    src = g.add_vertex("src", parallelism=parallelism, sources=sources)
    agg = g.add_vertex("agg")
    g.connect(src, agg, Partitioner.hash("k"))
    return g


def test_a_source_infers_its_parallelism_at_run_time_within_the_upper_bound():
    source = CountingSource([f"f{i}" for i in range(30)])
    config = {DEFAULT_SOURCE_PARALLELISM.key: 12}
    run = Run(source_job(source), config)
    assert run.go().status == "FINISHED"
    assert run.state.graph.job_vertex("src").parallelism == 12
    (context,) = source.contexts
    assert context.parallelism_upper_bound == 12 and context.data_volume_per_task == 16 * MiB
    assert "inferred by its sources 12" in run.state.growth.explanations["src"].text
    run.check_invariants()


class PlannedSource:
    """A source that lists files and keeps what it found (as a FileSource does)."""

    def plan(self, context: InferenceContext) -> SourcePlan:
        return SourcePlan(
            5, ("s0", "s1", "s2", "s3", "s4"), "5 files, 1.0 KiB, 5 splits, listed in 7 ms"
        )

    def __repr__(self) -> str:
        return "PlannedSource()"


def test_the_listing_a_source_did_is_in_its_explanation():
    run = Run(source_job(PlannedSource()))
    assert run.go().status == "FINISHED"
    assert run.state.graph.job_vertex("src").parallelism == 5
    why = run.state.growth.explanations["src"].text
    assert why.startswith("source: inferred by its sources 5")
    assert "PlannedSource() -> 5 (5 files, 1.0 KiB, 5 splits, listed in 7 ms)" in why


def test_user_set_beats_static_beats_dynamic():
    user = CountingSource(["a"] * 9)
    run = Run(source_job(user, parallelism=2))
    run.go()
    assert run.state.graph.job_vertex("src").parallelism == 2 and user.contexts == []
    static = StaticSource(["a"] * 9)
    run = Run(source_job(static))
    run.go()
    assert run.state.graph.job_vertex("src").parallelism == 3 and static.contexts == []


def test_several_sources_take_the_maximum():
    run = Run(source_job(CountingSource(["a"] * 5), CountingSource(["b"] * 7)))
    run.go()
    assert run.state.graph.job_vertex("src").parallelism == 7


def test_dynamic_filtering_from_an_upstream_vertex_reaches_the_source():
    g = JobGraph("dpp")
    dim = g.add_vertex("dim", parallelism=2)
    days = [f"date=2026-11-{d:02d}" for d in range(1, 31)]
    fact_source = CountingSource(days, partition_column="date")
    fact = g.add_vertex("fact", sources=[fact_source])
    g.connect(dim, fact, Partitioner.BROADCAST, dynamic_filtering="date")
    out = g.add_vertex("out")
    g.connect(fact, out, Partitioner.hash("k"))
    survivors = {0: ("2026-11-01", "2026-11-02"), 1: ("2026-11-02", "2026-11-21")}
    run = Run(g, filter_values=lambda result, subtask: survivors[subtask])
    assert run.go().status == "FINISHED"
    (context,) = fact_source.contexts
    (info,) = context.dynamic_filtering
    assert info.column == "date" and info.values == ("2026-11-01", "2026-11-02", "2026-11-21")
    # a vertex that is both a source and a consumer takes the larger of the two answers
    assert run.state.graph.job_vertex("fact").parallelism == 3
    run.check_invariants()


def test_a_failing_inference_fails_the_job_naming_the_vertex():
    class Broken:
        def infer_parallelism(self, context):
            raise FileNotFoundError("/data/orders: no such file or directory")

    run = Run(source_job(Broken()))
    terminated = run.go()
    assert terminated.status == "FAILED"
    assert "vertex 'src'" in terminated.cause and "/data/orders" in terminated.cause


def test_forward_groups_never_exceed_a_members_max_parallelism():
    g = JobGraph("fwd")
    src = g.add_vertex("src", parallelism=4)
    a = g.add_vertex("a", max_parallelism=100)
    b = g.add_vertex("b", max_parallelism=6)
    g.connect(src, a, Partitioner.hash("k"))
    g.connect(a, b, Partitioner.FORWARD)
    run = Run(g, byte_model=spread(GiB))
    run.go()
    assert run.state.graph.job_vertex("a").parallelism == 6
    assert run.state.graph.job_vertex("b").parallelism == 6


def test_unset_partitioners_become_rescale_in_adaptive_mode():
    g = JobGraph("rescale")
    src = g.add_vertex("src", parallelism=4)
    m = g.add_vertex("map")
    g.connect(src, m)
    run = Run(g, byte_model=spread(40 * MiB))
    run.go()
    result = run.state.graph.results["src->map"]
    assert str(result.edge.partitioner) == "rescale"
    assert run.state.graph.job_vertex("map").parallelism == 10  # 160 MiB / 16 MiB
    run.check_invariants()


def test_the_adaptive_scheduler_refuses_pipelined_edges_by_name():
    g = JobGraph()
    g.connect(
        g.add_vertex("a"), g.add_vertex("b"), Partitioner.REBALANCE, ResultPartitionType.PIPELINED
    )
    with pytest.raises(JobGraphError, match="edge 'a->b' is pipelined"):
        JobManagerState(g)


def finish_sources(step, attempt=0):
    """Report the ten source tasks finished through ``step`` (``handle`` or ``apply``)."""
    out = None
    for k in range(10):
        out = step(
            ev.TaskFinished("src", k, attempt, (ev.ProducedPartition.of("src->agg", [MiB] * 128),))
        )
    return out


def test_the_core_decides_as_it_handles_and_returns_the_decision_to_record():
    state = JobManagerState(daily_job(), Configuration(SIZED), job_id="live")
    state.handle(ev.JobStarted())
    state.handle(ev.TaskManagerRegistered("tm", 10))
    step = finish_sources(state.handle)
    (decision,) = step.events
    assert type(decision) is ev.VertexParallelismDecided and decision.vertex == "agg"
    assert state.graph.job_vertex("agg").parallelism == decision.parallelism == 64
    assert {c.vertex for c in step.commands if type(c).__name__ == "DeployTask"} == {"agg"}


def test_applying_a_log_decides_nothing_and_a_take_over_decides_what_was_not_logged():
    """A log that ends between the sources' reports and the decision they led to (the
    JobManager died before writing it): the replay leaves the vertex waiting, and the new
    JobManager decides it as it handles its first event."""
    state = JobManagerState(daily_job(), Configuration(SIZED), job_id="replayed")
    state.apply(ev.JobStarted())
    state.apply(ev.TaskManagerRegistered("tm", 10))
    assert not any(type(c).__name__ == "DeployTask" for c in finish_sources(state.apply))
    assert state.graph.job_vertex("agg").parallelism is None
    report = ev.TaskManagerReport(
        "tm", 10, "", "", (), (), tuple((PartitionId("src->agg", k), 0) for k in range(10))
    )
    step = state.handle(ev.JobManagerRecovered(0, (report,)))
    assert [d.vertex for d in step.events] == ["agg"]
    assert state.graph.job_vertex("agg").parallelism == 64


def test_a_decision_logged_after_its_inputs_were_reset_is_dropped_and_made_again():
    """Tidal once sent decisions back through the mailbox, so an older log may hold one that
    arrived after a failover reset its inputs: it no longer fits, and is made again."""
    state = JobManagerState(daily_job(), Configuration(SIZED), job_id="stale")
    state.apply(ev.JobStarted())
    state.apply(ev.TaskManagerRegistered("tm", 10))
    finish_sources(state.apply)
    decision = state.growth.decision_for("agg")
    # meanwhile the TaskManager holding src's output dies, and src is reset to run again
    commands = state.apply(ev.TaskManagerLost("tm", "killed", 0))
    (timer,) = [c for c in commands if type(c).__name__ == "StartTimer"]
    state.apply(ev.TimerFired(timer.token))
    state.apply(decision)
    assert state.graph.job_vertex("agg").parallelism is None
    state.handle(ev.TaskManagerRegistered("tm-2", 10))
    assert [d.vertex for d in finish_sources(state.handle, attempt=1).events] == ["agg"]


def test_the_jobs_sources_start_together_largest_first():
    """Flink initialises every source when the job starts; here their listings come back one
    by one, and none is deployed before the last: then the one reading the most goes first,
    so on two slots the long task does not wait behind a short one."""
    from jobmanager.core import commands as cmd
    from jobmanager.core.state import JobManagerState
    from jobmanager.messages import events as ev
    from jobmanager.model.config import Configuration
    from jobmanager.model.jobgraph import JobGraph, Partitioner
    from jobmanager.model.sources import FileSource

    g = JobGraph("q3")
    names = ("customer", "orders", "lineitem")
    sources = [g.add_vertex(name, sources=[FileSource(f"/{name}")]) for name in names]
    join = g.add_vertex("join")
    for source in sources:
        g.connect(source, join, Partitioner.hash("k"))
    config = Configuration({NUMBER_OF_TASK_SLOTS.key: 2, SLOT_PREFETCH.key: 0})
    state = JobManagerState(g, config, "q3", None, 2)
    asked = [
        c.vertex
        for c in state.handle(ev.JobStarted()).commands
        if type(c) is cmd.InferSourceParallelism
    ]
    assert asked == list(names)
    assert not state.handle(ev.TaskManagerRegistered("tm-0", 2)).commands

    def answer(event) -> list[str]:
        """Handle ``event`` (and the decisions it leads to); the vertices deployed."""
        return [c.vertex for c in state.handle(event).commands if type(c) is cmd.DeployTask]

    for name, read in (("customer", 1 << 20), ("orders", 14 << 20)):
        assert answer(ev.SourceParallelismInferred(name, 1, "", (), read)) == []
        assert not state.graph.job_vertex(name).is_initialized
    lineitem = ev.SourceParallelismInferred("lineitem", 1, "", (), 63 << 20)
    assert answer(lineitem) == ["lineitem", "orders"]  # customer waits for a slot


@pytest.mark.parametrize("task_managers_needed", [1, 2])
def test_the_first_task_manager_is_asked_for_while_the_sources_are_sized(task_managers_needed):
    """A lease is a few round trips through the ResourceManager: asked for at the start, it
    overlaps the sources' listings instead of following them. Only the first TaskManager is
    asked ahead; one more is asked for once the sizes say the job needs it."""
    from jobmanager.core import commands as cmd
    from jobmanager.model.config import Configuration
    from jobmanager.model.sources import FileSource

    g = JobGraph("scan")
    g.add_vertex("scan", sources=[FileSource("/lineitem")])
    config = Configuration({NUMBER_OF_TASK_SLOTS.key: 2, SLOT_PREFETCH.key: 0})
    state = JobManagerState(g, config, "scan", None, 4)
    started = state.handle(ev.JobStarted()).commands
    assert [type(c) for c in started] == [cmd.InferSourceParallelism, cmd.RequestTaskManagers]
    assert started[1] == cmd.RequestTaskManagers(1, 2)
    tasks = 2 * task_managers_needed
    sized = state.handle(ev.SourceParallelismInferred("scan", tasks, "", (), tasks << 20)).commands
    more = [c for c in sized if type(c) is cmd.RequestTaskManagers]
    assert more == ([cmd.RequestTaskManagers(1, 2)] if task_managers_needed == 2 else [])
    deployed = state.handle(ev.TaskManagerRegistered("tm-0", 2)).commands
    assert [(c.vertex, c.subtask) for c in deployed] == [("scan", 0), ("scan", 1)]
