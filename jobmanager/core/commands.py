"""Commands: what the scheduling core asks its shell to do.

The core returns them from ``handle(event)``; the shell (the Ray JobManager actor, or the
simulated cluster of a stress run) carries them out and feeds the outcome back as events.
"""

from __future__ import annotations

from jobmanager.messages.codec import message
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.model.inference import InferenceContext
from shuffle.ids import PartitionId

__all__ = [
    "CancelTask",
    "Command",
    "DeployTask",
    "InferSourceParallelism",
    "JobTerminated",
    "ReleasePartitions",
    "RequestTaskManagers",
    "StartTimer",
]


@message
class RequestTaskManagers:
    count: int
    slots_each: int


@message
class DeployTask:
    vertex: str
    subtask: int
    attempt: int
    task_manager: str
    slot: int


@message
class CancelTask:
    vertex: str
    subtask: int
    attempt: int
    task_manager: str


@message
class ReleasePartitions:
    """Delete these partitions' files: those written by the producer attempts given."""

    task_manager: str
    partitions: tuple[PartitionId, ...]
    attempts: tuple[int, ...]


@message
class StartTimer:
    """Fire ``TimerFired(token)`` after ``delay_ms``."""

    token: int
    delay_ms: int


@message
class JobTerminated:
    status: JobStatus
    cause: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", JobStatus(self.status))  # msgpack carries its name


@message
class InferSourceParallelism:
    """Ask the vertex's sources for their parallelism, off the main loop (it may list files),
    and feed back SourceParallelismInferred or SourceInferenceFailed."""

    vertex: str
    context: InferenceContext


Command = (
    RequestTaskManagers
    | DeployTask
    | CancelTask
    | ReleasePartitions
    | StartTimer
    | JobTerminated
    | InferSourceParallelism
)
