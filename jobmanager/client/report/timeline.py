"""Which slot ran which task attempt when: the timeline of a job, folded from its log.

The events say when an attempt started running and how it ended; the ``DeployTask`` commands
the core answered them with (the replay gives them again) say which slot of which TaskManager
it was deployed into. A task too short to report ``TaskRunning`` before it ended starts, on
the timeline, when its slot was free (up to ``jobmanager.slot-prefetch`` tasks may wait in a
busy slot). Times are those the JobManager logged each event at.
"""

from __future__ import annotations

from dataclasses import dataclass

from jobmanager.client.loss_words import node_words
from jobmanager.core import commands as cmd
from jobmanager.messages import events as ev

__all__ = ["Attempt", "Marker", "TimelineBuilder"]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt of one subtask, in one slot. ``outcome``: finished, failed, canceled, lost
    (its TaskManager or JobManager went), running (the job still runs it) or abandoned (the job
    ended without hearing from it)."""

    vertex: str
    subtask: int
    attempt: int
    task_manager: str
    slot: int
    deployed_ms: int
    started_ms: int
    ended_ms: int | None
    outcome: str
    error: str = ""


@dataclass(frozen=True, slots=True)
class Marker:
    """Something that happened to the job at one time: a ``failure``, a ``lost`` TaskManager,
    a JobManager ``recovery``, a ``cancel`` request, a TaskManager ``request-failed``, the
    job's ``end``, its ``archive`` (or the failure to write it)."""

    time_ms: int
    kind: str
    text: str


class _Open:
    __slots__ = ("deploy", "deployed_ms", "running_ms")

    def __init__(self, deploy: cmd.DeployTask, deployed_ms: int) -> None:
        self.deploy = deploy
        self.deployed_ms = deployed_ms
        self.running_ms: int | None = None


def _archived(event: ev.JobArchived) -> str:
    if event.error:
        return f"not archived: {_first_line(event.error)}"
    return f"archived to {event.archive}"


def _lost_label(event: ev.TaskManagerLost) -> str:
    """Which TaskManager, on which node, why, and how many whole partition files its node
    still held (surveyed as it was lost; none when the node was gone with it)."""
    files = len(event.kept)
    found = f"{files} whole partition file{'' if files == 1 else 's'} surveyed there"
    return (
        f"TaskManager {event.task_manager} lost on {node_words(event.node)}: "
        f"{_first_line(event.cause)}; {found}"
    )


# the events marked on the timeline as they are: the marker's kind and its text
_MARKERS = {
    ev.TaskManagerLost: ("lost", _lost_label),
    ev.JobCancelRequested: ("cancel", lambda e: f"cancel requested: {e.reason}"),
    ev.TaskManagerRequestFailed: (
        "request-failed",
        lambda e: f"TaskManagers of {e.slots} slots not started: {_first_line(e.reason)}",
    ),
    ev.JobEnded: ("end", lambda e: f"job {e.status}"),
    ev.JobArchived: ("archive", _archived),
}


