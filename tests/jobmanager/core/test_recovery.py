"""A JobManager that dies at any point is replaced by one that replays its log, reconciles with
the TaskManagers and finishes the job: the same plan, and only lost or unfinished work again."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobmanager.core.replay import new_state, replay
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode, encode
from jobmanager.model.config import FIXED_DELAY_ATTEMPTS, NUMBER_OF_TASK_SLOTS, RESTART_STRATEGY
from jobmanager.simulation.cluster import uniform_bytes
from tests.jobmanager.core.crash import FINAL, crash_and_recover, submitted
from tests.jobmanager.core.test_properties import adaptive_scenarios, jobs


def allowed_reruns(recovery) -> set:
    """What may run again, as region failover has it: subtasks not finished at the crash and
    producers of lost partitions (everything, if a TaskManager was lost); then, until nothing
    changes, the pipelined region of anything that reruns, every subtask downstream of a
    finished subtask that reruns, and the producers of released partitions a rerun reads."""
    state = recovery.state
    graph = state.graph
    everything = {(v.name, v.subtask) for v in graph.vertices()}
    lost = everything if recovery.lost_task_manager else set(recovery.lost_partitions)
    allowed = (everything - recovery.finished_before) | lost
    regions = [{(v.name, v.subtask) for v in region.vertices} for region in state.regions]
    consumers: dict[str, set[str]] = {}
    for edge in graph.job_graph.edges:
        consumers.setdefault(edge.source.name, set()).add(edge.target.name)
    while True:
        grown = set(allowed)
        for members in regions:
            if members & grown:
                grown |= members
        rerun_producers = {name for name, _ in grown & (recovery.finished_before | lost)}
        downstream = {c for name in rerun_producers for c in consumers.get(name, ())}
        grown |= {pair for pair in everything if pair[0] in downstream}
        rerun_names = {name for name, _ in grown}
        for edge in graph.job_graph.edges:
            if edge.target.name in rerun_names:
                grown |= {
                    (edge.source.name, i) for result, i in recovery.released if result == edge.id
                }
        if grown == allowed:
            return allowed
        allowed = grown


def check(recovery):
    live, state = recovery.live, recovery.state
    assert recovery.terminated is not None and recovery.terminated.status == "FINISHED"
    assert {n: e.parallelism for n, e in state.graph.job_vertices.items()} == {
        n: e.parallelism for n, e in live.state.graph.job_vertices.items()
    }, "the plan changed across the crash"
    rerun = {(v, s) for v, s, _ in recovery.rerun}
    assert rerun <= allowed_reruns(recovery), "a finished task whose output survived ran again"
    deployed = recovery.first.cluster.deployed + recovery.rerun
    attempts: dict = {}
    for v, s, a in deployed:
        assert a > attempts.get((v, s), -1), f"{v}[{s}] attempt {a} deployed twice or late"
        attempts[(v, s)] = a
    fresh = replay(
        new_state(live.job, submitted(live.job, live.config), "test"),
        (decode(encode(e)) for e in recovery.log),
    )
    assert fresh.describe() == state.describe(), "replaying the whole log differs from the run"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs(), st.integers(1, 3), st.integers(0, 2**16), st.floats(0, 1), st.integers(0, 2**16))
def test_a_jobmanager_dying_anywhere_loses_no_finished_work(job, slots, seed, when, fate_seed):
    config = {
        NUMBER_OF_TASK_SLOTS.key: slots,
        RESTART_STRATEGY.key: "fixed-delay",
        FIXED_DELAY_ATTEMPTS.key: 100,
    }
    length = _length(job, config, seed)
    recovery = crash_and_recover(job, config, seed, int(when * length), random.Random(fate_seed))
    check(recovery)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(adaptive_scenarios(), st.floats(0, 1), st.integers(0, 2**16))
def test_adaptive_decisions_survive_the_crash(scenario, when, fate_seed):
    job, config, _, seed, _ = scenario
    model = uniform_bytes(3 << 20)
    length = _length(job, config, seed, model)
    recovery = crash_and_recover(
        job, config, seed, int(when * length), random.Random(fate_seed), byte_model=model
    )
    check(recovery)


def _length(job, config, seed, model=None) -> int:
    from tests.jobmanager.core.harness import Run

    run = Run(job, config, seed=seed, byte_model=model or uniform_bytes(1 << 20))
    run.go()
    return len(run.run.events)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs(), st.integers(1, 3), st.integers(0, 2**16), st.integers(0, 2**16))
def test_a_report_delivered_twice_changes_nothing_the_second_time(job, slots, seed, pick):
    """A TaskManager resends a report a dead JobManager may have taken; the new one may then
    get the same (vertex, subtask, attempt) twice, and must ignore the copy."""
    from tests.jobmanager.core.harness import Run

    config = {NUMBER_OF_TASK_SLOTS.key: slots}
    live = Run(job, config, seed=seed)
    live.go()
    reports = [e for e in live.run.events if isinstance(e, (ev.TaskRunning, *FINAL))]
    repeated = random.Random(pick).sample(reports, k=min(5, len(reports)))
    state = new_state(job, submitted(job, live.config), "test")
    for event in live.run.events:
        state.apply(event)
        if any(event is r for r in repeated):
            before = state.describe()
            assert state.apply(decode(encode(event))) == []
            assert state.describe() == before
    assert state.describe() == live.state.describe()
