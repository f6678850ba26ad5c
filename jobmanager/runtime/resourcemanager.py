"""The ResourceManager: TaskManager processes kept warm between jobs and leased one job at a
time, like the TaskManagers of a Flink session cluster; and standby JobManagers for the next jobs.

Starting a TaskManager costs a process, its imports, and for PySpark work a JVM whose first
queries run slowly until its JIT warms up: seconds a short batch job should not pay every time.
TaskManagers are spread over the cluster's nodes (Ray's SPREAD), so a job's shuffle is served
by several machines; the ResourceManager and the JobManagers stay on the submitting node where
they can (they use no CPU), out of the way of a worker node's loss. So a TaskManager a job
gives back stays, idle, for ``resourcemanager.taskmanager-timeout`` and
goes to the next job that asks for one of the same size; idle ones of another size are stopped
when a job needs the CPUs they hold. Requests the cluster cannot serve yet wait, in the order
the jobs asked, and are served the moment a TaskManager comes back
(``jobmanager.runtime.leasing``). A TaskManager leased to a job whose JobManager is gone is
taken back.

When a job ends, it tops up the standby JobManagers the next submissions claim
(``jobmanager.runtime.standby``); and a reaper thread ends what outlived its use
(``jobmanager.runtime.reaper``).

Its loss loses nothing. TaskManagers are detached actors, so they outlive it; Ray restarts it,
and the new one rebuilds its books from the TaskManagers themselves (each says which job it
serves). A job's JobManager may die too: its TaskManagers stay leased to the job for
``execution.batch.job-recovery.previous-worker.recovery.timeout``, for the JobManager that takes
the job over (``leases_of``), and only then go back to the pool. A job whose JobManager is gone
for good is cleaned up by the reaper (its staging and store removed,
``jobmanager.runtime.cleanup``).
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field

import ray
import structlog

from jobmanager.logs import configure_logging
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.model.config import (
    NUMBER_OF_TASK_SLOTS,
    PREVIOUS_WORKER_RECOVERY_TIMEOUT,
    TASKMANAGER_IDLE_TIMEOUT,
    TMP_DIRS,
    Configuration,
)
from jobmanager.runtime import jobrecords
from jobmanager.runtime.actorclass import actor_class
from jobmanager.runtime.details import read_details
from jobmanager.runtime.jobstore import JobStore
from jobmanager.runtime.leasing import Create, Request, Reuse, plan
from jobmanager.runtime.names import (
    NAMESPACE,
    RESOURCE_MANAGER,
    here,
    job_manager_name,
)
from jobmanager.runtime.reaper import Reaper
from jobmanager.runtime.spare import SpareTaskManager
from jobmanager.runtime.standby import StandbyJobManager
from taskmanager.kept_jvm import registry_beside, release_named

__all__ = ["ResourceManager", "resource_manager"]

_log = structlog.get_logger("tidal.resourcemanager")


_TM_PREFIX = "tidal-tm-"
_JM_PREFIX = job_manager_name("")


@dataclass
class _TaskManager:
    handle: object
    shape: tuple
    job: str | None
    since: float
    # how long it stays leased to a job whose JobManager is gone (found after a restart: the default)
    recovery_timeout_s: float = field(default_factory=lambda: _timeouts(Configuration())[0])
    idle_timeout_s: float | None = None  # kept idle this long: its last job's taskmanager-timeout
    scratch: str = ""  # its work directory, removed when it is stopped
    config: Configuration | None = None  # the configuration it was started with


@dataclass
class _Waiting:
    """A lease request waiting for its turn; ``granted`` once served."""

    request: Request
    order: int  # the job's first ticket: jobs are served in the order they first asked
    config: Configuration  # the job's
    since: float = field(default_factory=time.time)
    granted: tuple[str, object] | None = None
    cancelled: bool = False


class ResourceManager(StandbyJobManager, SpareTaskManager, Reaper):
    def __init__(self, idle_timeout_s: float, store_root: str = "", work_dir: str = "") -> None:
        configure_logging("INFO")
        self.idle_timeout_s = idle_timeout_s
        self.store_root = store_root
        self.work_dir = work_dir or os.path.join(tempfile.gettempdir(), "tidal", "taskmanagers")
        # TaskManagers are named tidal-tm-0, -1, ... in every cluster, and two clusters on one
        # machine (a test's and a benchmark's) must not share, nor remove, each other's scratch:
        # it goes under this ResourceManager's actor id, which Ray keeps across its restarts.
        self._cluster_key = ray.get_runtime_context().get_actor_id() or "driver"
        self.task_managers: dict[str, _TaskManager] = {}
        self.returning: dict[str, tuple] = {}  # given back, still leaving their job
        self.created = 0
        self._counter = 0
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # a TaskManager came back, or went
        self._waiting: dict[int, _Waiting] = {}  # lease requests not served yet, by ticket
        self._tickets = itertools.count()
        self._order: dict[str, int] = {}  # job -> its first ticket
        self._ended: set[str] = set()  # jobs released: a late request of theirs gets nothing
        self._total_cpus = ray.cluster_resources().get("CPU", 0)
        self._standbys: list[tuple[str, object]] = []  # (job id, JobManager handle), ready
        self._standby_ready = threading.Condition(self._lock)
        self._standby_starting = 0
        self._spare: tuple[str, object] | None = None  # (TaskManager id, handle)
        self._orphaned_since: dict[str, float] = {}  # job -> when its JobManager was found gone
        if ray.get_runtime_context().was_current_actor_reconstructed:
            self._rebuild()
        threading.Thread(target=self._reap, name="tidal-rm-reaper", daemon=True).start()

    def _rebuild(self) -> None:
        """After a restart: learn the TaskManagers and the standby JobManagers back from Ray's
        named actors, and each TaskManager's lease from the TaskManager itself."""
        names = [
            n
            for n in ray.util.list_named_actors(all_namespaces=True)
            if isinstance(n, dict) and n.get("namespace") == NAMESPACE
        ]
        asked = {}
        for entry in names:
            name = entry["name"]
            try:
                handle = ray.get_actor(name, namespace=NAMESPACE)
            except ValueError:
                continue
            if name.startswith(_TM_PREFIX):
                asked[name] = (handle, handle.describe.remote())
            elif name.startswith(_JM_PREFIX):
                asked[name] = (handle, handle.status.remote())
        for name, (handle, answer) in asked.items():
            try:
                info = ray.get(answer, timeout=10)
            except Exception as error:
                _log.warning(
                    "actor did not answer a restarted resource manager",
                    actor=name,
                    error=repr(error),
                )
                continue
            if name.startswith(_TM_PREFIX) and info.get("spare"):
                self._spare = (name, handle)
                self._counter = max(self._counter, int(name[len(_TM_PREFIX) :]) + 1)
            elif name.startswith(_TM_PREFIX):
                self.task_managers[name] = _TaskManager(
                    handle, tuple(info["shape"]), info["job"], time.time(), scratch=info["work_dir"]
                )
                self._counter = max(self._counter, int(name[len(_TM_PREFIX) :]) + 1)
            elif read_details(info).status is JobStatus.STANDBY:
                self._standbys.append((name[len(_JM_PREFIX) :], handle))
        _log.info(
            "resource manager restarted",
            task_managers=len(self.task_managers),
            leased=sum(1 for tm in self.task_managers.values() if tm.job),
            standbys=len(self._standbys),
        )

    # -- TaskManagers ---------------------------------------------------------------------------

    def prepare_task_manager(self, config: bytes) -> str | None:
        """Start an idle TaskManager of the shape ``config`` gives (its slots no more than the
        cluster's free CPUs), its Spark JVM starting with it, for the first job to lease warm (a job asks for TaskManagers of this shape unless it needs fewer slots);
        unless an idle one of that memory is there already or the CPUs are held. Its id, or
        None."""
        from taskmanager.actor import shape_of

        settings = Configuration.from_bytes(config)
        self._total_cpus = ray.cluster_resources().get("CPU", 0)
        with self._lock:
            held = sum(tm.shape[0] for tm in self.task_managers.values())
            slots = min(settings[NUMBER_OF_TASK_SLOTS.key], int(self._total_cpus - held))
            shape = shape_of(max(slots, 1), settings)
            if slots < 1 or any(
                tm.job is None and tm.shape[1:] == shape[1:] for tm in self.task_managers.values()
            ):
                return None
            tm_id, _ = self._start_task_manager(
                _Waiting(Request(-1, "", shape), -1, settings), start_spark=True
            )
            _log.info("task manager prepared", task_manager=tm_id, slots=slots)
            self._serve()
            return tm_id

    def lease(self, job_id: str, slots: int, config: bytes) -> tuple[str, object] | None:
        """A TaskManager of ``slots`` slots for ``job_id`` (``config``: the job's, as
        ``Configuration.to_bytes``), once its turn comes (see ``jobmanager.runtime.leasing``);
        None if the job ended while it waited."""
        from taskmanager.actor import shape_of

        settings = Configuration.from_bytes(config)
        shape = shape_of(slots, settings)  # a job needing another one does not get it reused
        self._total_cpus = ray.cluster_resources().get("CPU", 0)
        with self._lock:
            if job_id in self._ended:
                return None
            ticket = next(self._tickets)
            waiting = _Waiting(
                Request(ticket, job_id, shape), self._order.setdefault(job_id, ticket), settings
            )
            self._waiting[ticket] = waiting
            self._serve()
            while waiting.granted is None and not waiting.cancelled:
                self._changed.wait(1.0)
                self._serve()
            return waiting.granted

    def _serve(self) -> None:
        """Grant what can be granted now, in order (under the lock)."""
        if not self._waiting:
            return
        queue = sorted(self._waiting.values(), key=lambda w: (w.order, w.request.ticket))
        idle = sorted(
            ((t, tm) for t, tm in self.task_managers.items() if tm.job is None),
            key=lambda item: -item[1].since,
        )
        held = sum(tm.shape[0] for tm in self.task_managers.values())
        grants = plan(
            [w.request for w in queue],
            [(t, tm.shape) for t, tm in idle],
            list(self.returning.values()),
            self._total_cpus - held,
            self._total_cpus,
        )
        for grant in grants:
            waiting = self._waiting.pop(grant.ticket)
            job_id, now = waiting.request.job_id, time.time()
            if isinstance(grant, Reuse):
                tm_id, tm = grant.task_manager, self.task_managers[grant.task_manager]
                tm.job, tm.since = job_id, now
                tm.recovery_timeout_s, tm.idle_timeout_s = _timeouts(waiting.config)
            else:
                for stopped in grant.stop:
                    self._stop(stopped, self.task_managers.pop(stopped))
                tm_id, tm = self._start_task_manager(waiting)
            waiting.granted = (tm_id, tm.handle)
            _log.info(
                "task manager leased",
                task_manager=tm_id,
                job=job_id,
                new=isinstance(grant, Create),
                stopped=getattr(grant, "stop", ()),
                waited_ms=int((now - waiting.since) * 1000),
            )
        if grants:
            self._changed.notify_all()

    def _start_task_manager(
        self, waiting: _Waiting, start_spark: bool = False, adopt: str = ""
    ) -> tuple[str, _TaskManager]:
        slots = waiting.request.shape[0]
        tm_id = self._next_task_manager_id()
        scratch = self._scratch_of(tm_id, waiting.config)
        handle = self._task_manager_options(tm_id, cpus=slots, threads=slots).remote(
            tm_id, slots, waiting.config.to_bytes(), scratch, start_spark, adopt
        )
        return tm_id, self._register(tm_id, handle, waiting.request, waiting.config, scratch)

    def _next_task_manager_id(self) -> str:
        tm_id = f"{_TM_PREFIX}{self._counter}"
        self._counter += 1
        return tm_id

    def _scratch_of(self, tm_id: str, config: Configuration) -> str:
        return os.path.join(self._scratch(config), self._cluster_key, tm_id)

    @staticmethod
    def _task_manager_options(tm_id: str, cpus: int, threads: int):
        """A TaskManager actor's class, named ``tm_id``, holding ``cpus`` of Ray's CPUs, with
        threads for ``threads`` slots and the calls served beside them."""
        from taskmanager.actor import TaskManagerActor

        return actor_class(TaskManagerActor).options(
            name=tm_id,
            namespace=NAMESPACE,
            num_cpus=cpus,
            lifetime="detached",
            max_concurrency=threads + 8,
            max_restarts=0,
            scheduling_strategy="SPREAD",
        )

    def _register(
        self, tm_id: str, handle, request: Request, config: Configuration, scratch: str
    ) -> _TaskManager:
        recovery_timeout_s, idle_timeout_s = _timeouts(config)
        tm = _TaskManager(
            handle,
            request.shape,
            request.job_id or None,
            time.time(),
            recovery_timeout_s,
            idle_timeout_s,
            scratch,
            config,
        )
        self.task_managers[tm_id] = tm
        self.created += 1
        return tm

    def give_back(self, job_id: str, tm_id: str) -> None:
        """The job is done with it: the TaskManager leaves the job and waits, idle."""
        with self._lock:
            tm = self.task_managers.get(tm_id)
            if tm is None or tm.job != job_id:
                return
            self.returning[tm_id] = tm.shape
        try:
            log = ray.get(tm.handle.detach.remote(job_id), timeout=30)
        except Exception as error:  # it died or hangs: do not lend it again
            _log.warning("task manager dropped", task_manager=tm_id, error=repr(error))
            with self._lock:
                self.returning.pop(tm_id, None)
            self.forget(tm_id)
            return
        _keep_log(job_id, tm_id, log)
        with self._lock:
            self.returning.pop(tm_id, None)
            if tm.job == job_id:  # not lent again meanwhile (the reaper and the job may race)
                tm.job, tm.since = None, time.time()
            self._serve()
            self._changed.notify_all()

    def leases_of(self, job_id: str) -> list[tuple[str, object]]:
        """The TaskManagers leased to ``job_id``: what a JobManager taking the job over asks."""
        with self._lock:
            self._orphaned_since.pop(job_id, None)
            return [(t, tm.handle) for t, tm in self.task_managers.items() if tm.job == job_id]

    def release_job(self, job_id: str) -> None:
        """The job is over: every TaskManager leased to it comes back, including any its
        JobManager never heard of (a lease whose answer died with an earlier JobManager), and
        its requests still waiting are dropped."""
        with self._lock:
            self._ended.add(job_id)
            self._order.pop(job_id, None)
            self._cancel_waiting(lambda job: job == job_id)
            leased = [t for t, tm in self.task_managers.items() if tm.job == job_id]
        for tm_id in leased:
            self.give_back(job_id, tm_id)

    def _cancel_waiting(self, which) -> None:
        for ticket, waiting in list(self._waiting.items()):
            if which(waiting.request.job_id):
                waiting.cancelled = True
                del self._waiting[ticket]
        self._changed.notify_all()

    def forget(self, tm_id: str) -> None:
        """A JobManager lost this TaskManager. One of its shape starts at once, idle for the
        job to lease as it reschedules what the lost one ran (or for anyone: the job may need
        it no more). It adopts the lost one's Spark JVM, warm, if it starts on the same node
        (``taskmanager.kept_jvm``), and starts its own at once otherwise."""
        with self._lock:
            tm = self.task_managers.pop(tm_id, None)
            if tm is not None and tm.job is not None and tm.job not in self._ended:
                self._replace(tm_id, tm)
            self._serve()
        if tm is not None:
            self._stop(tm_id, tm, lost=True)

    def _replace(self, lost_id: str, lost: _TaskManager) -> None:
        config = lost.config or Configuration()
        request = Request(-1, "", lost.shape)
        promoted = self._promoted_spare(lost_id, lost.shape[0], config)
        if promoted is not None:
            replacement_id, handle, scratch = promoted
            self._register(replacement_id, handle, request, config, scratch)
        else:
            replacement_id, _ = self._start_task_manager(
                _Waiting(request, -1, config), start_spark=True, adopt=lost_id
            )
        _log.info("task manager replaced", task_manager=replacement_id, job=lost.job)

    def _stop(self, tm_id: str, tm: _TaskManager, lost: bool = False) -> None:
        """Stop a TaskManager's process and remove its scratch (its Spark's local folders).
        A retired one's Spark JVM stops with it; a lost one's waits for its replacement."""
        ray.kill(tm.handle, no_restart=True)
        if tm.scratch:
            shutil.rmtree(tm.scratch, ignore_errors=True)
            if not lost:
                release_named(registry_beside(tm.scratch), tm_id)

    def describe(self) -> dict:
        with self._lock:
            return {
                "idle": sorted(t for t, tm in self.task_managers.items() if tm.job is None),
                "leased": {t: tm.job for t, tm in self.task_managers.items() if tm.job},
                "created": self.created,
                "standby": self._standbys[0][0] if self._standbys else None,  # claimed next
                "standbys": len(self._standbys),
                "spare": self._spare[0] if self._spare else None,
                "waiting": [
                    w.request.job_id
                    for w in sorted(
                        self._waiting.values(), key=lambda w: (w.order, w.request.ticket)
                    )
                ],
                "pid": os.getpid(),
            }

    def _scratch(self, config: Configuration) -> str:
        """Where a TaskManager started for a job keeps its scratch (Spark's temporary files):
        under the job's ``io.tmp.dirs`` when it sets one."""
        base = config[TMP_DIRS.key]
        return os.path.join(base, "tidal", "taskmanagers") if base else self.work_dir


