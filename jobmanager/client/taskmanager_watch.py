"""A TaskManager lost, and the job recovered from it, in Tidal's words on the user's terminal.

A TaskManager SIGKILLed (or killed by the OOM killer) mid-job costs the tasks it was running;
its JobManager keeps the finished outputs still whole on its node and runs the rest again
(``jobmanager.core.losing``). Ray meanwhile prints the raylet's raw "A worker died or was
killed while executing a task by an unexpected system error ... Worker PID: <pid> ..." on the
client's terminal, which names neither Tidal's TaskManager nor what happens next. While
``JobHandle.wait`` follows a job, its ``JobManagerWatch`` hands the polled details and Ray's
lines to a ``TaskManagerWatch``, which says one line per loss (from
``JobDetails.task_manager_losses``, so each loss once, whichever process noticed it) and one
when the job has recovered from it, and holds back Ray's lines about the job's TaskManagers:
the worker-death line of a process that was one of them (their pids are looked up in Ray's
actor table as they join the job, and a pid not known so is looked for among the table's
TaskManagers, dead ones included: one killed before the client first saw it in the details) and
any line naming ``TaskManagerActor.``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable

from jobmanager.client.loss_words import lost_line, recovered_line
from jobmanager.runtime.details import JobDetails
from jobmanager.runtime.names import NAMESPACE

__all__ = ["TaskManagerWatch", "taskmanager_pid", "was_a_taskmanager"]

# Ray's worker-death line names the dead process so, and nothing of the actor it hosted
_WORKER_PID = re.compile(r"Worker PID: (\d+)\b")
_ACTOR_CLASS = "TaskManagerActor."  # as Ray names a task of the actor: "TaskManagerActor.run"


def taskmanager_pid(name: str) -> int | None:
    """The process of the TaskManager named ``name``, from Ray's actor table (the GCS, not
    the actor itself, which may be busy or gone); None while it has none or is not found."""
    import ray

    if not ray.is_initialized():
        return None
    try:
        from ray._private import state

        actor = ray.get_actor(name, namespace=NAMESPACE)
        return state.actors(actor._actor_id.hex()).get("Pid") or None
    except Exception:  # gone or never started: its death line, if any, stays Ray's
        return None


def was_a_taskmanager(pid: int) -> bool:
    """Whether Ray's actor table, which keeps dead actors with their processes, has a
    TaskManager whose process was ``pid`` (a call to the GCS: asked only for a death line no
    name lookup explained)."""
    import ray

    if not ray.is_initialized():
        return False
    try:
        from ray._private import state

        actors = state.actors().values()
    except Exception:  # the GCS unreachable: the line stays Ray's
        return False
    class_name = _ACTOR_CLASS.rstrip(".")
    return any(a.get("Pid") == pid and a.get("ActorClassName") == class_name for a in actors)


class TaskManagerWatch:
    """Follows one job's TaskManagers through the details the client polls (``saw``) and
    Ray's raw lines (``holds_back``)."""

    def __init__(
        self,
        job_id: str,
        say: Callable[[str], None],
        pid_of: Callable[[str], int | None] = taskmanager_pid,
        was_taskmanager: Callable[[int], bool] = was_a_taskmanager,
    ) -> None:
        self.job_id = job_id
        self.say = say
        self.pid_of = pid_of
        self.was_taskmanager = was_taskmanager
        self.pids: dict[int, str] = {}  # the job's TaskManagers' processes, to their names
        self._named: set[str] = set()  # whose process is known
        self._waiting: set[str] = set()  # seen in the details, process not known yet
        self._lost: set[tuple[str, int]] = set()  # (TaskManager, time) of each loss said
        self._recovered: set[tuple[str, int]] = set()
        self._lock = threading.Lock()  # Ray's lines come on Ray's thread

    def saw(self, status: JobDetails) -> None:
        with self._lock:
            self._waiting.update(set(status.task_managers) - self._named)
        self._look_up()
        with self._lock:
            for loss in status.task_manager_losses:
                key = (loss.task_manager, loss.time_ms)
                if key not in self._lost:
                    self._lost.add(key)
                    self.say(lost_line(loss))
                if loss.recovered and key not in self._recovered:
                    self._recovered.add(key)
                    self.say(recovered_line(self.job_id, loss))

    def holds_back(self, line: str) -> bool:
        """Whether Ray's raw ``line`` is about one of this job's TaskManagers, and so Tidal's
        to say: its worker-death line, or any line naming the actor's class."""
        if _ACTOR_CLASS in line:
            return True
        died = _WORKER_PID.search(line)
        if died is None:
            return False
        pid = int(died.group(1))
        if not self._knows(pid):
            self._look_up()  # a TaskManager killed before its process was looked up
        return self._knows(pid) or self.was_taskmanager(pid)  # killed before it was named

    def _knows(self, pid: int) -> bool:
        with self._lock:
            return pid in self.pids

    def _look_up(self) -> None:
        """Ask Ray for the processes of the TaskManagers not looked up yet (outside the lock:
        a call to Ray's GCS)."""
        with self._lock:
            names = sorted(self._waiting)
        found = _found(names, self.pid_of)
        with self._lock:
            for name, pid in found:
                self.pids[pid] = name
                self._named.add(name)
                self._waiting.discard(name)


def _found(names: Iterable[str], pid_of: Callable[[str], int | None]) -> list[tuple[str, int]]:
    return [(name, pid) for name in names if (pid := pid_of(name)) is not None]
