import pytest

from jobmanager.core import commands as cmd
from jobmanager.core.state import JobManagerState
from jobmanager.messages import events as ev
from jobmanager.model.config import (
    FIXED_DELAY_ATTEMPTS,
    FIXED_DELAY_DELAY,
    MAX_SLOTS,
    NON_RECOVERABLE_EXCEPTIONS,
    NUMBER_OF_TASK_SLOTS,
    RESTART_STRATEGY,
    SLOT_PREFETCH,
    Configuration,
)
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.simulation.cluster import TaskFault
from shuffle.ids import PartitionId
from tests.builders import BLOCKING, PIPELINED
from tests.jobmanager.core.harness import Run

RESTARTS = {RESTART_STRATEGY.key: "fixed-delay", FIXED_DELAY_ATTEMPTS.key: 5}


def chain(*parallelisms, result=BLOCKING, partitioner=Partitioner.REBALANCE):
    g = JobGraph("chain")
    vertices = [g.add_vertex(f"v{i}", p) for i, p in enumerate(parallelisms)]
    for a, b in zip(vertices, vertices[1:]):
        g.connect(a, b, partitioner, result)
    return g


def test_a_static_job_runs_to_the_end_and_releases_everything():
    run = Run(chain(3, 2, 1), {NUMBER_OF_TASK_SLOTS.key: 2})
    assert run.go().status == "FINISHED"
    run.check_invariants()
    released = sorted(str(p) for p in run.cluster.released)
    assert released == ["v0->v1#0", "v0->v1#1", "v0->v1#2", "v1->v2#0", "v1->v2#1"]


def test_any_blocking_job_finishes_with_a_single_slot():
    run = Run(chain(4, 4, 2), {MAX_SLOTS.key: 1, SLOT_PREFETCH.key: 0})
    assert run.go().status == "FINISHED"
    assert run.state.slots.total_slots == 1 and run.max_active == 1
    run.check_invariants()


def test_a_pipelined_region_fits_one_slot_by_sharing_it():
    run = Run(chain(1, 1, 1, result=PIPELINED), {MAX_SLOTS.key: 1})
    assert run.go().status == "FINISHED"
    assert run.max_active == 3  # three subtasks of one region in one shared slot
    run.check_invariants()


def test_many_slots_run_regions_in_parallel():
    run = Run(chain(8, 8), {NUMBER_OF_TASK_SLOTS.key: 8})
    run.go()
    assert run.max_active == 8


def test_a_region_wider_than_the_cluster_fails_the_job_by_name():
    run = Run(chain(4, 4, result=PIPELINED), {MAX_SLOTS.key: 2})
    terminated = run.go()
    assert terminated.status == "FAILED"
    assert "needs 4 slots" in terminated.cause and "at most 2" in terminated.cause


def test_a_failed_task_restarts_only_its_region():
    run = Run(
        chain(3, 3, 3, partitioner=Partitioner.FORWARD),
        RESTARTS,
        faults=[("v2", 1, 0, "ValueError: bad row")],
    )
    assert run.go().status == "FINISHED"
    attempts = run.attempts
    assert attempts[("v2", 1)] == 2
    assert sum(attempts.values()) == 10  # nine subtasks, one of them twice
    run.check_invariants()


def test_a_lost_input_partition_reruns_its_producer():
    fault = TaskFault("v1", 0, 0, "partition file missing", PartitionId("v0->v1", 2))
    run = Run(chain(3, 2), RESTARTS, faults=[fault])
    assert run.go().status == "FINISHED"
    attempts = run.attempts
    assert attempts[("v0", 2)] == 2  # the producer of the lost partition
    assert attempts[("v0", 0)] == attempts[("v0", 1)] == 1  # their partitions were still there
    assert attempts[("v1", 0)] == attempts[("v1", 1)] == 2  # every consumer of the rerun
    run.check_invariants()


def test_inputs_released_after_their_consumers_finished_are_recomputed():
    # v1 finished, so v0's partitions were released; when v2 loses one of v1's partitions,
    # rerunning v1[2] needs v0 again: the whole upstream reruns (as in Flink)
    fault = TaskFault("v2", 0, 0, "partition file missing", PartitionId("v1->v2", 2))
    run = Run(chain(3, 3, 2), RESTARTS, faults=[fault])
    assert run.go().status == "FINISHED"
    assert all(n == 2 for n in run.attempts.values())
    run.check_invariants()


def test_without_restarts_a_failure_fails_the_job_with_its_cause():
    run = Run(
        chain(2, 2),
        {RESTART_STRATEGY.key: "none"},
        faults=[("v0", 1, 0, "ZeroDivisionError: division by zero")],
    )
    terminated = run.go()
    assert terminated.status == "FAILED"
    assert terminated.cause.startswith("v0[1] attempt 0 failed: ZeroDivisionError")
    assert run.state._active == 0
    run.check_invariants()


