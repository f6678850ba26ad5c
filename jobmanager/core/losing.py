"""A TaskManager lost: the part of ``JobManagerState`` that decides what its death costs.

The subtasks it was running fail and run again. Its finished partitions are another matter:
their files are on its node's disk, which outlives the process. When the node is up, the
shell surveys the dead TaskManager's shuffle directory there (``shuffle.survey``) and the
event carries each whole file's path, size and fingerprint; a partition whose file is there,
the size and fingerprint its producer reported when it finished, is kept where it is, and
its consumers go on reading it. Only the others (a node gone, a file missing or not the one
written) send their producers back. So a killed process costs what it was running, and a
lost node costs what was on it, as region failover reruns it.

The restart after a lost process waits for no back-off: a process dying says nothing about
the tasks, and a replacement is asked for at once. The restart still counts as a failure for
the restart strategy's attempts, as Flink counts it.

A mixin of the state, as ``Failing`` is; the TaskManager's registration moves to
``departed`` while a kept partition names it, so its descriptors still say where the file is.
"""

from __future__ import annotations

from jobmanager.core.executiongraph import ExecutionState, ExecutionVertex, PartitionState
from jobmanager.messages import events as ev
from jobmanager.messages.losses import TaskManagerLoss
from shuffle.paths import partition_path

__all__ = ["Losing"]

S = ExecutionState


class Losing:
    def _on_task_manager_lost(self, event: ev.TaskManagerLost) -> None:
        registration = self.task_managers.pop(event.task_manager, None)
        self.speculation.lost(event.task_manager)
        self.slots.remove(event.task_manager)
        failed: dict[int, ExecutionVertex] = {}
        for v in self.graph.vertices():
            if v.slot is None or v.slot.task_manager != event.task_manager:
                continue
            if v.state is S.CANCELING:
                self.canceled(v)
            else:
                self.free_slot(v)
                self.graph.transitions.move(v, S.FAILED)
                failed[v.index] = v
        running = len(failed)
        kept = self._keep_whole_files(event, registration, failed)
        if kept and registration is not None:
            self.departed[event.task_manager] = registration
        self.losses.append(
            TaskManagerLoss(
                event.task_manager,
                event.node or (registration.node if registration else ""),
                event.time_ms,
                running,
                len(failed) - running,
                kept,
                tuple(sorted(failed)),
            )
        )
        self.log.warning(
            "task manager lost",
            task_manager=event.task_manager,
            running=running,
            rerun=len(failed) - running,
            kept=kept,
        )
        if failed:
            cause = f"TaskManager {event.task_manager} lost: {event.cause}"
            self.fail_over(list(failed.values()), cause, event.time_ms, backoff=False)
        self.maybe_terminate()
        self.dispatch()

    def _keep_whole_files(
        self, event: ev.TaskManagerLost, registration, failed: dict[int, ExecutionVertex]
    ) -> int:
        """Keep the finished partitions whose files the survey found whole; mark the others
        lost and add their producers to ``failed``. Return how many were kept."""
        on_disk = {path: (size, checksum) for path, size, checksum in event.kept}
        kept = 0
        for result in self.graph.results.values():
            for p in result.partitions:
                if p.state is not PartitionState.AVAILABLE or p.location != event.task_manager:
                    continue
                if (
                    registration is not None
                    and p.size
                    and on_disk.get(
                        partition_path(registration.shuffle_root, p.id, p.producer.attempt)
                    )
                    == (p.size, p.checksum)
                ):
                    kept += 1
                    continue
                p.mark_lost()
                failed.setdefault(p.producer.index, p.producer)
        return kept

    def registration(self, task_manager: str) -> ev.TaskManagerRegistered | None:
        """A TaskManager's registration, alive or departed with partitions kept."""
        found = self.task_managers.get(task_manager)
        return found if found is not None else self.departed.get(task_manager)
