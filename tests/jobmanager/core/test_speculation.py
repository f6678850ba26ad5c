"""Speculative execution in the pure core: the slow task detector from tables of execution
times, and whole runs driven event by event (the first attempt to finish wins, the others are
cancelled and their files released; a failure with a speculative attempt still running is not
a failure of the task), replayed to the same state."""

import pytest

from jobmanager.core import commands as cmd
from jobmanager.core.scheduler.speculation import SPECULATION_TIMER, SlowTaskDetector
from jobmanager.core.state import JobManagerState
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode, encode
from jobmanager.model.config import (
    FIXED_DELAY_DELAY,
    NUMBER_OF_TASK_SLOTS,
    RESTART_STRATEGY,
    SLOT_PREFETCH,
    SLOW_TASK_BASELINE_LOWER_BOUND,
    SLOW_TASK_CHECK_INTERVAL,
    SPECULATION_ENABLED,
    Configuration,
)
from jobmanager.model.jobgraph import JobGraph, Partitioner


@pytest.mark.parametrize(
    "finished, tasks, expected",
    [
        ([], 4, None),  # nothing finished: no baseline
        ([100, 100], 4, None),  # 2 of 4 < 75 %
        ([100, 100, 100], 4, 150),  # 3 of 4: median 100 x 1.5
        ([100, 200, 300, 1000], 5, 375),  # median of an even count: 250 x 1.5
        ([1, 1, 1], 4, 60),  # never below the lower bound
    ],
)
def test_the_baseline_from_finished_execution_times(finished, tasks, expected):
    detector = SlowTaskDetector(
        check_interval_ms=100, lower_bound_ms=60, ratio=0.75, multiplier=1.5
    )
    assert detector.baseline_ms(sorted(finished), tasks) == expected


CONFIG = {
    SPECULATION_ENABLED.key: True,
    SLOW_TASK_CHECK_INTERVAL.key: 100,
    SLOW_TASK_BASELINE_LOWER_BOUND.key: 0,
    NUMBER_OF_TASK_SLOTS.key: 2,
    SLOT_PREFETCH.key: 0,
}


class Driven:
    """The core, told events one at a time; every event and command kept."""

    def __init__(self, graph: JobGraph, config: dict = CONFIG) -> None:
        self.graph = graph
        self.config = Configuration(config)
        self.state = JobManagerState(graph, self.config, job_id="test")
        self.events: list = []
        self.commands: list = []

    def __call__(self, *events) -> list:
        out = []
        for event in events:
            self.events.append(event)
            out.extend(self.state.handle(event).commands)
        self.commands.extend(out)
        return out

    def deployed(self, commands=None) -> dict[tuple[str, int, int], str]:
        return {
            (c.vertex, c.subtask, c.attempt): c.task_manager
            for c in (self.commands if commands is None else commands)
            if type(c) is cmd.DeployTask
        }

    def replayed(self) -> JobManagerState:
        fresh = JobManagerState(self.graph, self.config, job_id="test")
        for event in self.events:
            fresh.handle(decode(encode(event)))
        assert fresh.describe() == self.state.describe()
        return fresh


def four_then_sink() -> JobGraph:
    g = JobGraph("slow")
    work = g.add_vertex("work", parallelism=4)
    sink = g.add_vertex("sink", parallelism=1)
    g.connect(work, sink, Partitioner.REBALANCE)
    return g


def finished(vertex, subtask, attempt, ms=100, subpartitions=1):
    report = (
        ev.ProducedPartition.of("work->sink", [10] * subpartitions) if vertex == "work" else None
    )
    return ev.TaskFinished(
        vertex, subtask, attempt, (report,) if report else (), ev.TaskMetrics(duration_ms=ms)
    )


def started(core: Driven) -> dict:
    core(
        ev.JobStarted(),
        ev.TaskManagerRegistered("tm-a", 2, "node-a"),
        ev.TaskManagerRegistered("tm-b", 2, "node-b"),
        ev.TaskManagerRegistered("tm-c", 2, "node-c"),
    )
    placed = core.deployed()
    core(*(ev.TaskRunning("work", s, 0, 0) for s in range(4)))
    core(*(finished("work", s, 0) for s in range(3)))
    return placed


