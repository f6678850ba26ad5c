"""A snapshot is the state itself: restored, it describes equal to the state it was taken of,
and answers every later event with the same commands."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobmanager.core import snapshot as snapshots
from jobmanager.core.replay import new_state, replay
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode, encode
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.simulation.cluster import uniform_bytes
from tests.jobmanager.core.crash import submitted
from tests.jobmanager.core.harness import Run
from tests.jobmanager.core.test_properties import adaptive_scenarios, scenarios


def check_snapshots_anywhere(run: Run, at: float) -> None:
    events = [decode(encode(e)) for e in run.run.events]
    k = int(at * len(events))
    start = submitted(run.job, run.config)
    before = replay(new_state(run.job, start, "test"), events[:k])
    image = decode(encode(snapshots.take(before)))
    restored = new_state(run.job, start, "test", snapshot=image)
    assert restored.describe() == before.describe()
    for event in events[k:]:
        assert restored.apply(event) == before.apply(event), f"they answer {event} apart"
    assert restored.describe() == before.describe() == run.state.describe()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.floats(0, 1))
def test_a_snapshot_taken_anywhere_restores_the_same_state(scenario, at):
    job, config, faults, seed, inject = scenario
    run = Run(job, config, faults=faults, seed=seed, inject=inject)
    run.go()
    check_snapshots_anywhere(run, at)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(adaptive_scenarios(), st.floats(0, 1))
def test_a_snapshot_keeps_the_adaptive_decisions(scenario, at):
    job, config, faults, seed, inject = scenario
    run = Run(
        job, config, faults=faults, seed=seed, inject=inject, byte_model=uniform_bytes(3 << 20)
    )
    run.go()
    check_snapshots_anywhere(run, at)


def test_a_snapshot_keeps_how_the_job_ended_and_where_it_was_archived():
    job = JobGraph("ended")
    job.connect(job.add_vertex("a", 2), job.add_vertex("b", 2), Partitioner.REBALANCE)
    run = Run(job)
    run.go()
    start = submitted(job, run.config)
    state = replay(new_state(job, start, "test"), run.run.events)
    state.apply(ev.JobEnded("FINISHED", ""))
    state.apply(ev.JobArchived("file:///history/test", ""))
    image = decode(encode(snapshots.take(state)))
    restored = new_state(job, start, "test", snapshot=image)
    assert restored.ended == ("FINISHED", "")
    assert restored.archived == ev.JobArchived("file:///history/test", "")
