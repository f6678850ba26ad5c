"""The JobManager: one detached, named Ray actor per job, holding the scheduling core.

Its main loop runs on one thread: take a message, append its event to the job's event log,
apply it (``JobManagerState.handle``), hand the commands to the executor. Everything else that
reaches the actor (TaskManagers reporting, clients asking for status, timers firing, Ray
callbacks) only puts a message in the mailbox or reads a status built under the same lock, so
the core never sees two threads.
"""

from __future__ import annotations

import os
import queue
import tempfile
import threading
import time
import traceback

import cloudpickle
import ray
import structlog

from blob import BlobKey, FileSystemBlobStore
from jobmanager.core.state import JobManagerState
from jobmanager.logs import configure_logging
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode
from jobmanager.model.config import Configuration
from jobmanager.model.operators import serialize_vertex_code
from jobmanager.runtime.eventlog import EventLog
from jobmanager.runtime.executor import CommandExecutor
from jobmanager.runtime.names import NAMESPACE, job_manager_name, resource_manager_handle
from jobmanager.runtime.status import TaskLedger, job_status

__all__ = ["STANDBY", "JobManagerActor", "create_job_manager", "work_directory"]

STANDBY = "STANDBY"  # the status of a JobManager that has no job yet
_STOP = object()


def work_directory(config: Configuration, job_id: str) -> str:
    base = config["io.tmp.dirs"] or tempfile.gettempdir()
    return os.path.join(base, "tidal", job_id)


def create_job_manager(job_id: str):
    """A new JobManager actor for ``job_id``, detached: the job outlives whoever submitted it."""
    return (
        ray.remote(JobManagerActor)
        .options(name=job_manager_name(job_id), namespace=NAMESPACE, lifetime="detached",
                 num_cpus=0, max_concurrency=64, max_restarts=0)  # fmt: skip
        .remote(job_id)
    )


def _warm_up() -> None:
    """Before the job comes (or while it starts): load what inferring a source's parallelism
    and unpickling PySpark functions need, and open the connection to the ResourceManager."""
    import pyarrow.parquet  # noqa: F401
    import pyspark.sql.functions  # noqa: F401

    import jobmanager.model.sources  # noqa: F401
    import taskmanager.actor  # noqa: F401  (a TaskManager's handle needs its class)

    try:
        ray.get(resource_manager_handle().describe.remote())
    except ValueError:  # no ResourceManager: a JobManager started without a client
        pass


