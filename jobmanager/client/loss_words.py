"""A lost TaskManager in words: what the watch says on the terminal, and what ``tidal explain``
and the report say of it, one wording for all three (``TaskManagerLossDetails``)."""

from __future__ import annotations

from jobmanager.runtime.details import TaskManagerLossDetails

__all__ = ["cost_words", "loss_summary", "lost_line", "node_words", "recovered_line"]


def node_words(node: str) -> str:
    """A Ray node id cut to its first 8 hex digits, as ``ray status`` users recognise it; the
    node is unknown when the TaskManager's node was gone before it could be asked."""
    if not node:
        return "an unknown node"
    return f"node {node[:8]}…" if len(node) > 8 else f"node {node}"


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def cost_words(loss: TaskManagerLossDetails, every: bool = False) -> str:
    """What the loss cost: the running tasks that run again, the finished outputs kept on the
    node, and the finished tasks that run again: on the terminal only when there are any,
    in a listing of every loss (``every``) always, so the losses read alike."""
    verb = "runs" if loss.running == 1 else "run"
    parts = [
        f"its {_count(loss.running, 'running task', 'running tasks')} {verb} again"
        if loss.running
        else "it was running no task",
        f"{_count(loss.kept, 'finished output', 'finished outputs')} kept on its node",
    ]
    if loss.rerun or every:
        verb = "runs" if loss.rerun == 1 else "run"
        parts.append(
            f"{_count(loss.rerun, 'finished task', 'finished tasks')} {verb} again "
            "(outputs lost with it)"
        )
    return ", ".join(parts)


def lost_line(loss: TaskManagerLossDetails) -> str:
    return (
        f"tidal: TaskManager {loss.task_manager} on {node_words(loss.node)} was lost; "
        f"{cost_words(loss)}"
    )


def recovered_line(job_id: str, loss: TaskManagerLossDetails) -> str:
    return f"tidal: job {job_id} recovered from the loss of TaskManager {loss.task_manager}"


def loss_summary(loss: TaskManagerLossDetails) -> str:
    """One loss as ``tidal explain`` and the report list it: which TaskManager, where, what
    it cost, and whether the job has recovered from it."""
    recovered = "recovered" if loss.recovered else "not recovered yet"
    return f"{loss.task_manager} on {node_words(loss.node)}: {cost_words(loss, every=True)}; {recovered}"