class TimelineBuilder:
    """Fed every logged event with its time and the commands the core answered it with."""

    def __init__(self) -> None:
        self.open: dict[tuple[str, int, int], _Open] = {}
        self.ended: list[tuple[_Open, int, str, str]] = []
        self.markers: list[Marker] = []
        self.slots: dict[tuple[str, int], None] = {}  # rows, in the order TaskManagers came

    def saw(self, time_ms: int, event: object, commands: list) -> None:
        kind = type(event)
        handle = _HANDLERS.get(kind)
        if handle is not None:
            handle(self, event, time_ms)
        marked = _MARKERS.get(kind)
        if marked is not None:
            self.markers.append(Marker(time_ms, marked[0], marked[1](event)))
        for command in commands:
            if type(command) is cmd.DeployTask:
                key = (command.vertex, command.subtask, command.attempt)
                self.open[key] = _Open(command, time_ms)
                self.slots.setdefault((command.task_manager, command.slot), None)

    def _running(self, event: ev.TaskRunning, time_ms: int) -> None:
        opened = self.open.get((event.vertex, event.subtask, event.attempt))
        if opened is not None and opened.running_ms is None:
            opened.running_ms = time_ms

    def _registered(self, event: ev.TaskManagerRegistered, time_ms: int) -> None:
        self._add_slots(event.task_manager, event.slots)

    def _lost(self, event: ev.TaskManagerLost, time_ms: int) -> None:
        self._lose(lambda o: o.deploy.task_manager == event.task_manager, time_ms)

    def _add_slots(self, task_manager: str, slots: int) -> None:
        for index in range(slots):
            self.slots.setdefault((task_manager, index), None)

    def _ended(self, event, time_ms: int) -> None:
        opened = self.open.pop((event.vertex, event.subtask, event.attempt), None)
        if opened is None:
            return
        if type(event) is ev.TaskFinished:
            self.ended.append((opened, time_ms, "finished", ""))
        elif type(event) is ev.TaskCanceled:
            self.ended.append((opened, time_ms, "canceled", ""))
        else:
            error = _first_line(event.error)
            self.ended.append((opened, time_ms, "failed", error))
            self.markers.append(
                Marker(
                    time_ms,
                    "failure",
                    f"{event.vertex}[{event.subtask}] attempt {event.attempt} failed: {error}",
                )
            )

    def _lose(self, which, time_ms: int) -> None:
        for key, opened in list(self.open.items()):
            if which(opened):
                del self.open[key]
                self.ended.append((opened, time_ms, "lost", ""))

    def _recovered(self, event: ev.JobManagerRecovered, time_ms: int) -> None:
        """Attempts the answering TaskManagers neither run nor ended are lost, as are those
        on TaskManagers that did not answer (the core reruns them)."""
        running = {tuple(key) for report in event.task_managers for key in report.running}
        for report in event.task_managers:
            self._add_slots(report.task_manager, report.slots)
            for ended in report.ended:
                self._ended(ended, time_ms)
        self._lose(
            lambda o: (o.deploy.vertex, o.deploy.subtask, o.deploy.attempt) not in running, time_ms
        )
        answered = {report.task_manager for report in event.task_managers}
        self.markers.append(
            Marker(
                time_ms, "recovery", f"JobManager recovered: {len(answered)} TaskManagers answered"
            )
        )

    def attempts(self, job_ended: bool) -> list[Attempt]:
        """Every attempt, in the order they were deployed; those still open are ``running``,
        or ``abandoned`` when the job has ended."""
        rows = [(o, end, outcome, error) for o, end, outcome, error in self.ended]
        still = "abandoned" if job_ended else "running"
        rows.extend((o, None, still, "") for o in self.open.values())
        rows.sort(
            key=lambda row: (
                row[0].deployed_ms,
                row[0].deploy.vertex,
                row[0].deploy.subtask,
                row[0].deploy.attempt,
            )
        )
        free_at: dict[tuple[str, int], int] = {}
        attempts = []
        for opened, end, outcome, error in rows:
            d = opened.deploy
            slot = (d.task_manager, d.slot)
            started = opened.running_ms
            if started is None:  # too short to say it ran: it ran once its slot was free
                started = max(opened.deployed_ms, free_at.get(slot, 0))
                if end is not None:
                    started = min(started, end)
            if end is not None:
                free_at[slot] = max(free_at.get(slot, 0), end)
            attempts.append(
                Attempt(
                    d.vertex,
                    d.subtask,
                    d.attempt,
                    d.task_manager,
                    d.slot,
                    opened.deployed_ms,
                    started,
                    end,
                    outcome,
                    error,
                )
            )
        return attempts


# what each event does to the attempts and slots (before any marker it sets)
_HANDLERS = {
    ev.TaskRunning: TimelineBuilder._running,
    ev.TaskFinished: TimelineBuilder._ended,
    ev.TaskFailed: TimelineBuilder._ended,
    ev.TaskCanceled: TimelineBuilder._ended,
    ev.TaskManagerRegistered: TimelineBuilder._registered,
    ev.TaskManagerLost: TimelineBuilder._lost,
    ev.JobManagerRecovered: TimelineBuilder._recovered,
}


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    # a Python traceback says what went wrong on its last line
    return (lines[-1] if lines[0].startswith("Traceback") else lines[0]).strip()[:300]
