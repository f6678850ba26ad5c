"""Properties of runs whose join is decided at run time: every subtask of the join reads the
broadcast side whole and the other side exactly once; a replay of the log up to any step is
the live state; a snapshot taken anywhere keeps the join decisions; a JobManager dying
anywhere is replaced by one that applies them and loses no finished work."""

import random

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from jobmanager.core.state import JobManagerState
from jobmanager.messages import events as ev
from jobmanager.model.config import (
    ADAPTIVE_BROADCAST_JOIN_STRATEGY,
    AVG_DATA_VOLUME_PER_TASK,
    BROADCAST_THRESHOLD,
    FIXED_DELAY_ATTEMPTS,
    MAX_SLOTS,
    NUMBER_OF_TASK_SLOTS,
    RESTART_STRATEGY,
)
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.model.joins import JoinInput
from jobmanager.simulation.cluster import TaskFault
from tests.jobmanager.core.adaptive.test_join_chains import Listed
from tests.jobmanager.core.adaptive.test_runtime_joins import sized
from tests.jobmanager.core.crash import crash_and_recover
from tests.jobmanager.core.harness import Run
from tests.jobmanager.core.test_recovery import check
from tests.jobmanager.core.test_snapshots import check_snapshots_anywhere

KiB = 1 << 10


@st.composite
def join_scenarios(draw):
    kind = draw(st.sampled_from(JoinInput.KINDS))
    g = JobGraph("join")
    tasks = {"left": draw(st.integers(1, 6)), "right": draw(st.integers(1, 6))}
    slots = draw(st.sampled_from([None, 1, 2, 4]))
    if draw(st.booleans()):  # source vertices, listing: the join may chain into one of them
        left, right = (
            g.add_vertex(name, sources=[Listed(tasks[name], draw(st.integers(1, 64)) * KiB)])
            for name in ("left", "right")
        )
        slots = draw(st.sampled_from([1, 2]))  # too few for both: the smaller listing goes first
    else:
        left, right = (g.add_vertex(name, tasks[name]) for name in ("left", "right"))
    join = g.add_vertex(
        "join",
        draw(st.one_of(st.none(), st.integers(1, 4))),
        max_parallelism=draw(st.integers(4, 16)),
    )
    for vertex, side in ((left, "left"), (right, "right")):
        mark = JoinInput("j1", kind, side, draw(st.booleans()))
        g.connect(vertex, join, Partitioner.hash("k"), join=mark, splittable=draw(st.booleans()))
    g.connect(join, g.add_vertex("sink"), Partitioner.FORWARD)
    per_task = {name: draw(st.integers(0, 64)) * KiB for name in ("left", "right", "join")}
    faults = [
        TaskFault(draw(st.sampled_from(["left", "right", "join", "sink"])), 0, 0, "injected")
        for _ in range(draw(st.integers(0, 2)))
    ]
    losses = draw(st.lists(st.integers(3, 30), max_size=1))
    inject = {k: [ev.TaskManagerLost("sim-tm-0", "killed", k)] for k in losses}
    config = {
        RESTART_STRATEGY.key: "fixed-delay",
        FIXED_DELAY_ATTEMPTS.key: 100,
        NUMBER_OF_TASK_SLOTS.key: draw(st.integers(1, 3)),
        MAX_SLOTS.key: slots,
        AVG_DATA_VOLUME_PER_TASK.key: "32 kb",
        BROADCAST_THRESHOLD.key: draw(st.sampled_from([-1, 16 * KiB, 64 * KiB, 1 << 20])),
        ADAPTIVE_BROADCAST_JOIN_STRATEGY.key: draw(
            st.sampled_from(["AUTO", "RUNTIME_ONLY", "NONE"])
        ),
    }
    return g, config, faults, draw(st.integers(0, 2**16)), inject, sized(per_task)


def join_runs():
    return join_scenarios().map(
        lambda s: Run(s[0], s[1], faults=s[2], seed=s[3], inject=s[4], byte_model=s[5])
    )


def joining(run: Run):
    """The vertex running the join: "join", or the chain it became."""
    (ejv,) = [e for e in run.state.graph.job_vertices.values() if e.name.endswith("join")]
    return ejv


def check_reads(run: Run) -> None:
    """The broadcast side whole for every subtask; every (partition, subpartition) of the
    other side read by exactly one subtask."""
    ejv = joining(run)
    joins = run.state.growth.joins.get(ejv.name, ())
    broadcast = {j.side for j in joins if j.is_broadcast}
    for result in ejv.inputs:
        side = result.edge.join.side
        partitions, subpartitions = len(result.partitions), result.subpartition_count(0)
        seen: dict[tuple[int, int], int] = {}
        for k in range(ejv.parallelism):
            for piece in ejv.input_infos[result.id][k].slices:
                for p in piece.partitions:
                    for s in piece.subpartitions:
                        seen[(p, s)] = seen.get((p, s), 0) + 1
        assert set(seen) == {(p, s) for p in range(partitions) for s in range(subpartitions)}
        wanted = ejv.parallelism if side in broadcast else None
        if wanted is not None:
            assert set(seen.values()) == {wanted}
        elif not any(result.edge.splittable for result in ejv.inputs):
            assert set(seen.values()) == {1}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(join_runs())
def test_join_runs_finish_reading_each_side_as_decided(run):
    assert run.go().status == "FINISHED"
    run.check_invariants()
    check_reads(run)
    strategy = run.config[ADAPTIVE_BROADCAST_JOIN_STRATEGY.key]
    assert bool(run.state.growth.joins) is (strategy != "NONE")
    for join in run.state.growth.joins.get(joining(run).name, ()):
        event(f"{join.strategy} join, {join.other_read or 'both sides hashed'}")


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(join_runs())
def test_after_every_step_a_replay_of_a_join_runs_log_so_far_equals_the_live_state(run):
    shadow = JobManagerState(run.job, run.config, job_id="test")
    handle = run.state.handle

    def handle_and_compare(e):
        step = handle(e)
        for logged in (e, *step.events):
            shadow.apply(logged)
        assert shadow.describe() == run.state.describe(), f"the replay differs after {e}"
        return step

    run.run.state.handle = handle_and_compare
    assert run.go().status == "FINISHED"


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(join_runs(), st.floats(0, 1))
def test_a_snapshot_of_a_join_run_keeps_its_join_decisions(run, at):
    run.go()
    check_snapshots_anywhere(run, at)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(join_scenarios(), st.floats(0, 1), st.integers(0, 2**16))
def test_join_decisions_survive_a_jobmanager_dying_anywhere(scenario, when, fate_seed):
    job, config, _, seed, _, model = scenario
    live = Run(job, config, seed=seed, byte_model=model)
    live.go()
    length = len(live.run.events)
    recovery = crash_and_recover(
        job, config, seed, int(when * length), random.Random(fate_seed), byte_model=model
    )
    check(recovery)
    assert recovery.state.growth.joins == live.state.growth.joins