class JobManagerActor:
    """The JobManager of one job. It may be created before its job is known, as a standby the
    ResourceManager keeps ready: ``start`` then hands it the job, and a submission does not
    wait for a process to start and import Tidal (about half a second)."""

    def __init__(self, job_id: str) -> None:
        configure_logging("INFO")
        self.job_id = job_id
        self.log = structlog.get_logger("tidal.jobmanager").bind(job=job_id)
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.started = False
        self.warm = threading.Thread(target=_warm_up, name="tidal-warm-up", daemon=True)
        self.warm.start()

    def ready(self) -> bool:
        """True once warmed up (see ``_warm_up``)."""
        self.warm.join(timeout=60)
        return True

    def start(self, graph: bytes, config: dict, submitted_at: float) -> None:
        """Run the job ``graph`` (a cloudpickled JobGraph); a JobManager runs one job, once."""
        with self.lock:
            if self.started:
                raise RuntimeError(f"the JobManager {self.job_id} already runs a job")
            self.started = True
        began = time.time()
        self.submitted_at = submitted_at
        self.ended_at: float | None = None
        settings = Configuration(config)
        if not settings.is_set("slotmanager.number-of-slots.max"):
            cpus = int(ray.cluster_resources().get("CPU", 1))
            settings = settings.with_overrides({"slotmanager.number-of-slots.max": max(1, cpus)})
        self.config = settings
        job_graph = cloudpickle.loads(graph)
        self.work_dir = work_directory(settings, self.job_id)
        self.state = JobManagerState(job_graph, settings, job_id=self.job_id)
        self.events = EventLog(
            os.path.join(self.work_dir, "events.log"),
            settings["job-event.store.write-buffer.size"],
        )
        self.blobs = FileSystemBlobStore(os.path.join(self.work_dir, "blobs"))
        code_keys = {v.name: self.blobs.put(serialize_vertex_code(v)).digest for v in job_graph.vertices}
        self.ledger = TaskLedger()
        self.mailbox: queue.Queue = queue.Queue()
        self.executor = CommandExecutor(
            self.job_id,
            self.state,
            self.mailbox.put,
            self.blobs,
            code_keys,
            settings,
            os.path.join(self.work_dir, "shuffle"),
            ray.get_runtime_context().current_actor,
        )
        threading.Thread(target=self._loop, name="tidal-main-loop", daemon=True).start()
        threading.Thread(target=self._flush_events, name="tidal-event-log", daemon=True).start()
        self.mailbox.put(ev.JobStarted())
        self.log.info("job manager ready", job_name=job_graph.name,
                      since_submit_ms=int((time.time() - submitted_at) * 1000),
                      init_ms=int((time.time() - began) * 1000))  # fmt: skip

    # -- the mailbox ------------------------------------------------------------------------

    def report(self, event: bytes) -> None:
        """A TaskManager's report: a msgpack-encoded event."""
        self.mailbox.put(decode(event))

    def report_many(self, events: bytes) -> None:
        """Several reports, msgpack-encoded as one tuple, in the order they happened."""
        for event in decode(events):
            self.mailbox.put(event)

    def cancel(self, reason: str = "cancelled by the user") -> None:
        self.mailbox.put(ev.JobCancelRequested(reason))

    def get_blob(self, key: str) -> bytes:
        return self.blobs.get(BlobKey(key))

    # -- questions ---------------------------------------------------------------------------

    def status(self) -> dict:
        with self.lock:
            if not self.started:
                return {"job_id": self.job_id, "status": STANDBY, "pid": os.getpid()}
            status = job_status(self.state, self.ledger, self.job_id, self.submitted_at, self.ended_at)
        status["pid"] = os.getpid()
        if self.executor.terminal is not None:
            status["status"], status["cause"] = self.executor.terminal
        elif self.state.status.is_terminal:
            status["status"] = "FINISHING"
        return status

    def wait(self, timeout: float | None = None) -> dict:
        self.done.wait(timeout)
        return self.status()

    def snapshot(self) -> tuple:
        with self.lock:
            return self.state.snapshot()

    def event_log(self) -> str:
        self.events.flush()
        return self.events.url

    def exit(self) -> None:
        """Leave now: the job's client has what it needed (or, for a standby, no job came)."""
        if self.started:
            self.mailbox.put(_STOP)
            self.executor.stop()
        ray.actor.exit_actor()

    # -- the main loop --------------------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            batch = self._next_events()
            if batch is None:
                return
            try:
                commands = []
                with self.lock:
                    for event in batch:
                        self.events.append(event)
                        self.ledger.saw_event(event)
                        commands.extend(self.state.handle(event))
                    for command in commands:
                        self.ledger.saw_command(command)
                self.executor.execute_all(commands)
            except Exception as error:  # a bug in the core: fail the job, keep answering
                self.log.error("internal error", error=repr(error), traceback=traceback.format_exc())
                self.executor.terminal = ("FAILED", f"internal error in the JobManager: {error!r}")
                self.executor.stop()
            if self.executor.terminal is not None and not self.done.is_set():
                self._finish()

    def _next_events(self) -> list | None:
        """The next event, and every other one already waiting (up to a bound): applied in one
        go, their commands go out in one round, so deployments to a TaskManager share a call."""
        batch = [self.mailbox.get()]
        while len(batch) < 256:
            try:
                batch.append(self.mailbox.get_nowait())
            except queue.Empty:
                break
        if _STOP in batch:
            return None
        return batch

    def _finish(self) -> None:
        self.ended_at = time.time()
        self.events.flush()
        status, cause = self.executor.terminal
        self.log.info("job done", status=status, cause=cause or None)
        self.done.set()
        resource_manager_handle().prepare_job_manager.remote()
        me = ray.get_runtime_context().current_actor
        linger = threading.Timer(self.config["jobstore.expiration-time"] / 1000, me.exit.remote)
        linger.daemon = True
        linger.start()

    def _flush_events(self) -> None:
        interval = self.config["job-event.store.write-buffer.flush-interval"] / 1000
        while not self.done.wait(interval):
            self.events.flush()
