"""A JobManager dying mid-job, and a new one taking over, with simulated TaskManagers.

``crash_and_recover`` runs a job for some events, then drops the JobManager: what it applied
is its log; the answers still in transit are what the TaskManagers know and the dead
JobManager did not (a task that ended, one still running, a deployment that never arrived).
A new state is replayed from the log, told what the TaskManagers say (with some partitions,
or a whole TaskManager, lost), and run to the end.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from jobmanager.core.executiongraph import ExecutionState, PartitionState
from jobmanager.core.replay import new_state, replay
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode, encode
from jobmanager.simulation.cluster import SimulatedRun, SimulatedTaskManagers, uniform_bytes
from tests.jobmanager.core.harness import Run

IN_FLIGHT = (ExecutionState.DEPLOYING, ExecutionState.RUNNING, ExecutionState.CANCELING)
FINAL = (ev.TaskFinished, ev.TaskFailed, ev.TaskCanceled)


def submitted(job, config) -> ev.JobSubmitted:
    return ev.JobSubmitted(job.name, "", tuple(config.to_dict().items()), 0.0, None, ())


@dataclass
class Recovery:
    live: Run  # the same job, never interrupted
    first: Run  # the run that crashed
    state: object = None  # the new JobManager's state
    log: list = field(default_factory=list)  # every event the new state was given, in order
    lost_partitions: set = field(default_factory=set)  # (vertex, subtask) producers
    lost_task_manager: str | None = None
    finished_before: set = field(default_factory=set)  # (vertex, subtask) finished at the crash
    released: set = field(default_factory=set)  # (result, producer subtask) deleted before it
    rerun: list = field(default_factory=list)  # (vertex, subtask, attempt) deployed after it
    terminated: object = None


def crash_and_recover(
    job, config, seed: int, crash_at: int, fates: random.Random, byte_model=None
) -> Recovery:
    byte_model = byte_model or uniform_bytes(1 << 20)
    live = Run(job, config, seed=seed, byte_model=byte_model)
    live.go()
    first = Run(job, config, seed=seed, byte_model=byte_model)
    first.run.run(stop_after=crash_at)
    recovery = Recovery(live, first)
    logged = [decode(encode(e)) for e in first.run.events]
    in_transit = list(first.run.queue)
    state = replay(new_state(job, submitted(job, first.config), "test"), logged)
    recovery.state, recovery.log = state, list(logged)

    known = list(state.task_managers)
    if known and fates.random() < 0.2:
        recovery.lost_task_manager = fates.choice(known)
    reports: dict[str, dict] = {
        tm: {"running": [], "ended": [], "partitions": set(), "slots": info.slots}
        for tm, info in state.task_managers.items()
        if tm != recovery.lost_task_manager
    }
    for e in in_transit:
        if type(e) is ev.TaskManagerRegistered and fates.random() < 0.5:
            reports[e.task_manager] = {
                "running": [],
                "ended": [],
                "partitions": set(),
                "slots": e.slots,
            }
    final = {}
    for e in in_transit:
        if type(e) in FINAL:
            final.setdefault((e.vertex, e.subtask, e.attempt), e)
    still_running = []
    for v in state.graph.vertices():
        if v.state is ExecutionState.FINISHED:
            recovery.finished_before.add((v.name, v.subtask))
        if v.state not in IN_FLIGHT or v.slot.task_manager not in reports:
            continue
        key = (v.name, v.subtask, v.attempt)
        fate = fates.choice(["ended", "running", "unknown"])
        answer = reports[v.slot.task_manager]
        if fate == "ended" and key in final:
            answer["ended"].append(final[key])
            if type(final[key]) is ev.TaskFinished:
                answer["partitions"].update((p.id, v.attempt) for p in v.produced)
                recovery.finished_before.add((v.name, v.subtask))
        elif fate == "running":
            answer["running"].append(key)
            still_running.extend(
                e
                for e in in_transit
                if type(e) in FINAL and (e.vertex, e.subtask, e.attempt) == key
            )
    for result in state.graph.results.values():
        for p in result.partitions:
            if p.state is PartitionState.RELEASED:
                recovery.released.add((result.id, p.index))
            if p.state is not PartitionState.AVAILABLE or p.location not in reports:
                continue
            if fates.random() < 0.15:
                recovery.lost_partitions.add((p.producer.name, p.producer.subtask))
            else:
                reports[p.location]["partitions"].add((p.id, p.producer.attempt))
    event = ev.JobManagerRecovered(
        first.cluster.clock_ms,
        tuple(
            ev.TaskManagerReport(
                tm,
                r["slots"],
                "",
                "",
                tuple(r["running"]),
                tuple(r["ended"]),
                tuple(sorted(r["partitions"], key=lambda x: (str(x[0]), x[1]))),
            )
            for tm, r in reports.items()
        ),
    )
    event = decode(encode(event))
    recovery.log.append(event)
    cluster = SimulatedTaskManagers(state.graph, byte_model)
    cluster.task_managers = first.cluster.task_managers
    cluster.clock_ms = first.cluster.clock_ms
    run = SimulatedRun(state, cluster, record=True, shuffle=random.Random(seed))
    answers = []
    step = state.handle(event)
    recovery.log.extend(step.events)
    for command in step.commands:
        answers.extend(run._carry_out(command) or cluster.answer(command))
    if state.status.value == "CREATED":  # it died before starting the job: the shell starts it
        answers.append(ev.JobStarted())
    recovery.terminated = cluster.terminated or run.run(first=answers + still_running)
    recovery.log.extend(run.events)
    recovery.rerun = list(cluster.deployed)
    return recovery
