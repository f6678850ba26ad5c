"""The first TaskManager's lease, asked for before the job is admitted.

A JobManager handed its job first admits it (lists the sources whose answers decide its chains,
stores its code, writes ``JobSubmitted``: 10 to 20 ms on two cores), and only then does its
core ask for the first TaskManager, whose lease and attachment are more round trips through
the ResourceManager and the TaskManager (10 to 20 ms again). The lease is the same request
whatever the admission finds, so the shell asks for it first and the two overlap; the core's
first ``RequestTaskManagers`` of that size takes it (``CommandExecutor``).
"""

from __future__ import annotations

from dataclasses import dataclass

from jobmanager.core.admission import slot_limit
from jobmanager.core.scheduler.slots import first_task_manager_slots
from jobmanager.model.config import NUMBER_OF_TASK_SLOTS, Configuration
from jobmanager.runtime.names import resource_manager_handle

__all__ = ["EarlyLease"]


@dataclass(frozen=True, slots=True)
class EarlyLease:
    slots: int
    lease: object  # the ObjectRef of ResourceManager.lease

    @staticmethod
    def ask(job_id: str, config: Configuration, cluster_cpus: int) -> EarlyLease | None:
        """A lease of the TaskManager the core asks for first (``first_task_manager_slots``);
        None where there is no ResourceManager, or the job may hold no slot."""
        slots = first_task_manager_slots(
            config[NUMBER_OF_TASK_SLOTS.key], slot_limit(config, cluster_cpus)
        )
        if slots <= 0:
            return None
        try:
            rm = resource_manager_handle()
        except ValueError:
            return None
        return EarlyLease(slots, rm.lease.remote(job_id, slots, config.to_bytes()))

    def take(self, job_id: str, slots: int):
        """The lease, for a request of ``slots`` slots; for another size, None, and the lease
        goes back as soon as it is granted: it must not hold the cores the asked one needs."""
        if slots == self.slots:
            return self.lease

        def give_back(future) -> None:
            try:
                granted = future.result()
                if granted is not None:
                    resource_manager_handle().give_back.remote(job_id, granted[0])
            except Exception:  # no TaskManager came of it, or no ResourceManager to tell
                pass

        self.lease.future().add_done_callback(give_back)
        return None
