"""What the loss of one TaskManager cost a job, as its JobManager decided it: a record the
state keeps (and snapshots), and the client reads through ``JobDetails``."""

from __future__ import annotations

from jobmanager.messages.codec import message

__all__ = ["TaskManagerLoss"]


@message
class TaskManagerLoss:
    """``running``: the subtasks it was running, which run again; ``rerun``: finished
    subtasks that run again because their output was lost with it (its node gone, or the
    file missing or not the one written); ``kept``: finished outputs kept on its node.
    ``subtasks``: the execution vertices the loss sent back, so a reader can tell when the
    job has recovered from it (all of them finished again)."""

    task_manager: str
    node: str
    time_ms: int
    running: int
    rerun: int
    kept: int
    subtasks: tuple[int, ...] = ()
