"""A lost TaskManager is one line of Tidal's, and the job's recovery from it another, in place
of Ray's raw lines about its process (``jobmanager.client.taskmanager_watch``); no cluster:
details, Ray's lines and the TaskManagers' processes are handed in."""

from __future__ import annotations

from dataclasses import dataclass

import ray._private.worker as ray_worker

from jobmanager.client.loss_words import lost_line
from jobmanager.client.taskmanager_watch import TaskManagerWatch
from jobmanager.client.watch import JobManagerWatch
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.runtime.details import TaskManagerLossDetails

NODE = "4f2a9c1d0e7b" + "0" * 44
DIED = (
    "A worker died or was killed while executing a task by an unexpected system error. To "
    "troubleshoot the problem, check the logs for the dead worker. Lease ID: 0200 Worker ID: "
    "bc60 Node ID: d263 Worker IP address: 192.0.2.2 Worker port: 43887 Worker PID: {pid} "
    "Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a "
    "connection error code 2. End of file."
)
FAILED = (
    "Task TaskManagerActor.run failed. There are 0 retries remaining. Error: The actor died "
    "unexpectedly before finishing this task."
)


@dataclass
class Status:  # the fields of JobDetails the watches read
    task_managers: tuple = ()
    task_manager_losses: tuple = ()
    pid: int = 100
    status: JobStatus = JobStatus.RUNNING
    recoveries: int = 0


def loss(recovered: bool = False, running: int = 2, rerun: int = 0, kept: int = 14):
    return TaskManagerLossDetails("tm-3", NODE, 1000, running, rerun, kept, recovered)


def watch(
    pids: dict[str, int] | None = None, in_actor_table: frozenset[int] = frozenset()
) -> tuple[TaskManagerWatch, list[str], list[str]]:
    """A watch whose name lookups find ``pids`` (alive TaskManagers) and whose actor table has
    TaskManagers, dead ones included, with the processes ``in_actor_table``."""
    said: list[str] = []
    asked: list[str] = []

    def pid_of(name: str) -> int | None:
        asked.append(name)
        return (pids or {}).get(name)

    return TaskManagerWatch("j", said.append, pid_of, in_actor_table.__contains__), said, asked


def test_a_loss_is_one_line_and_its_recovery_another_each_said_once():
    w, said, _ = watch()
    w.saw(Status(("tm-3",)))
    w.saw(Status((), (loss(),)))
    w.saw(Status((), (loss(),)))
    assert said == [
        "tidal: TaskManager tm-3 on node 4f2a9c1d… was lost; its 2 running tasks run again, "
        "14 finished outputs kept on its node"
    ]
    w.saw(Status((), (loss(recovered=True),)))
    w.saw(Status((), (loss(recovered=True),)))
    assert said[1:] == ["tidal: job j recovered from the loss of TaskManager tm-3"]


def test_a_loss_first_seen_recovered_says_both_lines_in_order():
    w, said, _ = watch()
    w.saw(Status((), (loss(recovered=True),)))
    assert [" ".join(line.split(" ")[1:4]) for line in said] == [
        "TaskManager tm-3 on",
        "job j recovered",
    ]


def test_the_line_counts_finished_tasks_that_run_again_and_speaks_of_one_as_one():
    assert lost_line(loss(running=1, rerun=3, kept=1)) == (
        "tidal: TaskManager tm-3 on node 4f2a9c1d… was lost; its 1 running task runs again, "
        "1 finished output kept on its node, 3 finished tasks run again (outputs lost with it)"
    )
    gone = TaskManagerLossDetails("tm-4", "", 5, 0, 1, 0, False)
    assert lost_line(gone) == (
        "tidal: TaskManager tm-4 on an unknown node was lost; it was running no task, "
        "0 finished outputs kept on its node, 1 finished task runs again (outputs lost with it)"
    )


def test_rays_lines_about_a_taskmanagers_process_are_held_back_and_no_other():
    w, said, asked = watch({"tm-3": 4321})
    w.saw(Status(("tm-3",)))
    w.saw(Status(("tm-3",)))
    assert asked == ["tm-3"]  # each TaskManager's process looked up once
    assert w.holds_back(DIED.format(pid=4321))
    assert w.holds_back(FAILED)
    assert not w.holds_back(DIED.format(pid=43210))  # another process
    assert not w.holds_back("Worker PID: 999 is not a TaskManager's")
    assert not w.holds_back("The node ran low on memory")
    assert said == []  # Ray's lines alone say nothing: the details do


def test_a_taskmanager_killed_before_its_process_was_known_is_looked_up_on_rays_line():
    pids: dict[str, int] = {}
    w, _, asked = watch(pids)
    w.saw(Status(("tm-3",)))  # its actor not created yet: no process
    pids["tm-3"] = 4321
    assert w.holds_back(DIED.format(pid=4321))
    assert asked == ["tm-3", "tm-3"]


def test_a_taskmanager_killed_before_the_details_named_it_is_found_in_rays_actor_table():
    w, _, _ = watch(in_actor_table=frozenset({4321}))  # polled only after its death, if ever
    w.saw(Status(("tm-4",)))  # its replacement
    assert w.holds_back(DIED.format(pid=4321))
    assert not w.holds_back(DIED.format(pid=77))  # no TaskManager's process


def test_the_jobmanagers_watch_holds_back_rays_lines_about_its_taskmanagers(capsys):
    said: list[str] = []
    tms = TaskManagerWatch("j", said.append, {"tm-3": 4321}.get, frozenset().__contains__)
    w = JobManagerWatch("j", say=said.append, task_managers=tms)
    w.saw(Status(("tm-3",)))

    def ray_prints(*lines: str) -> str:
        ray_worker.print_to_stdstream(
            {"lines": list(lines), "pid": "raylet", "is_err": False}, ignore_prefix=False
        )
        return capsys.readouterr().out

    with w:
        shown = ray_prints(DIED.format(pid=4321), FAILED, DIED.format(pid=77))
        w.saw(Status((), (loss(),)))
    assert "Worker PID: 4321" not in shown and "TaskManagerActor" not in shown
    assert "Worker PID: 77" in shown
    assert said == [lost_line(loss())]
    assert "TaskManagerActor" in ray_prints(FAILED)  # no watch active: Ray's line is Ray's
