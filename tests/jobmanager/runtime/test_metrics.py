"""What ``JobMetrics`` makes of what a JobManager sees, without Ray: the real core runs against
simulated TaskManagers, every event goes to ``JobMetrics`` as the actor hands it over, and the
instruments record what they were given. The truth to compare with is every change of a task's
state the core made (``TransitionLog.move`` sees them all)."""

from __future__ import annotations

from collections import Counter, defaultdict

from hypothesis import HealthCheck, given, settings

from jobmanager.core.executiongraph import ExecutionState
from jobmanager.core.step import Step
from jobmanager.messages import events as ev
from jobmanager.model.config import AVG_DATA_VOLUME_PER_TASK, NUMBER_OF_TASK_SLOTS
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.runtime.eventlog import EventLog
from jobmanager.runtime.metrics import JobMetrics
from jobmanager.simulation.cluster import uniform_bytes
from tests.jobmanager.core.harness import Run
from tests.jobmanager.core.test_properties import scenarios

S = ExecutionState


class Recorded:
    """Stands in for one Ray metric: keeps, per vertex (None for the job's own), the sum of
    what was added, the last value set, or every value observed."""

    def __init__(self) -> None:
        self.values: dict[str | None, float] = defaultdict(float)
        self.observed: list[float] = []

    def inc(self, value: float, tags: dict[str, str]) -> None:
        assert value > 0  # Ray refuses anything else
        self.values[self._where(tags)] += value

    def set(self, value: float, tags: dict[str, str]) -> None:
        self.values[self._where(tags)] = value

    def observe(self, value: float, tags: dict[str, str]) -> None:
        self._where(tags)
        self.observed.append(value)

    @staticmethod
    def _where(tags: dict[str, str]) -> str | None:
        assert tags["job_id"] == "job-1" and tags["job_name"] == JOB_NAME
        if "strategy" in tags:
            return f"{tags['vertex']}: {tags['strategy']}"
        return tags.get("vertex")


JOB_NAME = "metrics"


class Observed:
    """A harness ``Run`` whose events also go to a ``JobMetrics``, each task report twice (as a
    TaskManager resends it after a JobManager recovery), with the core's own state changes
    counted beside, per vertex, as (state before, state after)."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.instruments: dict[str, Recorded] = defaultdict(Recorded)
        self.metrics = JobMetrics("job-1", JOB_NAME, run.state, self.instruments)
        self.moves: Counter = Counter()
        transitions = run.state.graph.transitions
        move = transitions.move

        def counted_move(vertex, to):
            self.moves[(vertex.name, vertex.state, to)] += 1
            move(vertex, to)

        transitions.move = counted_move
        handle = run.state.handle

        def observed_handle(event):
            """As the JobManager's main loop does, one event to a batch."""
            step = handle(event)
            self.metrics.saw_event(event, step.commands)
            for decided in step.events:
                self.metrics.saw_decision(decided)
            applied = 1 + len(step.events)  # the decisions it made are applied events too
            if type(event) in (ev.TaskFinished, ev.TaskFailed, ev.TaskCanceled, ev.TaskRunning):
                again = handle(event)
                assert again == Step()
                self.metrics.saw_event(event, again.commands)
            self.metrics.loop_batch(0.001, applied)
            return step

        run.state.handle = observed_handle

    def ended(self, name: str, to: ExecutionState) -> int:
        """How many attempts of ``name`` the core moved from a slot to ``to``."""
        return sum(
            n
            for (v, before, after), n in self.moves.items()
            if v == name and after is to and before.holds_slot
        )

    def __getitem__(self, metric: str) -> dict[str | None, float]:
        return self.instruments[metric].values


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_task_counters_equal_what_the_core_did_through_failures_losses_and_resent_reports(scenario):
    job, config, faults, seed, inject = scenario
    observed = Observed(
        Run(job, config, faults=faults, seed=seed, inject=inject, reports_running=True)
    )
    assert observed.run.go().status == "FINISHED"
    deployed = Counter(v for v, _, _ in observed.run.cluster.deployed)
    for vertex in job.vertices:
        name = vertex.name
        assert observed["deployed"].get(name, 0) == deployed[name]
        assert observed["finished"].get(name, 0) == observed.ended(name, S.FINISHED)
        assert observed["failed"].get(name, 0) == observed.ended(name, S.FAILED)
        assert observed["running"].get(name, 0) == 0
        assert observed["parallelism"][name] == vertex.parallelism