def test_a_slow_task_gets_an_attempt_on_another_task_manager_and_the_first_to_finish_wins():
    core = Driven(four_then_sink())
    placed = started(core)
    slow_tm = placed[("work", 3, 0)]
    assert core(ev.TimerFired(SPECULATION_TIMER, 140)) == [cmd.StartTimer(SPECULATION_TIMER, 100)]
    out = core(ev.TimerFired(SPECULATION_TIMER, 200))  # ran 200 ms > 1.5 x the median 100
    spare = core.deployed(out)
    assert list(spare) == [("work", 3, 1)] and spare[("work", 3, 1)] != slow_tm
    out = core(ev.TaskRunning("work", 3, 1, 210), finished("work", 3, 1, ms=20))
    assert cmd.CancelTask("work", 3, 0, slow_tm) in out
    assert any(
        type(c) is cmd.ReleasePartitions and c.task_manager == slow_tm and c.attempts == (0,)
        for c in out
    )
    v = core.state.graph.vertex("work", 3)
    assert (v.attempt, v.state.value) == (1, "finished")
    assert core.state.graph.results["work->sink"].partitions[3].location == spare[("work", 3, 1)]
    assert core(ev.TaskCanceled("work", 3, 0)) == []  # the loser's end changes nothing
    sink = core.deployed()
    assert ("sink", 0, 0) in sink
    core(finished("sink", 0, 0))
    assert core.state.status.value == "FINISHED"
    core.replayed()


def test_when_the_slow_attempt_finishes_first_the_speculative_one_is_cancelled():
    core = Driven(four_then_sink())
    started(core)
    spare = core.deployed(core(ev.TimerFired(SPECULATION_TIMER, 200)))
    out = core(finished("work", 3, 0))
    assert cmd.CancelTask("work", 3, 1, spare[("work", 3, 1)]) in out
    assert core.state.graph.vertex("work", 3).attempt == 0
    assert core(finished("work", 3, 1)) == []  # too late: ignored
    core.replayed()


def test_a_failure_with_a_speculative_attempt_running_is_not_a_failover():
    core = Driven(four_then_sink())
    started(core)
    core(ev.TimerFired(SPECULATION_TIMER, 200))
    out = core(ev.TaskFailed("work", 3, 0, "disk on fire", 250))
    assert not any(type(c) in (cmd.CancelTask, cmd.StartTimer) for c in out)
    v = core.state.graph.vertex("work", 3)
    assert (v.attempt, v.state.value) == (1, "running") and not core.state.failure_cause
    core(finished("work", 3, 1))
    assert v.state.value == "finished"
    restarted = core(ev.TaskFailed("sink", 0, 0, "boom", 300))  # not speculated: a failover
    assert core.state.graph.vertex("sink", 0).attempt == 0 and restarted
    core.replayed()


def test_a_restart_after_speculation_takes_an_attempt_number_never_used():
    core = Driven(
        four_then_sink(),
        {**CONFIG, RESTART_STRATEGY.key: "fixed-delay", FIXED_DELAY_DELAY.key: 1},
    )
    started(core)
    core(ev.TimerFired(SPECULATION_TIMER, 200))
    core(finished("work", 3, 1))
    core(ev.TaskFailed("work", 3, 1, "its file got lost later", 300))  # already finished: ignored
    core(
        ev.TaskManagerLost(
            core.state.graph.results["work->sink"].partitions[3].location, "gone", 400
        )
    )
    core(ev.TaskCanceled("sink", 0, 0))  # the region's running consumer, cancelled first
    v = core.state.graph.vertex("work", 3)
    timers = [c for c in core.commands if type(c) is cmd.StartTimer and c.token >= 0]
    core(*(ev.TimerFired(t.token, 500) for t in timers))
    assert v.attempt == 2  # not 1: that number ran speculatively
    core.replayed()


def test_speculation_off_deploys_nothing_more():
    core = Driven(four_then_sink(), {**CONFIG, SPECULATION_ENABLED.key: False})
    started(core)
    assert core(ev.TimerFired(SPECULATION_TIMER, 10_000)) == []
