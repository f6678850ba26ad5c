"""The JobManager: one detached, named Ray actor per job, holding the scheduling core.

Its main loop runs on one thread (``jobmanager.runtime.mainloop``): take a message, append its
event to the job's event log, apply it (``JobManagerState.handle``), write the log, hand the
commands to the executor. So no command leaves before the events that caused it are in the
job's store. Everything else that
reaches the actor (TaskManagers reporting, clients asking for status, timers firing, Ray
callbacks) only puts a message in the mailbox or reads a status built under the same lock, so
the core never sees two threads.

When its job has ended, it stores the job's end, archives it and leaves
(``jobmanager.runtime.ending``): a finished job holds no process. Clients read
the status from the store from then on, and the ResourceManager removes the store and the
job's work directory when ``jobstore.expiration-time`` has passed.

When its process dies, Ray restarts it (``max_restarts``) and it takes its job over from the
job's store (``jobmanager.runtime.recovery``): replay, reconcile with the TaskManagers, carry
on. Calls in flight when it died are sent again by Ray (``max_task_retries``), so clients keep
their handle and TaskManagers' reports arrive, after the recovery, to the new process.
"""

from __future__ import annotations

import os
import queue
import tempfile
import threading
import time
import traceback
from array import array
from dataclasses import replace

import cloudpickle
import ray
import structlog

from blob import BlobKey
from jobmanager.core.replay import new_state
from jobmanager.core.view import CoreView
from jobmanager.errors import TidalError
from jobmanager.logs import configure_logging, log_since
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.model.chaining import chained_graph
from jobmanager.model.config import (
    EVENT_WRITE_BUFFER_SIZE,
    JOB_RECOVERY_ENABLED,
    PREVIOUS_WORKER_RECOVERY_TIMEOUT,
    TMP_DIRS,
    Configuration,
)
from jobmanager.model.join_chains import runnable_vertices
from jobmanager.model.operators import ParquetSink, ResultSink, serialize_vertex_code
from jobmanager.runtime import jobrecords
from jobmanager.runtime.actorclass import actor_class
from jobmanager.runtime.admission import admit
from jobmanager.runtime.details import JobDetails
from jobmanager.runtime.earlylease import EarlyLease
from jobmanager.runtime.ending import JobEnding, release_job
from jobmanager.runtime.executor import CommandExecutor, now_ms
from jobmanager.runtime.jobstore import JobStore
from jobmanager.runtime.mainloop import STOP, MainLoop
from jobmanager.runtime.metrics import JobMetrics
from jobmanager.runtime.names import (
    NAMESPACE,
    here,
    job_manager_name,
    resource_manager_handle,
)
from jobmanager.runtime.recovery import ask_leases, reconnect, replay_store
from jobmanager.runtime.status import (
    TaskLedger,
    empty_status,
    job_status,
    process_figures,
)

__all__ = ["JobManagerActor", "create_job_manager", "work_directory"]

MAX_RECOVERIES_IN_A_ROW = 5  # recoveries that died before finishing, before the job fails


def work_directory(config: Configuration, job_id: str) -> str:
    base = config[TMP_DIRS.key] or tempfile.gettempdir()
    return os.path.join(base, "tidal", job_id)


def create_job_manager(job_id: str, store_root: str, recovery: bool = True):
    """A new JobManager actor for ``job_id``, detached: the job outlives whoever submitted it.
    With ``recovery``, Ray restarts it when its process dies, and it takes the job over from
    the job's store under ``store_root``."""
    retries = -1 if recovery else 0
    return (
        actor_class(JobManagerActor)
        .options(
            name=job_manager_name(job_id),
            namespace=NAMESPACE,
            lifetime="detached",
            num_cpus=0,
            max_concurrency=64,
            max_restarts=retries,
            max_task_retries=retries,
            scheduling_strategy=here(),
        )
        .remote(job_id, store_root)
    )


