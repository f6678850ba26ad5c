"""The states of a job as a whole: every state a user can see, as Flink names them where Flink
has a name.

The core moves a job through CREATED, RUNNING, FAILING, CANCELLING and the three terminal
states. The shell shows three more, which the core never holds: STANDBY (a JobManager kept
ready before it has a job; Flink has no such process), RECONCILING (a restarted JobManager
taking its job over from the job's store and waiting for its TaskManagers' reports, Flink's
name for that) and FINISHING (the core has ended the job, and the JobManager is still
committing its sinks and storing its end). A ``StrEnum``, so a status travels in msgpack as
its name and reads back as the member.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["JobStatus"]


class JobStatus(StrEnum):
    STANDBY = "STANDBY"
    CREATED = "CREATED"
    RECONCILING = "RECONCILING"
    RUNNING = "RUNNING"
    FAILING = "FAILING"
    CANCELLING = "CANCELLING"
    FINISHING = "FINISHING"
    FINISHED = "FINISHED"
    FAILED = "FAILED"
    CANCELED = "CANCELED"

    @property
    def is_terminal(self) -> bool:
        return self in (JobStatus.FINISHED, JobStatus.FAILED, JobStatus.CANCELED)
