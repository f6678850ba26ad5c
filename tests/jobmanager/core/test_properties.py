"""Properties of whole runs of the core, over random jobs, clusters, faults and event orders."""

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from jobmanager.core.state import JobManagerState
from jobmanager.messages import events as ev
from jobmanager.model.config import (
    AVG_DATA_VOLUME_PER_TASK,
    FIXED_DELAY_ATTEMPTS,
    MAX_SLOTS,
    NUMBER_OF_TASK_SLOTS,
    RESTART_STRATEGY,
    SLOT_PREFETCH,
)
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.simulation.cluster import TaskFault
from tests.builders import BLOCKING, PIPELINED
from tests.jobmanager.core.harness import Run


@st.composite
def jobs(draw, pipelined=True):
    n = draw(st.integers(1, 5))
    g = JobGraph("random")
    vertices = [g.add_vertex(f"v{i}", draw(st.integers(1, 4))) for i in range(n)]
    for j in range(1, n):
        for i in draw(st.lists(st.integers(0, j - 1), max_size=2, unique=True)):
            partitioner = draw(st.sampled_from([Partitioner.REBALANCE, Partitioner.RESCALE]))
            result = draw(st.sampled_from([BLOCKING, PIPELINED] if pipelined else [BLOCKING]))
            g.connect(vertices[i], vertices[j], partitioner, result)
    return g


@st.composite
def scenarios(draw):
    job = draw(jobs())
    tasks = [(v.name, s) for v in job.vertices for s in range(v.parallelism)]
    faults = [
        TaskFault(name, subtask, attempt, "injected")
        for name, subtask in draw(st.lists(st.sampled_from(tasks), max_size=3, unique=True))
        for attempt in range(draw(st.integers(1, 2)))
    ]
    slots = draw(st.integers(1, 3))
    losses = draw(st.lists(st.tuples(st.integers(3, 40), st.booleans()), max_size=2))
    inject = {
        n: [lambda cluster, i=i, n=n, up=up: cluster.lost(f"sim-tm-{i}", n, node_up=up)]
        for i, (n, up) in enumerate(dict(losses).items())
    }
    config = {
        NUMBER_OF_TASK_SLOTS.key: slots,
        RESTART_STRATEGY.key: "fixed-delay",
        FIXED_DELAY_ATTEMPTS.key: 100,
    }
    return job, config, faults, draw(st.integers(0, 2**16)), inject


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_every_job_finishes_each_attempt_runs_once_and_replay_equals_live(scenario):
    """A TaskManager lost on a node that is up reruns no finished task: its files are whole."""
    job, config, faults, seed, inject = scenario
    run = Run(job, config, faults=faults, seed=seed, inject=inject)
    assert run.go().status == "FINISHED"
    run.check_invariants()
    surveyed = {e.task_manager: e.kept for e in run.run.events if type(e) is ev.TaskManagerLost}
    for loss in run.state.losses:
        assert loss.rerun == 0 or not surveyed[loss.task_manager], loss


@settings(max_examples=100, deadline=None)
@given(jobs(pipelined=False), st.integers(0, 2**16))
def test_blocking_jobs_finish_with_one_slot(job, seed):
    run = Run(job, {MAX_SLOTS.key: 1, SLOT_PREFETCH.key: 0}, seed=seed)
    assert run.go().status == "FINISHED"
    assert run.max_active <= 1
    run.check_invariants()


@settings(max_examples=50, deadline=None)
@given(jobs())
def test_a_job_whose_largest_region_fits_one_slot_finishes_with_one_slot(job):
    probe = JobManagerState(job)
    probe.handle(ev.JobStarted())
    from jobmanager.core.scheduler.slots import slots_needed

    fits = max(slots_needed(r.vertices) for r in probe.regions) == 1
    event("largest region fits one slot" if fits else "a region needs more slots: filtered out")
    assume(fits)  # hypothesis counts, and checks the share of, what it filters
    run = Run(job, {MAX_SLOTS.key: 1})
    assert run.go().status == "FINISHED"


@st.composite
def adaptive_scenarios(draw):
    n = draw(st.integers(1, 5))
    g = JobGraph("adaptive")
    vertices = []
    for i in range(n):
        fixed = draw(st.one_of(st.none(), st.integers(1, 4)))
        maximum = draw(st.integers(fixed or 1, 8))
        vertices.append(g.add_vertex(f"v{i}", fixed, max_parallelism=maximum))
    for j in range(1, n):
        for i in draw(st.lists(st.integers(0, j - 1), max_size=2, unique=True)):
            partitioner = draw(
                st.sampled_from(
                    [
                        Partitioner.REBALANCE,
                        Partitioner.RESCALE,
                        Partitioner.BROADCAST,
                        Partitioner.hash("k"),
                    ]
                )
            )
            g.connect(
                vertices[i], vertices[j], partitioner, BLOCKING, splittable=draw(st.booleans())
            )
    faults = [
        TaskFault(f"v{draw(st.integers(0, n - 1))}", 0, 0, "injected")
        for _ in range(draw(st.integers(0, 2)))
    ]
    losses = draw(st.lists(st.integers(3, 40), max_size=1))
    inject = {k: [ev.TaskManagerLost("sim-tm-0", "killed", k)] for k in losses}
    config = {
        RESTART_STRATEGY.key: "fixed-delay",
        FIXED_DELAY_ATTEMPTS.key: 100,
        NUMBER_OF_TASK_SLOTS.key: draw(st.integers(1, 3)),
        AVG_DATA_VOLUME_PER_TASK.key: "1 mb",
    }
    return g, config, faults, draw(st.integers(0, 2**16)), inject


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(adaptive_scenarios())
def test_adaptive_jobs_finish_and_replay_equals_live(scenario):
    job, config, faults, seed, inject = scenario
    from jobmanager.simulation.cluster import uniform_bytes

    run = Run(
        job, config, faults=faults, seed=seed, inject=inject, byte_model=uniform_bytes(3 << 20)
    )
    assert run.go().status == "FINISHED"
    run.check_invariants()
    for ejv in run.state.graph.job_vertices.values():
        assert 1 <= ejv.parallelism <= ejv.max_parallelism


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(adaptive_scenarios())
def test_after_every_step_a_replay_of_the_log_so_far_equals_the_live_state(scenario):
    """Live, the core decides as it handles; its decisions go to the log after the event that
    led to them. A replay of the log up to any step (``apply``: it decides nothing) is the live
    state there, so a JobManager dying after any step is rebuilt as it was."""
    job, config, faults, seed, inject = scenario
    from jobmanager.simulation.cluster import uniform_bytes

    run = Run(
        job, config, faults=faults, seed=seed, inject=inject, byte_model=uniform_bytes(3 << 20)
    )
    shadow = JobManagerState(job, run.config, job_id="test")
    handle, decided = run.state.handle, []

    def handle_and_compare(e):
        step = handle(e)
        decided.extend(step.events)
        for logged in (e, *step.events):
            shadow.apply(logged)
        assert shadow.describe() == run.state.describe(), f"the replay differs after {e}"
        return step

    run.run.state.handle = handle_and_compare
    assert run.go().status == "FINISHED"
    event("the core made decisions" if decided else "every parallelism was set")
