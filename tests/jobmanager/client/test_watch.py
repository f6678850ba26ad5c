"""A JobManager lost and recovered is one line of Tidal's each, in place of Ray's raw lines
about it (``jobmanager.client.watch``); no cluster: statuses and Ray's lines are handed in."""

from __future__ import annotations

from dataclasses import dataclass

import ray._private.worker as ray_worker

from jobmanager.client.watch import JobManagerWatch
from jobmanager.messages.jobstatus import JobStatus

DIED = (
    "A worker died or was killed while executing a task by an unexpected system error. "
    "Worker PID: {pid} Worker exit type: SYSTEM_ERROR"
)
RETRIED = (
    "Task JobManagerActor.wait failed. There are infinite retries remaining, so the task "
    "will be retried. Error: The actor is temporarily unavailable"
)


@dataclass
class Status:  # the fields of JobDetails the watch reads
    pid: int
    status: JobStatus
    recoveries: int = 0
    task_managers: tuple = ()
    task_manager_losses: tuple = ()


def watch() -> tuple[JobManagerWatch, list[str]]:
    said: list[str] = []
    return JobManagerWatch("j1", say=said.append), said


def test_rays_lines_about_the_jobmanager_become_one_lost_line_and_one_recovered_line():
    w, said = watch()
    w.saw(Status(100, JobStatus.RUNNING))
    assert w.holds_back(DIED.format(pid=100)) and w.holds_back(RETRIED)
    assert not w.holds_back(DIED.format(pid=200))  # another process: not the JobManager
    w.saw(Status(101, JobStatus.RECONCILING, 1))
    w.saw(Status(101, JobStatus.RECONCILING, 1))
    assert said == [
        "tidal: the JobManager of job j1 was lost (process 100 ended); Ray restarts "
        "it, and it takes the job over from the job's event log"
    ]
    w.saw(Status(101, JobStatus.RUNNING, 1))
    w.saw(Status(101, JobStatus.FINISHED, 1))
    assert said[1:] == [
        "tidal: the JobManager of job j1 has recovered (process 101, recovery 1); the job goes on"
    ]


def test_a_retried_call_alone_is_held_back_and_says_nothing_while_the_same_process_answers():
    w, said = watch()
    w.saw(Status(100, JobStatus.RUNNING))
    assert w.holds_back(RETRIED)
    w.saw(Status(100, JobStatus.RUNNING))
    assert said == []


def test_a_status_from_another_process_says_lost_when_ray_said_nothing():
    w, said = watch()
    w.saw(Status(100, JobStatus.RUNNING))
    w.saw(Status(101, JobStatus.RUNNING, 1))  # taken over between two polls
    assert [line.split(" (")[0] for line in said] == [
        "tidal: the JobManager of job j1 was lost",
        "tidal: the JobManager of job j1 has recovered",
    ]
    w.saw(Status(101, JobStatus.RUNNING, 1))
    assert len(said) == 2


def test_rays_printer_holds_back_only_what_an_active_watch_claims(capsys):
    w, said = watch()
    w.saw(Status(100, JobStatus.RUNNING))
    other = DIED.format(pid=200)

    def ray_prints(*lines: str) -> str:
        ray_worker.print_to_stdstream(
            {"lines": list(lines), "pid": "raylet", "is_err": False}, ignore_prefix=False
        )
        return capsys.readouterr().out

    with w:
        shown = ray_prints(DIED.format(pid=100), RETRIED, other)
    assert "Worker PID: 100" not in shown and "retries remaining" not in shown
    assert "Worker PID: 200" in shown
    assert len(said) == 1
    assert "retries remaining" in ray_prints(RETRIED.replace("wait", "status"))  # no watch active


def test_rays_line_about_a_jobmanager_that_left_after_its_job_is_never_printed(capsys):
    """A status asked as the JobManager leaves is answered from the job's store: Ray's line
    about the call is not news, with or without a watch."""
    from jobmanager.client.watch import install_filter

    install_filter()
    left = (
        "Task JobManagerActor.status failed. There are infinite retries remaining, so the task "
        "will be retried. Error: The actor is dead because its worker process has died. Worker "
        "exit type: INTENDED_USER_EXIT Worker exit detail: Worker exits by an user request."
    )
    ray_worker.print_to_stdstream(
        {
            "lines": [left, "The node ran low on memory: a line of its own"],
            "pid": "raylet",
            "is_err": False,
        },
        ignore_prefix=False,
    )
    shown = capsys.readouterr().out
    assert "INTENDED_USER_EXIT" not in shown
    assert "ran low on memory" in shown  # any other line of Ray's still shows
