"""What a cluster started by the client prepares for its first job, so that the job finds it up
or on its way rather than starting it: a standby JobManager, and a TaskManager whose Spark JVM
the client launched as the cluster started.

A cold start is a chain: Ray's processes, then the ResourceManager's, then the TaskManager's,
then its JVM, and the first task waits for the end of it. The JVM needs nothing from Ray, so
:class:`FirstJvm` launches it just before Ray starts (``taskmanager.jvm_handover``), and the
prepared TaskManager adopts it. TPC-H Q6 as the first job of a fresh local cluster, on two
cores: its JVM's session up 17.2 s after the process began with the JVM launched by the
TaskManager, 15.9 s so (the Spark context made before the TaskManager asks), and the job's
result 26.0 s against 21.7 s after the process began.
"""

from __future__ import annotations

import os
import threading

import ray
import structlog

from jobmanager.messages.codec import encode
from jobmanager.model.config import Configuration
from jobmanager.runtime.jobstore import store_root
from jobmanager.runtime.resourcemanager import resource_manager
from taskmanager.jvm_handover import LaunchedJvm, launch

__all__ = ["FirstJvm", "prepare_first_job"]

_ADOPTION_TIMEOUT_S = 120.0  # a TaskManager's process starts in seconds, even on a busy host
_log = structlog.get_logger("tidal.client")


class FirstJvm:
    """The first TaskManager's Spark JVM, of the default shape (as the TaskManager prepared for
    the first job is), launched when :meth:`launch` is called: as a cluster starts in this
    process."""

    def __init__(self, num_cpus: int | None) -> None:
        self.num_cpus = num_cpus
        self.launched: LaunchedJvm | None = None

    def launch(self) -> None:
        defaults = Configuration()
        slots = min(defaults["taskmanager.numberOfTaskSlots"],
                    self.num_cpus or os.cpu_count() or 1)  # fmt: skip
        try:
            self.launched = launch(slots, defaults["taskmanager.memory.spark-driver"])
        except Exception as error:  # no Java, say: the TaskManager's own start will say so
            _log.info("spark jvm not launched ahead", error=f"{type(error).__name__}: {error}")


def prepare_first_job(jvm: LaunchedJvm | None = None) -> None:
    """Ask the new cluster's ResourceManager for a standby JobManager and a warm TaskManager
    (given ``jvm`` to adopt), without waiting for either. With ``jvm``, a thread of this
    process has the JVM make its Spark context meanwhile, and lets go of the JVM once the
    TaskManager holds it."""
    defaults = Configuration()
    rm = resource_manager(defaults["resourcemanager.taskmanager-timeout"] / 1000,
                          store_root(defaults))  # fmt: skip
    rm.prepare_job_manager.remote()
    prepared = rm.prepare_task_manager.remote(defaults.to_bytes(),
                                              None if jvm is None else encode(jvm.ticket))
    if jvm is None:
        return

    def hand_over() -> None:
        jvm.start_context(_ADOPTION_TIMEOUT_S)
        try:
            given = ray.get(prepared) is not None
        except Exception:  # noqa: BLE001 - the ResourceManager is gone: the cluster is ending
            given = False
        jvm.hand_over(_ADOPTION_TIMEOUT_S, given)

    threading.Thread(target=hand_over, name="tidal-jvm-hand-over", daemon=True).start()