def test_restarts_run_out():
    faults = [("v0", 0, attempt, "flaky") for attempt in range(3)]
    run = Run(
        chain(1, 1),
        {RESTART_STRATEGY.key: "fixed-delay", FIXED_DELAY_ATTEMPTS.key: 2},
        faults=faults,
    )
    terminated = run.go()
    assert terminated.status == "FAILED" and "no restart left" in terminated.cause
    assert run.attempts[("v0", 0)] == 3


def test_restart_waits_for_the_backoff_timer():
    run = Run(
        chain(1, 1),
        {
            RESTART_STRATEGY.key: "fixed-delay",
            FIXED_DELAY_ATTEMPTS.key: 3,
            FIXED_DELAY_DELAY.key: "2 s",
        },
        faults=[("v1", 0, 0, "oops")],
    )
    run.go()
    assert run.cluster.clock_ms == 2000


def test_a_lost_task_manager_reruns_its_tasks_and_its_partitions_producers():
    job = chain(4, 4)
    # after the 8th event, sim-tm-0 (slots for v0[0], v0[1]) dies
    lost = ev.TaskManagerLost("sim-tm-0", "process killed", 5)
    run = Run(job, {**RESTARTS, NUMBER_OF_TASK_SLOTS.key: 2}, inject={8: [lost]})
    assert run.go().status == "FINISHED"
    run.check_invariants()
    attempts = run.attempts
    assert max(attempts.values()) == 2
    rerun = {task for task, n in attempts.items() if n == 2}
    assert rerun and all(v == "v0" or v == "v1" for v, _ in rerun)


def test_cancel_cancels_running_tasks_and_terminates():
    job = chain(2, 2)
    run = Run(job, inject={4: [ev.JobCancelRequested("user asked")]})
    terminated = run.go()
    assert terminated.status == "CANCELED" and terminated.cause == "user asked"
    assert run.state._active == 0
    run.check_invariants()


def test_events_for_older_attempts_are_ignored():
    state = JobManagerState(chain(1, 1))
    state.handle(ev.JobStarted())
    state.handle(ev.TaskManagerRegistered("tm", 1))
    before = state.describe()
    assert state.handle(ev.TaskFinished("v0", 0, 7)).commands == ()
    assert state.describe() == before


def test_only_events_are_accepted():
    with pytest.raises(TypeError, match="not an event"):
        JobManagerState(chain(1, 1)).handle(cmd.StartTimer(1, 1))


def test_first_commands_ask_for_task_managers_then_deploy():
    state = JobManagerState(
        chain(2, 1),
        Configuration({NUMBER_OF_TASK_SLOTS.key: 1, SLOT_PREFETCH.key: 0}),
        job_id="j",
    )
    assert state.handle(ev.JobStarted()).commands == (cmd.RequestTaskManagers(2, 1),)
    assert state.handle(ev.TaskManagerRegistered("tm-a", 1)).commands == (
        cmd.DeployTask("v0", 0, 0, "tm-a", 0),
    )
    assert state.handle(ev.TaskManagerRegistered("tm-b", 1)).commands == (
        cmd.DeployTask("v0", 1, 0, "tm-b", 0),
    )


def test_a_failed_task_manager_request_is_asked_again_after_the_backoff():
    config = {
        **RESTARTS,
        NUMBER_OF_TASK_SLOTS.key: 1,
        FIXED_DELAY_DELAY.key: "250 ms",
    }
    state = JobManagerState(chain(1), Configuration(config))
    assert state.handle(ev.JobStarted()).commands == (cmd.RequestTaskManagers(1, 1),)
    timer = state.handle(ev.TaskManagerRequestFailed(1, "tm-0 serves another job", 1_000)).commands
    assert timer == (cmd.StartTimer(0, 250),)
    assert state.handle(ev.TimerFired(0)).commands == (cmd.RequestTaskManagers(1, 1),)
    assert state.handle(ev.TaskManagerRegistered("tm-1", 1)).commands == (
        cmd.DeployTask("v0", 0, 0, "tm-1", 0),
    )
    assert state.status.value == "RUNNING"


def test_task_managers_that_never_come_fail_the_job_once_restarts_run_out():
    config = {
        RESTART_STRATEGY.key: "fixed-delay",
        FIXED_DELAY_ATTEMPTS.key: 1,
        NUMBER_OF_TASK_SLOTS.key: 1,
    }
    state = JobManagerState(chain(1), Configuration(config))
    state.handle(ev.JobStarted())
    (timer,) = state.handle(
        ev.TaskManagerRequestFailed(1, "the cluster has no ResourceManager")
    ).commands
    state.handle(ev.TimerFired(timer.token))
    (terminated,) = state.handle(
        ev.TaskManagerRequestFailed(1, "the cluster has no ResourceManager")
    ).commands
    assert terminated.status == "FAILED"
    assert "no TaskManager of 1 slots: the cluster has no ResourceManager" in terminated.cause
    assert "no restart left" in terminated.cause