def sums_graph() -> JobGraph:
    """The shape of the runtime tests' ``sum_job``: a fixed source, an adaptive aggregation,
    and a sink in the aggregation's forward group (its parallelism comes with no decision of
    its own)."""
    g = JobGraph(JOB_NAME)
    numbers = g.add_vertex("numbers", 4)
    total = g.add_vertex("sum")
    sink = g.add_vertex("sink")
    g.connect(numbers, total, Partitioner.hash("key"))
    g.connect(total, sink, Partitioner.FORWARD)
    return g


def test_bytes_written_and_every_vertexs_parallelism_as_the_status_reads_them():
    config = {AVG_DATA_VOLUME_PER_TASK.key: "1 mb"}
    run = Run(sums_graph(), config, byte_model=uniform_bytes(3 << 20))
    observed = Observed(run)
    assert run.go().status == "FINISHED"
    for ejv in run.state.graph.job_vertices.values():
        written = sum(r.produced.total for r in ejv.outputs if r.produced is not None)
        assert observed["written"].get(ejv.name, 0) == written
        assert observed["parallelism"][ejv.name] == ejv.parallelism
        assert observed["finished"][ejv.name] == observed["deployed"][ejv.name] == ejv.parallelism
    assert observed["parallelism"]["sum"] > 1  # decided, and given to the sink as well
    assert observed["written"]["numbers"] == 4 * (3 << 20)
    assert observed["events"][None] == len(run.run.events)  # decisions included
    decided = sum(type(e) is ev.VertexParallelismDecided for e in run.run.events)
    assert decided and len(observed.instruments["loop"].observed) == len(run.run.events) - decided


def test_a_jobmanager_taking_the_job_over_counts_only_what_it_sees_and_knows_what_runs():
    run = Run(sums_graph(), {NUMBER_OF_TASK_SLOTS.key: 4}, reports_running=True)
    first = Observed(run)
    assert run.run.run(stop_after=11) is None  # the JobManager dies here: the sum runs
    finished_before = first.ended("numbers", S.FINISHED)
    running = sum(1 for v in run.state.graph.vertices() if v.state is S.RUNNING)
    assert finished_before and running
    resent = [
        ev.TaskFinished("numbers", v.subtask, v.attempt)
        for v in run.state.graph.job_vertices["numbers"].vertices
        if v.state is S.FINISHED
    ]
    run.state.handle = run._observed_handle  # the new process: a new JobMetrics, fresh counters
    second = Observed(run)
    assert sum(second["running"].values()) == running
    run.run.queue.extendleft(resent)
    assert run.run.run(first=()) is not None
    assert second["finished"]["numbers"] == 4 - finished_before
    assert second["finished"]["numbers"] == second.ended("numbers", S.FINISHED)
    assert second["running"]["numbers"] == 0


def test_the_event_log_size_is_what_the_log_holds_on_disk(tmp_path):
    metrics = JobMetrics("job-1", JOB_NAME, Run(sums_graph()).state, defaultdict(Recorded))
    log = EventLog(str(tmp_path), flush_bytes=1 << 20)
    for n in range(3):
        log.append(ev.TimerFired(n), 1000 + n)
    log.flush()
    metrics.saw_log(log.size)
    on_disk = sum(p.stat().st_size for p in tmp_path.iterdir())
    assert metrics.instruments["log"].values[None] == on_disk > 0
    log.close()
    reopened = EventLog(str(tmp_path))  # a JobManager taking the job over counts what was there
    reopened.append(ev.TimerFired(9), 2000)
    reopened.flush()
    metrics.saw_log(reopened.size)
    assert metrics.instruments["log"].values[None] == sum(
        p.stat().st_size for p in tmp_path.iterdir()
    )