def _timeouts(config: Configuration) -> tuple[float, float]:
    """A TaskManager leased to a job: how long it stays leased to the job once its JobManager
    is gone, and how long it is kept idle after it (the job's taskmanager-timeout, set or not),
    in seconds."""
    return (
        config[PREVIOUS_WORKER_RECOVERY_TIMEOUT.key] / 1000,
        config[TASKMANAGER_IDLE_TIMEOUT.key] / 1000,
    )


def _keep_log(job_id: str, tm_id: str, log: bytes) -> None:
    """Put a TaskManager's part of its log for the job into the job's store (``tidal logs``)."""
    record = jobrecords.job_record(job_id)
    if not log or record is None or record.cleaned:
        return
    try:
        store = JobStore(record.store_root, job_id)
        if store.exists():
            store.write_log(tm_id, log)
    except Exception as error:
        _log.warning("task manager log not kept", job=job_id, task_manager=tm_id, error=repr(error))


def resource_manager(idle_timeout_s: float, store_root: str = ""):
    """The cluster's ResourceManager, started by the first client that submits a job. Ray
    restarts it if its process dies (see the module docstring); a call made meanwhile waits
    for the new one rather than failing (a lease asked twice that way is given back with the
    job's others when it ends)."""
    return (
        actor_class(ResourceManager)
        .options(
            name=RESOURCE_MANAGER,
            namespace=NAMESPACE,
            lifetime="detached",
            get_if_exists=True,
            num_cpus=0,
            max_concurrency=256,
            max_restarts=-1,
            max_task_retries=-1,
            scheduling_strategy=here(),
        )
        .remote(idle_timeout_s, store_root)
    )
