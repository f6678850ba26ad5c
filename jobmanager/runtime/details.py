"""What a client reads of a job: its ``JobDetails`` (Flink's REST name for the same), a message.

A JobManager answers ``status()`` with them msgpack-encoded, stores them in the job's store when
it leaves, and a client, the CLI, the progress display, ``tidal report`` and ``tidal history``
read them back by attribute: one schema, written here, instead of a dict whose keys each
reader guessed with its own defaults. ``status`` is always a ``JobStatus`` member.
"""

from __future__ import annotations

from jobmanager.messages.codec import decode, encode, message
from jobmanager.messages.jobstatus import JobStatus

__all__ = [
    "JobDetails",
    "JobSummary",
    "ProcessFigures",
    "TaskManagerLossDetails",
    "VertexDetails",
    "details_of_v0",
    "read_details",
]


@message
class VertexDetails:
    """One vertex (a task of chained vertices: ``members`` names them all): its parallelism
    and why (``explanation``), its tasks, and what they read, wrote and where time went, summed
    over its subtasks' latest metrics."""

    name: str
    members: tuple[str, ...]
    parallelism: int | None
    max_parallelism: int | None
    tasks: int
    finished: int
    running: int
    deployments: int
    rows_in: int
    rows_out: int
    bytes_in: int
    bytes_in_remote: int
    ranges_read: int
    phases_ms: dict[str, int]
    queued_ms: int
    spark_jobs: int
    bytes_out: int
    duration_s: float | None
    started_at: float | None
    explanation: str

    @property
    def total(self) -> int | None:
        """Its number of tasks, or None while its parallelism is not decided."""
        return None if self.parallelism is None else self.tasks

    @property
    def done(self) -> bool:
        return bool(self.total) and self.finished >= self.total


@message
class ProcessFigures:
    """The JobManager process's main-loop latency per batch of events and its peak memory."""

    loop_batches: int
    loop_median_ms: float | None
    loop_p99_ms: float | None
    peak_rss_bytes: int


@message
class TaskManagerLossDetails:
    """A TaskManager the job lost: which, on which node, how many running subtasks ran again
    (``running``), how many finished ones ran again for outputs lost with it (``rerun``), how
    many finished outputs were kept on its node (``kept``), and whether every subtask it sent
    back has finished again (``recovered``)."""

    task_manager: str
    node: str
    time_ms: int
    running: int
    rerun: int
    kept: int
    recovered: bool


@message
class JobDetails:
    """A job as its JobManager sees it now, or saw it when it left (``ended_at`` set)."""

    job_id: str
    name: str
    status: JobStatus
    cause: str
    submitted_at: float
    ended_at: float | None
    max_running_tasks: int
    task_overhead_ms: float
    first_deployed_at: float | None
    first_task_finished_at: float | None
    task_managers: tuple[str, ...]
    recoveries: int
    vertices: tuple[VertexDetails, ...]
    pid: int
    jobmanager: ProcessFigures | None
    task_manager_losses: tuple[TaskManagerLossDetails, ...] = ()

    def __post_init__(self) -> None:
        # msgpack carries the status as its name; the message holds the member
        object.__setattr__(self, "status", JobStatus(self.status))

    def encode(self) -> bytes:
        return encode(self)

    def summary(self) -> JobSummary:
        return JobSummary(
            self.job_id,
            self.name,
            self.status,
            self.submitted_at,
            self.ended_at,
            len(self.vertices),
        )


@message
class JobSummary:
    """A job in a list (``Client.list``, ``tidal list``), and what a job's record keeps of its
    end: its status and times, and how many vertices it had."""

    job_id: str
    name: str
    status: JobStatus
    submitted_at: float
    ended_at: float | None
    vertices: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", JobStatus(self.status))


def details_of_v0(status: dict) -> JobDetails:
    """The final status a Tidal before ``JobDetails`` stored (``status.json``: a dict whose
    later keys older versions did not write), so its archives stay in ``tidal history``."""
    vertices = tuple(
        VertexDetails(
            v["name"],
            tuple(v.get("members") or (v["name"],)),
            v["parallelism"],
            v.get("max_parallelism"),
            v["tasks"],
            v["finished"],
            v.get("running", 0),
            v["deployments"],
            v["rows_in"],
            v["rows_out"],
            v["bytes_in"],
            v.get("bytes_in_remote", 0),
            v.get("ranges_read", 0),
            dict(v.get("phases_ms", {})),
            v.get("queued_ms", 0),
            v.get("spark_jobs", 0),
            v["bytes_out"],
            v["duration_s"],
            v.get("started_at"),
            v["explanation"],
        )
        for v in status["vertices"]
    )
    return JobDetails(
        status["job_id"],
        status["name"],
        _V0_STATES.get(status["status"], status["status"]),
        status["cause"] or "",
        status["submitted_at"],
        status["ended_at"],
        status.get("max_running_tasks", 0),
        status.get("task_overhead_ms", 0.0),
        status.get("first_deployed_at"),
        status.get("first_task_finished_at"),
        tuple(status.get("task_managers", ())),
        status.get("recoveries", 0),
        vertices,
        status.get("pid", 0),
        None,
    )


_V0_STATES = {"RECOVERING": JobStatus.RECONCILING}


def read_details(data: bytes) -> JobDetails:
    """``JobDetails`` from the bytes a JobManager answered or stored; anything else is an error
    (a process of an incompatible version)."""
    details = decode(data)
    if not isinstance(details, JobDetails):
        raise TypeError(f"expected a job's details, got {type(details).__name__}")
    return details