def test_a_failed_request_the_job_no_longer_needs_is_not_a_failure():
    config = {
        **RESTARTS,
        NUMBER_OF_TASK_SLOTS.key: 1,
        MAX_SLOTS.key: 1,
        SLOT_PREFETCH.key: 0,
    }
    state = JobManagerState(chain(2), Configuration(config))
    state.handle(ev.JobStarted())
    state.handle(ev.TaskManagerRegistered("tm-0", 1))  # the one slot allowed; v0[1] waits for it
    assert state.handle(ev.TaskManagerRequestFailed(1, "a late duplicate")).commands == ()
    assert state.backoff.describe() == Run(chain(1), RESTARTS).state.backoff.describe()


def failed(vertex, subtask, attempt, *types, lost=None):
    return ev.TaskFailed(vertex, subtask, attempt, f"{types[0]}: boom", 1, lost, types)


def running_single_task(config):
    state = JobManagerState(chain(1), Configuration({**config, NUMBER_OF_TASK_SLOTS.key: 1}))
    state.handle(ev.JobStarted())
    state.handle(ev.TaskManagerRegistered("tm", 1))
    state.handle(ev.TaskRunning("v0", 0, 0))
    return state


@pytest.mark.parametrize(
    "types",
    [
        (
            "pyspark.errors.exceptions.captured.AnalysisException",
            "pyspark.errors.exceptions.base.AnalysisException",
        ),
        ("builtins.TypeError",),
        ("jobmanager.model.sources.SourceError", "builtins.FileNotFoundError", "builtins.OSError"),
        ("mine.BadRecord", "jobmanager.errors.NonRecoverableError"),
    ],
)
def test_an_error_no_restart_can_fix_fails_the_job_at_the_first_attempt(types):
    state = running_single_task(RESTARTS)
    commands = state.handle(failed("v0", 0, 0, *types)).commands
    (terminated,) = [c for c in commands if isinstance(c, cmd.JobTerminated)]
    assert terminated.status == "FAILED"
    assert "v0[0] attempt 0 failed" in terminated.cause and "not retried" in terminated.cause
    assert not any(isinstance(c, cmd.StartTimer) for c in commands)


def test_other_errors_and_lost_inputs_keep_the_restart_strategy():
    state = running_single_task(RESTARTS)
    assert state.handle(failed("v0", 0, 0, "builtins.ValueError")).commands == (
        cmd.StartTimer(0, 1000),
    )
    lost = TaskFault(
        "v1",
        0,
        0,
        "PartitionNotFound",
        PartitionId("v0->v1", 1),
        ("shuffle.errors.PartitionNotFound", "builtins.FileNotFoundError"),
    )
    run = Run(chain(2, 1), RESTARTS, faults=[lost])
    assert run.go().status == "FINISHED"
    assert run.attempts[("v1", 0)] == 2 and run.attempts[("v0", 1)] == 2


def test_a_user_marks_their_own_exceptions_non_recoverable():
    config = {**RESTARTS, NON_RECOVERABLE_EXCEPTIONS.key: "mine.BadRecord; KeyError"}
    for types in (("mine.BadRecord",), ("builtins.KeyError", "builtins.LookupError")):
        state = running_single_task(config)
        (terminated,) = state.handle(failed("v0", 0, 0, *types)).commands
        assert (
            terminated.status == "FAILED"
            and f"{types[0]} is an error no restart" in terminated.cause
        )


def test_a_task_prefers_a_free_slot_on_the_node_holding_its_input():
    config = {NUMBER_OF_TASK_SLOTS.key: 1, SLOT_PREFETCH.key: 0}
    state = JobManagerState(chain(1, 1, partitioner=Partitioner.FORWARD), Configuration(config))
    state.handle(ev.JobStarted())
    assert state.handle(ev.TaskManagerRegistered("tm-a", 1, "node-a")).commands == (
        cmd.DeployTask("v0", 0, 0, "tm-a", 0),
    )
    state.handle(ev.TaskManagerRegistered("tm-b", 1, "node-b"))  # free first, on another node
    state.handle(ev.TaskRunning("v0", 0, 0))
    commands = state.handle(
        ev.TaskFinished("v0", 0, 0, (ev.ProducedPartition.of("v0->v1", [100]),))
    ).commands
    deploy = [c for c in commands if isinstance(c, cmd.DeployTask)]
    assert deploy == [cmd.DeployTask("v1", 0, 0, "tm-a", 0)]  # where v0's partition is