def _process_age_ms() -> int | None:
    """How long ago this process started: in a take-over's log, what Ray's restart and the
    imports took before the take-over could begin (None without /proc)."""
    try:
        with open("/proc/self/stat") as stat:
            ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as uptime:
            up = float(uptime.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return int((up - ticks / os.sysconf("SC_CLK_TCK")) * 1000)


def _warm_up() -> None:
    """Before the job comes (or while it starts): load what inferring a source's parallelism
    and unpickling PySpark functions need, and open the connection to the ResourceManager.
    Also what Ray's shutdown imports (its compiled graphs, tens of ms of CPU), so the process
    leaving after its job does not pay it while the next job runs."""
    import pyarrow.parquet  # noqa: F401
    import pyspark.sql.functions  # noqa: F401
    import ray.dag.compiled_dag_node  # noqa: F401

    import jobmanager.model.sources  # noqa: F401
    import taskmanager.actor  # noqa: F401  (a TaskManager's handle needs its class)

    try:
        ray.get(resource_manager_handle().describe.remote())
    except ValueError:  # no ResourceManager: a JobManager started without a client
        pass


class JobManagerActor(MainLoop, JobEnding):
    """The JobManager of one job. It may be created before its job is known, as a standby the
    ResourceManager keeps ready: ``start`` then hands it the job, and a submission does not
    wait for a process to start and import Tidal (about half a second)."""

    def __init__(self, job_id: str, store_root: str) -> None:
        configure_logging("INFO")
        self.job_id = job_id
        self.store_root = store_root
        self.log = structlog.get_logger("tidal.jobmanager").bind(job=job_id)
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.started = False
        self.recovering = False
        self.submitted: ev.JobSubmitted | None = None
        self.known = threading.Event()  # set once ``submitted`` is
        self.state = None
        self.events = None
        self.executor: CommandExecutor | None = None
        self.ledger = TaskLedger()
        self.unrecoverable: tuple[JobStatus, str] | None = None
        self.ended_at: float | None = None
        self.concluding = False
        self.loop_seconds = array("d")  # how long each batch of the main loop took
        self.mailbox: queue.Queue = queue.Queue()
        if (
            ray.get_runtime_context().was_current_actor_reconstructed
            and jobrecords.job_record(job_id) is not None
        ):  # it had taken a job: take it over
            self.started = self.recovering = True
            self.warm = threading.Thread(target=self._recover, name="tidal-recovery", daemon=True)
        else:
            self.warm = threading.Thread(target=_warm_up, name="tidal-warm-up", daemon=True)
        self.warm.start()

    def ready(self) -> bool:
        """True once warmed up (see ``_warm_up``), or, taking a job over, once that is done. A
        JobManager taking its job over does not warm up: its job's sources were inferred when it
        was submitted, the take-over imports what it needs as it goes and asks the
        ResourceManager first thing, and a thread importing beside it would only share the GIL
        with it."""
        self.warm.join(timeout=60)
        return True

    # -- taking a job -------------------------------------------------------------------------

    def start(self, graph: bytes, config: dict, submitted_at: float) -> None:
        """Run the job ``graph`` (a cloudpickled JobGraph); a JobManager runs one job, once.
        The same submission again (Ray resending the call to a restarted JobManager) is not a
        second job."""
        with self.lock:
            already, self.started = self.started, True
        if already:
            if self.known.wait(60) and self.submitted.submitted_at == submitted_at:
                return
            raise RuntimeError(f"the JobManager {self.job_id} already runs a job")
        began = time.time()
        settings = Configuration(config)
        cluster_cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        early = EarlyLease.ask(self.job_id, settings, cluster_cpus)
        try:
            job_graph, store, blobs, submitted, events = self._admit(
                graph, settings, cluster_cpus, submitted_at
            )
        except BaseException:
            release_job(self.job_id)  # the early lease: the job will not run
            raise
        self._take(
            store, submitted, new_state(job_graph, submitted, self.job_id), events, blobs, early
        )
        self.mailbox.put(ev.JobStarted())
        self._start_loop()
        self.log.info(
            "job manager ready",
            job_name=job_graph.name,
            since_submit_ms=int((time.time() - submitted_at) * 1000),
            init_ms=int((time.time() - began) * 1000),
        )

    def _admit(self, graph: bytes, settings: Configuration, cluster_cpus: int, submitted_at: float):
        """Take the job in: its store, its chains and its sources asked (``admit``), its code
        stored, ``JobSubmitted`` written to its log. Returns the graph, the store, its blobs,
        that event and the log."""
        job_graph = cloudpickle.loads(graph)
        store = JobStore(self.store_root, self.job_id)
        store.create()
        blobs = store.blobs()
        chains, inferred = admit(job_graph, settings, cluster_cpus, blobs, self.job_id)
        code_keys = tuple(
            (v.name, blobs.put(serialize_vertex_code(v)).digest)
            for v in runnable_vertices(chained_graph(job_graph, chains), settings)
        )
        submitted = ev.JobSubmitted(
            job_graph.name,
            blobs.put(graph).digest,
            tuple(settings.to_dict().items()),
            submitted_at,
            cluster_cpus,
            code_keys,
            tuple(
                v.operator.path for v in job_graph.vertices if isinstance(v.operator, ParquetSink)
            ),
            chains,
            inferred,
            tuple(
                v.operator.path for v in job_graph.vertices if isinstance(v.operator, ResultSink)
            ),
        )
        events = store.open_log(settings[EVENT_WRITE_BUFFER_SIZE.key])
        events.append(submitted)
        events.flush()
        jobrecords.record_job(
            self.job_id,
            store.url,
            settings[JOB_RECOVERY_ENABLED.key],
            work_directory(settings, self.job_id),
        )
        return job_graph, store, blobs, submitted, events

    def _take(
        self,
        store: JobStore,
        submitted,
        state,
        events,
        blobs,
        early_lease: EarlyLease | None = None,
    ) -> None:
        """Hold the job: its store, log, state and an executor for its commands."""
        self.store, self.events, self.blobs = store, events, blobs
        self.config = Configuration(dict(submitted.config))
        self.work_dir = work_directory(self.config, self.job_id)
        self.executor = CommandExecutor(
            self.job_id,
            CoreView(state),
            self.mailbox.put,
            blobs,
            dict(submitted.code_keys),
            self.config,
            os.path.join(self.work_dir, "shuffle"),
            ray.get_runtime_context().current_actor,
            early_lease,
        )
        self.snapshot_at = time.monotonic()
        self.snapshot_events = state.events_applied
        self.metrics = JobMetrics(self.job_id, submitted.name, state)
        with self.lock:
            self.submitted, self.state = submitted, state
        self.known.set()

    # -- taking a job over ----------------------------------------------------------------------

    def _recover(self) -> None:
        began = time.time()
        leases = ask_leases(self.job_id)  # on its way while the store is read and replayed
        self.log.info("taking the job over", process_age_ms=_process_age_ms())
        store = JobStore(self.store_root, self.job_id)
        try:
            attempts = store.recovery_attempt() if store.exists() else 1
            if attempts > MAX_RECOVERIES_IN_A_ROW:
                raise TidalError(
                    f"the JobManager died {attempts - 1} times in a row while "
                    f"taking the job over from {store.url}"
                )
            replayed = replay_store(store, self.job_id)
            with self.lock:
                self.submitted, self.ledger = replayed.submitted, replayed.ledger
            settings = Configuration(dict(replayed.submitted.config))
            events = store.open_log(settings[EVENT_WRITE_BUFFER_SIZE.key])
            self._take(store, replayed.submitted, replayed.state, events, store.blobs())
            replayed_s = time.time() - began
            reports, handles = reconnect(
                self.job_id,
                replayed.state,
                ray.get_runtime_context().current_actor,
                os.path.join(self.work_dir, "shuffle"),
                settings[PREVIOUS_WORKER_RECOVERY_TIMEOUT.key] / 1000,
                leases,
            )
            homes = {r.task_manager: (r.node, r.shuffle_root) for r in reports}
            for tm_id, handle in handles.items():
                self.executor.adopt(tm_id, handle, *homes[tm_id])
            reconciled_s = time.time() - began
            self._apply([ev.JobManagerRecovered(now_ms(), tuple(reports))])
            self.events.flush()  # the take-over is stored even when it asked for nothing
            if replayed.state.status is JobStatus.CREATED:
                self.mailbox.put(ev.JobStarted())
            store.recovered()
            if replayed.state.ended is not None:  # it had ended: only answering was left to do
                self._finish()
        except Exception as error:
            cause = (
                str(error) if isinstance(error, TidalError) else f"{type(error).__name__}: {error}"
            )
            self.log.error("recovery failed", cause=cause, traceback=traceback.format_exc())
            self._give_up(f"the job could not be recovered: {cause}")
            return
        self.recovering = False
        self._start_loop()
        self.log.info(
            "job taken over",
            events=replayed.events,
            snapshot=replayed.from_snapshot,
            task_managers=len(reports),
            replay_ms=int(replayed_s * 1000),
            reconcile_ms=int((reconciled_s - replayed_s) * 1000),
            recovery_ms=int((time.time() - began) * 1000),
        )

    def _give_up(self, cause: str) -> None:
        """The job cannot go on: fail it, leave nothing behind but what it published."""
        with self.lock:
            self.unrecoverable = (JobStatus.FAILED, cause)
            self.recovering = False
            self.ended_at = time.time()
        self._abort_sinks()
        if self.executor is not None:
            self.executor.stop()
        else:
            release_job(self.job_id)
        self._store_end(tell=None)

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
        self.known.wait(60)
        return self.blobs.get(BlobKey(key))

    # -- questions ---------------------------------------------------------------------------

    def status(self) -> bytes:
        """The job's ``JobDetails``, msgpack-encoded (``jobmanager.runtime.details``)."""
        return self._details().encode()

    def wait(self, timeout: float | None = None) -> bytes:
        self.done.wait(timeout)
        return self.status()

    def _details(self, final: bool = False) -> JobDetails:
        """The core's view of the job, with what only the shell knows over it: a JobManager
        without a job (STANDBY), one taking its job over (RECONCILING), a job it gave up, and
        FINISHING for an end reached but not yet stored, archived and recorded: a client that
        sees the end can rely on the job's record saying it (``release``, ``tidal list``).
        ``final``: the end itself, for storing it."""
        with self.lock:
            if not self.started or self.state is None:
                waiting = (
                    JobStatus.STANDBY
                    if not self.started
                    else JobStatus.RECONCILING
                    if self.recovering
                    else JobStatus.CREATED
                )
                details = empty_status(self.job_id, self.submitted, waiting)
            else:
                details = job_status(
                    self.state, self.ledger, self.job_id, self.submitted.submitted_at, self.ended_at
                )
            ended = None if self.state is None else self.state.ended
        status, cause = details.status, details.cause
        if self.unrecoverable is not None:
            status, cause = self.unrecoverable
        elif self.recovering:
            status = JobStatus.RECONCILING
        elif ended is not None:
            status, cause = ended
        if status.is_terminal and not (final or self.done.is_set()):
            status = JobStatus.FINISHING
        return replace(
            details,
            status=status,
            cause=cause or "",
            pid=os.getpid(),
            jobmanager=process_figures(self.loop_seconds[:]),
        )  # a copy: the loop appends

    def describe(self) -> tuple:
        with self.lock:
            return self.state.describe()

    def event_log(self) -> str:
        self.events.flush()
        return self.events.url

    def logs(self) -> dict[str, bytes]:
        """The job's logs so far: this process's, and each of its TaskManagers' part."""
        logs = {"jobmanager": log_since()}
        if self.executor is not None:
            logs.update(self.executor.task_manager_logs())
        return logs

    @ray.method(max_task_retries=0)  # leaving on purpose: there is nothing to send again
    def leave(self) -> None:
        """Leave, the job's end stored (see the module docstring)."""
        ray.actor.exit_actor()

    @ray.method(max_task_retries=0)  # leaving on purpose: there is nothing to send again
    def exit(self) -> None:
        """Leave now: the job's client has what it needed (or, for a standby, no job came).
        The job is cleaned up: its store removed, and, if it had not ended, its staging."""
        if self.started:
            self.mailbox.put(STOP)
            if self.executor is not None:
                self.executor.stop()
            self._clean_up()
        ray.actor.exit_actor()
