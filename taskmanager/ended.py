"""EndedTasks: the final report of every task this TaskManager ran for its job, kept a while.

A report is acknowledged by the JobManager when it arrives, and written to the job's log a
moment later; a JobManager that dies in between loses it. So the TaskManager keeps each task's
last word (finished with its byte counts, failed, cancelled), and a JobManager taking the job
over asks for those of the tasks it had in flight. A finished task's report goes when its
partitions are released (nobody can need it after that); the rest go with the job.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from jobmanager.messages.events import Event, TaskCanceled, TaskFailed, TaskFinished
from shuffle import PartitionId

__all__ = ["EndedTasks"]

TaskKey = tuple[str, int, int]
_FINAL = (TaskFinished, TaskFailed, TaskCanceled)


class EndedTasks:
    def __init__(self) -> None:
        self._reports: dict[TaskKey, Event] = {}
        self._producer: dict[tuple[str, int, int], TaskKey] = {}  # (result, index, attempt)
        self._lock = threading.Lock()

    def record(self, event: Event) -> None:
        """Keep ``event`` if it is a task's final report (anything else passes by)."""
        if not isinstance(event, _FINAL):
            return
        key = (event.vertex, event.subtask, event.attempt)
        with self._lock:
            self._reports[key] = event
            if isinstance(event, TaskFinished):
                for produced in event.produced:
                    self._producer[(produced.result, event.subtask, event.attempt)] = key

    def released(self, partitions: Iterable[PartitionId], attempts: Iterable[int]) -> None:
        with self._lock:
            for pid, attempt in zip(partitions, attempts, strict=True):
                key = self._producer.pop((pid.result, pid.index, attempt), None)
                if key is not None:
                    self._reports.pop(key, None)

    def reports_of(self, keys: Iterable[TaskKey]) -> list[Event]:
        with self._lock:
            return [self._reports[key] for key in keys if key in self._reports]

    def __len__(self) -> int:
        with self._lock:
            return len(self._reports)
