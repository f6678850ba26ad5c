"""SIGKILL of a running job's JobManager or of one of its TaskManagers, by pid, at a point its
caller picks, and what the kill cost the job, read from the job itself afterwards.

Shared by ``benchmarks/recovery.py`` and the chaos test (``tests/sql/test_chaos_on_ray.py``),
so the benchmark's figures and the test's kills are the same kill. Nothing here assumes how the
runtime recovers: finished tasks run again, the killed tasks' running time and whether the kill
landed at all are read from the job's graph (``describe()``) and its event log.

A kill is only sent while the job runs: the caller's condition is checked on the job's current
tasks, and a TaskManager is only killed while it hosts a running task. A kill can still come
just after the job ended (its last task finished between the look and the kill); ``landed``
then says False, and the caller decides what that means.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import ray

from jobmanager.messages.jobstatus import JobStatus
from jobmanager.runtime.names import NAMESPACE

__all__ = [
    "JOB_MANAGER",
    "KINDS",
    "TASK_MANAGER",
    "Kill",
    "after_fraction_of_tasks",
    "after_seconds",
    "kill_when",
    "outcome",
]

JOB_MANAGER, TASK_MANAGER = "jobmanager", "taskmanager"
KINDS = (JOB_MANAGER, TASK_MANAGER)
_POLL_S = 0.01
_ASK_S = 10.0  # a TaskManager's ping answers in milliseconds; a dead one fails at once


@dataclass
class Kill:
    """One SIGKILL: of whom, when (wall clock, as the job's event times), and the job's tasks
    then: those finished, and those running on the killed TaskManager (none for a JobManager)."""

    kind: str
    target: str  # the TaskManager's id, or "jobmanager"
    pid: int
    at: float  # time.time() of the kill
    after_seconds: float  # since the caller's start
    finished: frozenset[tuple[str, int]]  # (task label, attempt)
    running: tuple[tuple[str, int], ...] = ()
    sent: bool = True  # False: the process was already gone


def running_by_task_manager(tasks) -> dict[str, list[tuple[str, int]]]:
    """The running tasks (label, attempt) of ``describe()``'s task rows, by TaskManager."""
    hosts: dict[str, list[tuple[str, int]]] = {}
    for label, state, attempt, slot in tasks:
        if state == "running" and slot is not None:
            hosts.setdefault(slot[0], []).append((label, attempt))
    return hosts


def after_fraction_of_tasks(fraction: float) -> Callable[[list, float], bool]:
    """Ready once ``fraction`` of the tasks known so far (at least one) finished and one runs.
    Known tasks grow as parallelisms are decided, so the bar is never above all of them but one:
    it is met by the job's last running task at the latest, which a fast job cannot skip."""

    def ready(tasks, elapsed: float) -> bool:
        finished = sum(1 for _, state, _, _ in tasks if state == "finished")
        bar = min(max(1, round(fraction * len(tasks))), len(tasks) - 1)
        return bool(running_by_task_manager(tasks)) and finished >= bar

    return ready


def after_seconds(seconds: float) -> Callable[[list, float], bool]:
    """Ready ``seconds`` after the start and once a task runs (a TaskManager is only killed
    while it hosts one)."""
    return lambda tasks, elapsed: elapsed >= seconds and bool(running_by_task_manager(tasks))


def kill_when(
    handle,
    kind: str,
    ready: Callable[[list, float], bool],
    started: float,
    timeout: float = 600.0,
    choose: Callable[[list[str]], str] = min,
) -> Kill | None:
    """SIGKILL the job's JobManager or, for ``TASK_MANAGER``, a TaskManager hosting a running
    task (``choose`` picks among them) once ``ready(tasks, seconds since started)``. None if
    the job ended first; raises TimeoutError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = handle.status()
        if status.status.is_terminal:
            return None
        tasks = handle.describe()[2]
        elapsed = time.perf_counter() - started
        hosts = running_by_task_manager(tasks)
        if status.status is JobStatus.RUNNING and ready(tasks, elapsed) and hosts:
            finished = frozenset((l, a) for l, state, a, _ in tasks if state == "finished")
            if kind == JOB_MANAGER:
                return _send(Kill(kind, kind, status.pid, 0.0, 0.0, finished), started)
            target = choose(sorted(hosts))
            pid = _task_manager_pid(target)
            if pid is not None:
                return _send(
                    Kill(kind, target, pid, 0.0, 0.0, finished, tuple(hosts[target])), started
                )
        time.sleep(_POLL_S)
    raise TimeoutError(f"no point to kill the {kind} came within {timeout:.0f} s")


def _task_manager_pid(task_manager: str) -> int | None:
    """The TaskManager actor's process id (its ``ping``), None if it is gone already."""
    try:
        actor = ray.get_actor(task_manager, namespace=NAMESPACE)
        return ray.get(actor.ping.remote(), timeout=_ASK_S)
    except (ValueError, ray.exceptions.RayError):
        return None


def _send(kill: Kill, started: float) -> Kill:
    try:
        os.kill(kill.pid, 9)
    except ProcessLookupError:
        kill.sent = False
    kill.at = time.time()
    kill.after_seconds = time.perf_counter() - started
    return kill


def outcome(handle, kill: Kill) -> dict:
    """What the kill cost the ended job: ``landed`` (the job saw it: its JobManager recovered,
    or it lost the TaskManager), ``finished_tasks_rerun`` (finished at the kill, run again),
    for a TaskManager ``killed_tasks_seconds``, how long its running tasks had been running at
    the kill (the longest; they ran side by side), from their ``TaskRunning`` events, and where
    the time after the kill went (``_after_kill``)."""
    attempts = {label: attempt for label, _, attempt, _ in handle.describe()[2]}
    events = handle.events()
    names = {type(e).__name__ for e in events}
    if kill.kind == JOB_MANAGER:
        landed = kill.sent and "JobManagerRecovered" in names
    else:
        landed = kill.sent and any(
            type(e).__name__ == "TaskManagerLost" and e.task_manager == kill.target for e in events
        )
    started_ms = {
        (f"{e.vertex}[{e.subtask}]", e.attempt): e.time_ms
        for e in events
        if type(e).__name__ == "TaskRunning"
    }
    running_s = [
        max(0.0, kill.at - started_ms[task] / 1000) for task in kill.running if task in started_ms
    ]
    return {
        "landed": landed,
        "finished_at_kill": len(kill.finished),
        "finished_tasks_rerun": sum(1 for l, a in kill.finished if attempts.get(l, a) != a),
        "killed_tasks": len(kill.running),
        "killed_tasks_seconds": round(max(running_s), 3) if running_s else 0.0,
        **_after_kill(events, kill),
    }


def _after_kill(events, kill: Kill) -> dict:
    """Where the time after the kill went, from the events' times (the JobManager's wall
    clock, on this machine): ``seen_after_seconds``, to the JobManager recovered or the
    TaskManager's loss noticed; ``running_after_seconds``, to the first task started after it."""

    def after(times) -> float | None:
        later = [t / 1000 - kill.at for t in times if t / 1000 >= kill.at]
        return round(min(later), 3) if later else None

    seen = (
        e.time_ms
        for e in events
        if (kill.kind == JOB_MANAGER and type(e).__name__ == "JobManagerRecovered")
        or (type(e).__name__ == "TaskManagerLost" and e.task_manager == kill.target)
    )
    running = (e.time_ms for e in events if type(e).__name__ == "TaskRunning")
    return {"seen_after_seconds": after(seen), "running_after_seconds": after(running)}