def test_a_size_read_before_the_last_flush_and_reported_after_it_is_ignored(tmp_path):
    """The flushing thread reads the log's size, the main loop flushes its last events and
    reports, then the flushing thread reports what it read: the gauge keeps the log's size."""
    metrics = JobMetrics("job-1", JOB_NAME, Run(sums_graph()).state, defaultdict(Recorded))
    log = EventLog(str(tmp_path), flush_bytes=1 << 20)
    log.append(ev.TimerFired(1), 1000)
    log.flush()
    stale = log.size
    log.append(ev.TimerFired(2), 1001)
    log.flush()
    metrics.saw_log(log.size)
    metrics.saw_log(stale)
    assert metrics.instruments["log"].values[None] == log.size > stale
    log.close()


def test_join_decisions_and_the_bytes_broadcast_are_counted_per_join_vertex():
    from jobmanager.model.joins import JoinInput
    from tests.jobmanager.core.adaptive.test_runtime_joins import MiB, sized

    g = JobGraph("joins")
    big, small, other = g.add_vertex("big", 4), g.add_vertex("small", 2), g.add_vertex("other", 2)
    broadcast, shuffled = g.add_vertex("join1"), g.add_vertex("join2")
    g.connect(big, broadcast, Partitioner.hash("k"), join=JoinInput("j1", "inner", "left"))
    g.connect(small, broadcast, Partitioner.hash("k"), join=JoinInput("j1", "inner", "right"))
    g.connect(broadcast, shuffled, Partitioner.hash("k"), join=JoinInput("j2", "inner", "left"))
    g.connect(other, shuffled, Partitioner.hash("k"), join=JoinInput("j2", "inner", "right"))
    observed = Observed(
        Run(
            g,
            byte_model=sized({"big": 64 * MiB, "small": MiB, "other": 32 * MiB, "join1": 16 * MiB}),
        )
    )
    assert observed.run.go().status == "FINISHED"
    decisions = observed.instruments["joins"]
    assert dict(decisions.values) == {"join1: broadcast": 1, "join2: shuffled": 1}
    assert dict(observed["broadcast"]) == {"join1": 2 * MiB}


def test_an_empty_side_broadcast_at_run_time_adds_no_bytes():
    from jobmanager.model.joins import JoinInput
    from tests.jobmanager.core.adaptive.test_runtime_joins import MiB, sized

    g = JobGraph("empty")
    big, empty, join = g.add_vertex("big", 2), g.add_vertex("empty", 1), g.add_vertex("join")
    g.connect(big, join, Partitioner.hash("k"), join=JoinInput("j1", "inner", "left"))
    g.connect(empty, join, Partitioner.hash("k"), join=JoinInput("j1", "inner", "right"))
    observed = Observed(Run(g, byte_model=sized({"big": 64 * MiB, "empty": 0})))
    assert observed.run.go().status == "FINISHED"  # Recorded.inc refuses 0, as Ray does
    assert dict(observed.instruments["joins"].values) == {"join: broadcast": 1}
    assert dict(observed["broadcast"]) == {}


def test_a_metric_ray_refuses_is_a_warning_not_the_jobs_failure():
    class Refusing(Recorded):
        def observe(self, value: float, tags: dict[str, str]) -> None:
            raise ValueError("refused")

    observed = Observed(Run(sums_graph()))
    observed.metrics.instruments["loop"] = Refusing()
    assert observed.run.go().status == "FINISHED"
    assert observed["finished"]  # the other metrics still counted
