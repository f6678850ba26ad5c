"""A JobManager lost and recovered, in Tidal's words on the user's terminal.

A JobManager killed mid-job is restarted by Ray and takes its job over from the job's store
(``jobmanager.runtime.recovery``). Ray then prints raw lines about it on the client's terminal:
the raylet's "A worker died or was killed ..." naming the JobManager's process, and "Task
JobManagerActor.wait failed. There are infinite retries remaining ...". While
``JobHandle.wait`` follows a job, a ``JobManagerWatch`` holds those lines back and says one
line of Tidal's when the JobManager is lost (the raylet's line, or a status from another
process) and one when it has recovered (the job's status leaves ``RECONCILING``); a lost
TaskManager it hands to a ``TaskManagerWatch`` (``jobmanager.client.taskmanager_watch``).

Ray prints them from a thread of its own through ``ray._private.worker.print_to_stdstream``;
the watch filters what goes through it, and lets everything else (other processes' lines, and
all of them once no watch is active) through unchanged. One kind is never news, watched or
not: a call that reached a JobManager as it left after its job (Ray's "Task
JobManagerActor.status failed ... INTENDED_USER_EXIT"), which the client answers from the
job's store instead; ``install_filter`` puts the filter in place as a client connects.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from jobmanager.client.taskmanager_watch import TaskManagerWatch
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.runtime.details import JobDetails

__all__ = ["JobManagerWatch", "install_filter"]


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)  # sys.stderr now: a rich display may redirect it


class JobManagerWatch:
    """Follows one job's JobManager through the statuses the client polls (``saw``) and Ray's
    raw lines (``holds_back``); use it as a context manager around the polling. Its
    ``task_managers`` does the same for the job's TaskManagers
    (``jobmanager.client.taskmanager_watch``)."""

    def __init__(
        self,
        job_id: str,
        say: Callable[[str], None] = _to_stderr,
        task_managers: TaskManagerWatch | None = None,
    ) -> None:
        self.job_id = job_id
        self.say = say
        self.task_managers = task_managers or TaskManagerWatch(job_id, say)
        self.pid: int | None = None  # the JobManager's process, as its last status said
        self.lost = False
        self._lock = threading.Lock()  # Ray's lines come on Ray's thread

    def saw(self, status: JobDetails) -> None:
        self.task_managers.saw(status)
        with self._lock:
            if self.pid is not None and status.pid != self.pid:
                self._lost(self.pid)
            self.pid = status.pid
            if self.lost and status.status is not JobStatus.RECONCILING:
                self.lost = False
                self.say(
                    f"tidal: the JobManager of job {self.job_id} has recovered (process "
                    f"{status.pid}, recovery {status.recoveries}); the job goes on"
                )

    def holds_back(self, line: str) -> bool:
        """Whether Ray's raw ``line`` is about this job's JobManager or one of its
        TaskManagers, and so Tidal's to say."""
        if self.task_managers.holds_back(line):
            return True
        with self._lock:
            retried = "JobManagerActor." in line and "retries remaining" in line
            died = self.pid is not None and f"Worker PID: {self.pid} " in line
            if died:  # a call retried says only that it did not get through: the status says
                self._lost(self.pid)
            return retried or died

    def _lost(self, pid: int | None) -> None:
        if not self.lost:
            self.lost = True
            process = f" (process {pid} ended)" if pid is not None else ""
            self.say(
                f"tidal: the JobManager of job {self.job_id} was lost{process}; Ray restarts "
                "it, and it takes the job over from the job's event log"
            )

    def __enter__(self) -> JobManagerWatch:
        with _ACTIVE_LOCK:
            install_filter()
            _ACTIVE.add(self)
        return self

    def __exit__(self, *exc_info) -> None:
        with _ACTIVE_LOCK:
            _ACTIVE.discard(self)


_ACTIVE: set[JobManagerWatch] = set()
_ACTIVE_LOCK = threading.Lock()


def _a_left_jobmanager(line: str) -> bool:
    """Ray's line about a call that found a JobManager gone by its own wish (its job over)."""
    return "JobManagerActor." in line and "INTENDED_USER_EXIT" in line


def install_filter() -> None:
    """Once per process: Ray's printer of the raylet's lines goes through the active watches,
    and never prints a line about a JobManager that left after its job."""
    try:
        from ray._private import worker
    except ImportError:
        return
    original = getattr(worker, "print_to_stdstream", None)
    if original is None or getattr(original, "tidal_filter", False):
        return

    def filtered(data, *args, **kwargs):
        if data.get("pid") == "raylet":
            watches = list(_ACTIVE)
            lines = [
                line
                for line in data.get("lines", ())
                if not _a_left_jobmanager(line)
                and not any(watch.holds_back(line) for watch in watches)
            ]
            if not lines:
                return None
            data = {**data, "lines": lines}
        return original(data, *args, **kwargs)

    filtered.tidal_filter = True
    worker.print_to_stdstream = filtered
