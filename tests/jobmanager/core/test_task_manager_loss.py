"""A TaskManager lost on a node that is up costs what it was running: its finished partitions
whose files the node's survey found whole (the size and fingerprint their producers reported)
are kept, with their descriptors still pointing at the dead TaskManager's directory; any other
reruns its producer; the restart waits for no back-off."""

from __future__ import annotations

from collections import ChainMap
from dataclasses import replace

from jobmanager.core import commands as cmd
from jobmanager.core.deployment import TaskDeploymentDescriptorFactory
from jobmanager.core.executiongraph import PartitionState
from jobmanager.core.state import JobManagerState
from jobmanager.messages import events as ev
from jobmanager.messages.losses import TaskManagerLoss
from jobmanager.model.config import (
    FIXED_DELAY_ATTEMPTS,
    FIXED_DELAY_DELAY,
    NUMBER_OF_TASK_SLOTS,
    RESTART_STRATEGY,
    SLOT_PREFETCH,
    Configuration,
)
from jobmanager.model.jobgraph import JobGraph, Partitioner
from shuffle.ids import PartitionId
from shuffle.paths import partition_path
from tests.builders import BLOCKING

CONFIG = {
    RESTART_STRATEGY.key: "fixed-delay",
    FIXED_DELAY_ATTEMPTS.key: 3,
    FIXED_DELAY_DELAY.key: "5 s",
    NUMBER_OF_TASK_SLOTS.key: 1,
    SLOT_PREFETCH.key: 0,
}
RESULT = "v0->v1"
SIZE, CHECKSUM = 4096, 0xC0FFEE


def produced(subtask: int) -> tuple[ev.ProducedPartition, ...]:
    report = ev.ProducedPartition.of(RESULT, [10 + subtask])
    return (replace(report, file_size=SIZE + subtask, file_checksum=CHECKSUM + subtask),)


def file_on_disk(subtask: int, checksum: int | None = None) -> tuple[str, int, int]:
    path = partition_path("/shuffle/tm-a", PartitionId(RESULT, subtask), 0)
    return path, SIZE + subtask, CHECKSUM + subtask if checksum is None else checksum


def two_producers_finished_on_tm_a() -> JobManagerState:
    """v0 (two subtasks) ran one after the other on tm-a, and v1 runs there now; tm-b has a
    free slot."""
    g = JobGraph("loss")
    v0, v1 = g.add_vertex("v0", 2), g.add_vertex("v1", 1)
    g.connect(v0, v1, Partitioner.REBALANCE, BLOCKING)
    state = JobManagerState(g, Configuration(CONFIG), job_id="j")
    state.handle(ev.JobStarted())
    state.handle(ev.TaskManagerRegistered("tm-a", 1, "node-1", "/shuffle/tm-a"))
    for subtask in (0, 1):
        state.handle(ev.TaskRunning("v0", subtask, 0))
        state.handle(ev.TaskFinished("v0", subtask, 0, produced(subtask)))
    assert state.graph.vertex("v1", 0).slot.task_manager == "tm-a"
    state.handle(ev.TaskRunning("v1", 0, 0))
    state.handle(ev.TaskManagerRegistered("tm-b", 1, "node-1", "/shuffle/tm-b"))
    return state


def partitions(state: JobManagerState) -> list:
    return next(r for r in state.graph.results.values() if r.id == RESULT).partitions


def lose_tm_a(state: JobManagerState, *on_disk: tuple[str, int, int]):
    return state.handle(ev.TaskManagerLost("tm-a", "killed", 1_000, "node-1", on_disk))


def restarts_at_once(step) -> bool:
    timers = [c for c in step.commands if isinstance(c, cmd.StartTimer)]
    return len(timers) == 1 and timers[0].delay_ms == 0


def test_whole_files_are_kept_and_still_described_where_they_are():
    state = two_producers_finished_on_tm_a()
    step = lose_tm_a(state, file_on_disk(0), file_on_disk(1))
    assert [p.state for p in partitions(state)] == [PartitionState.AVAILABLE] * 2
    assert [state.graph.vertex("v0", k).attempt for k in (0, 1)] == [0, 0]
    assert restarts_at_once(step)  # v1, which ran there, and nothing else
    v1 = state.graph.vertex("v1", 0)
    assert state.losses == [TaskManagerLoss("tm-a", "node-1", 1_000, 1, 0, 2, (v1.index,))]
    factory = TaskDeploymentDescriptorFactory(
        "j", state.graph, ChainMap(state.task_managers, state.departed), cache=None
    )
    descriptor = factory.describe(partitions(state)[1])
    assert (descriptor.task_manager_id, descriptor.node_id, descriptor.path) == (
        "tm-a",
        "node-1",
        file_on_disk(1)[0],
    )
    assert (descriptor.size, descriptor.checksum) == (SIZE + 1, CHECKSUM + 1)


def test_a_file_not_the_one_written_reruns_its_producer_at_once():
    state = two_producers_finished_on_tm_a()
    damaged = file_on_disk(1, checksum=CHECKSUM)  # the right size, another fingerprint
    step = lose_tm_a(state, file_on_disk(0), damaged)
    states = [p.state for p in partitions(state)]
    assert states == [PartitionState.AVAILABLE, PartitionState.LOST]
    loss = state.losses[0]
    assert (loss.running, loss.rerun, loss.kept) == (1, 1, 1)
    assert restarts_at_once(step)  # no back-off for a lost process


def test_a_node_gone_loses_every_output_on_it():
    state = two_producers_finished_on_tm_a()
    lose_tm_a(state)
    assert (state.losses[0].rerun, state.losses[0].kept) == (2, 0)
    assert "tm-a" not in state.departed


def test_a_task_that_fails_by_itself_still_backs_off():
    state = two_producers_finished_on_tm_a()
    step = state.handle(ev.TaskFailed("v1", 0, 0, "boom", 2_000))
    assert [t.delay_ms for t in step.commands if isinstance(t, cmd.StartTimer)] == [5_000]


def test_kept_partitions_survive_a_snapshot_and_are_released_where_they_are():
    from jobmanager.core import snapshot

    state = two_producers_finished_on_tm_a()
    lose_tm_a(state, file_on_disk(0), file_on_disk(1))
    restored = snapshot.restore(state.graph.job_graph, state.config, snapshot.take(state), "j")
    assert restored.describe() == state.describe()
    deployed = state.handle(ev.TimerFired(0, 1_000)).commands
    assert deployed == (cmd.DeployTask("v1", 0, 1, "tm-b", 0),)
    state.handle(ev.TaskRunning("v1", 0, 1))
    step = state.handle(ev.TaskFinished("v1", 0, 1))
    assert state.status.value == "FINISHED"
    released = [c for c in step.commands if isinstance(c, cmd.ReleasePartitions)]
    assert [(c.task_manager, len(c.partitions)) for c in released] == [("tm-a", 2)]
