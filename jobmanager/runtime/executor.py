"""Carrying out the scheduling core's commands on Ray, and turning every outcome into an event.

Nothing here decides anything, and nothing raises back into the main loop: a TaskManager that
cannot be started, a deployment that fails, an actor that dies, a heartbeat that goes quiet, a
ResourceManager that is restarting all come back through ``enqueue`` as events. Ray calls are
fire-and-forget with a callback on the returned future, and slow work (source inference, sink
commits) runs on worker threads, so the main loop never waits on the cluster or a file system.

Each command type has one handler, in ``HANDLERS``; what a handler needs beyond the command it
reads from the core's read-only view (``jobmanager.core.view``), never from the state.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import ray
import structlog

from blob import BlobStore
from jobmanager.core import commands as cmd
from jobmanager.core.view import CoreView
from jobmanager.messages import events as ev
from jobmanager.messages.codec import encode
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.model.chaining import ChainedOperator
from jobmanager.model.config import (
    AVG_DATA_VOLUME_PER_TASK,
    BLOB_OFFLOAD_MINSIZE,
    HEARTBEAT_INTERVAL,
    HEARTBEAT_TIMEOUT,
    SLOT_REQUEST_TIMEOUT,
    Configuration,
)
from jobmanager.model.inference import infer_vertex_parallelism
from jobmanager.model.operators import ParquetSink
from jobmanager.runtime import sinks
from jobmanager.runtime.admission import split_keeper
from jobmanager.runtime.departed import remove_on_node, survey_on_node
from jobmanager.runtime.descriptors import ShuffleDescriptorCache
from jobmanager.runtime.earlylease import EarlyLease
from jobmanager.runtime.names import resource_manager_handle
from shuffle.paths import partition_path

__all__ = ["HANDLERS", "CommandExecutor", "now_ms"]

_log = structlog.get_logger("tidal.executor")


_SURVEY_TIMEOUT_S = 5.0  # a node that takes longer to list a directory counts as gone
_OUTLIVE_S = 60.0  # how long one ``outlive`` call waits before it is asked again


def now_ms() -> int:
    return int(time.time() * 1000)


class CommandExecutor:
    def __init__(
        self,
        job_id: str,
        view: CoreView,
        enqueue: Callable[[object], None],
        blobs: BlobStore,
        code_keys: dict[str, str],
        config: Configuration,
        shuffle_root: str,
        job_manager,
        early_lease: EarlyLease | None = None,
    ) -> None:
        self.job_id = job_id
        self.view = view
        self.enqueue = enqueue
        self.config = config
        self.shuffle_root = shuffle_root
        self.job_manager = job_manager
        self.log = _log.bind(job=job_id)
        self.blobs = blobs
        self.cache = ShuffleDescriptorCache(blobs, config[BLOB_OFFLOAD_MINSIZE.key])
        self.describe = view.descriptors(
            job_id,
            self.cache,
            code_keys,
            config[AVG_DATA_VOLUME_PER_TASK.key],
        )
        self._staged: dict[str, list[cmd.DeployTask]] = {}
        self._early_lease = early_lease
        self.task_managers: dict[str, object] = {}
        self.registered: set[str] = set()
        self._homes: dict[str, tuple[str, str]] = {}  # TaskManager: its node, shuffle root
        self._lock = threading.Lock()
        self._counter = 0
        self._work = ThreadPoolExecutor(4, thread_name_prefix="tidal-jm-work")
        self._stopped = threading.Event()
        self._heartbeat = threading.Thread(target=self._watch, name="tidal-heartbeat", daemon=True)
        self._heartbeat.start()

    # -- commands ---------------------------------------------------------------------------

    def execute_all(self, commands) -> None:
        """Carry out commands in order; deployments to one TaskManager travel in one call,
        after the other commands."""
        for command in commands:
            handler = HANDLERS.get(type(command))
            if handler is None:
                raise TypeError(f"no way to carry out {command!r}")
            handler(self, command)
        staged, self._staged = self._staged, {}
        for task_manager, batch in staged.items():
            self._deploy(task_manager, batch)

    def _request_task_managers(self, command: cmd.RequestTaskManagers) -> None:
        try:
            rm = resource_manager_handle()
        except ValueError:
            for _ in range(command.count):
                self.enqueue(
                    ev.TaskManagerRequestFailed(
                        command.slots_each, "the cluster has no ResourceManager", now_ms()
                    )
                )
            return
        for _ in range(command.count):
            lease = self._take_early_lease(command.slots_each)
            if lease is None:
                lease = rm.lease.remote(self.job_id, command.slots_each, self.config.to_bytes())
            self._when_leased(lease, command.slots_each)

    def _take_early_lease(self, slots: int):
        """The lease asked for before the job was admitted, if of ``slots`` slots; once."""
        early, self._early_lease = self._early_lease, None
        return early.take(self.job_id, slots) if early is not None else None

    def _when_leased(self, lease, slots: int) -> None:
        """Lease a TaskManager, attach it to this job, then register it; or say it failed."""
        attached = threading.Event()

        def leased(future) -> None:
            try:
                granted = future.result()
            except Exception as error:
                self.enqueue(
                    ev.TaskManagerRequestFailed(slots, f"no TaskManager: {error}", now_ms())
                )
                return
            if granted is None:  # the job ended while the request waited
                return
            tm_id, handle = granted
            with self._lock:
                self.task_managers[tm_id] = handle
            root = os.path.join(self.shuffle_root, tm_id)
            handle.attach.remote(self.job_id, self.job_manager, root).future().add_done_callback(
                lambda f: started(tm_id, f)
            )
            timer = threading.Timer(self.config[SLOT_REQUEST_TIMEOUT.key] / 1000, give_up, [tm_id])
            timer.daemon = True
            timer.start()

        def started(tm_id: str, future) -> None:
            try:
                info = future.result()
            except Exception as error:  # the process could not start, or died
                self._forget(tm_id, lost=True)
                self.enqueue(ev.TaskManagerRequestFailed(slots, f"{tm_id}: {error}", now_ms()))
                return
            attached.set()
            with self._lock:
                self.registered.add(tm_id)
                self._homes[tm_id] = (info["node"], info["shuffle_root"])
                handle = self.task_managers.get(tm_id)
            if handle is not None:
                self._outlive(tm_id, handle)
            self.log.info("task manager attached", task_manager=tm_id)
            self.enqueue(ev.TaskManagerRegistered(tm_id, slots, info["node"], info["shuffle_root"]))

        def give_up(tm_id: str) -> None:
            if not attached.is_set():
                self._forget(tm_id, lost=True)
                self.enqueue(
                    ev.TaskManagerRequestFailed(
                        slots, f"{tm_id} did not start within slot.request.timeout", now_ms()
                    )
                )

        lease.future().add_done_callback(leased)

    def _stage_deployment(self, command: cmd.DeployTask) -> None:
        self._staged.setdefault(command.task_manager, []).append(command)

    def _deploy(self, task_manager: str, commands: list[cmd.DeployTask]) -> None:
        tdds = [encode(self.describe(c)) for c in commands]
        handle = self.task_managers.get(task_manager)

        def failed(error: str) -> None:
            for c in commands:
                self.enqueue(
                    ev.TaskFailed(
                        c.vertex,
                        c.subtask,
                        c.attempt,
                        f"deployment to {task_manager} failed: {error}",
                        now_ms(),
                    )
                )

        if handle is None:
            failed("the TaskManager is gone")
            return
        self._on_failure(handle.deploy_many.remote(tdds), failed)

    def _cancel_task(self, command: cmd.CancelTask) -> None:
        handle = self.task_managers.get(command.task_manager)
        gone = ev.TaskCanceled(command.vertex, command.subtask, command.attempt)
        if handle is None:
            self.enqueue(gone)
            return
        ref = handle.cancel.remote(command.vertex, command.subtask, command.attempt)
        self._on_failure(ref, lambda error: self.enqueue(gone))

    def _release_partitions(self, command: cmd.ReleasePartitions) -> None:
        handle = self.task_managers.get(command.task_manager)
        if handle is not None:
            handle.release.remote(encode((command.partitions, command.attempts)))
        elif (home := self.view.departed().get(command.task_manager)) is not None:
            node, root = home
            paths = [
                partition_path(root, p, a) for p, a in zip(command.partitions, command.attempts)
            ]
            remove_on_node(node, paths)
        dropped = self.cache.drop(self.view.groups_fed_by(command.partitions))
        if dropped:
            for other in list(self.task_managers.values()):
                other.drop_blobs.remote(dropped)

    def _start_timer(self, command: cmd.StartTimer) -> None:
        timer = threading.Timer(
            command.delay_ms / 1000, lambda: self.enqueue(ev.TimerFired(command.token, now_ms()))
        )
        timer.daemon = True
        timer.start()

    def _infer_source_parallelism(self, command: cmd.InferSourceParallelism) -> None:
        sources = self.view.sources(command.vertex)
        keep = split_keeper(self.blobs)

        def infer() -> None:
            started = time.perf_counter()
            answer = infer_vertex_parallelism(command.vertex, sources, command.context, keep)
            self.log.info(
                "source parallelism inferred",
                vertex=command.vertex,
                ms=int((time.perf_counter() - started) * 1000),
            )
            self.enqueue(answer)

        self._work.submit(infer)

    def _job_terminated(self, command: cmd.JobTerminated) -> None:
        """Commit the sinks of a finished job, or drop their staging, on a worker thread (a
        commit copies files, maybe on an object store); then say so with ``JobEnded``. Both
        are idempotent: a JobManager that died half way does it again, to the same end."""
        sinks_at_end = [
            (vertex, sink, finals)
            for vertex, operator, finals in self.view.final_attempts()
            if (sink := _parquet_sink(operator)) is not None
        ]
        self._work.submit(self._end_sinks, command.status, command.cause, sinks_at_end)

    def _end_sinks(self, status: JobStatus, cause: str, sinks_at_end: list) -> None:
        try:
            for vertex, sink, finals in sinks_at_end:
                try:
                    if status is JobStatus.FINISHED:
                        sinks.commit(sink, self.job_id, finals)
                    else:
                        sinks.abort(sink, self.job_id)
                except Exception as error:
                    status, cause = (
                        JobStatus.FAILED,
                        f"committing the output of {vertex!r} failed: {error}",
                    )
                    sinks.abort(sink, self.job_id)
        except Exception as error:  # dropping the staging failed too: the job still ends
            status, cause = (
                JobStatus.FAILED,
                f"ending the job's sinks failed: {type(error).__name__}: {error}",
            )
        self.enqueue(ev.JobEnded(status, cause))

    # -- outcomes -----------------------------------------------------------------------------

    @staticmethod
    def _on_failure(ref, react: Callable[[str], None]) -> None:
        def done(future) -> None:
            try:
                future.result()
            except Exception as error:
                react(f"{type(error).__name__}: {error}")

        ref.future().add_done_callback(done)

    def adopt(self, tm_id: str, handle, node: str, shuffle_root: str) -> None:
        """Use a TaskManager the job already had (a JobManager taking the job over)."""
        with self._lock:
            self.task_managers[tm_id] = handle
            self.registered.add(tm_id)
            self._homes[tm_id] = (node, shuffle_root)
        self._outlive(tm_id, handle)

    def _outlive(self, tm_id: str, handle) -> None:
        """Keep a call waiting on the TaskManager (``TaskManagerActor.outlive``): Ray fails it
        the moment the process dies, which is when the TaskManager is lost; the heartbeat
        still finds one that hangs. A call that returns is asked again while the job runs."""

        def answered(future) -> None:
            try:
                future.result()
            except Exception as error:
                self._lose(tm_id, f"{type(error).__name__}: {error}".splitlines()[0])
                return
            with self._lock:
                watched = tm_id in self.registered and not self._stopped.is_set()
            if watched:
                self._outlive(tm_id, handle)

        try:
            handle.outlive.remote(self.job_id, _OUTLIVE_S).future().add_done_callback(answered)
        except Exception as error:
            self._lose(tm_id, f"{type(error).__name__}: {error}".splitlines()[0])

    def _forget(self, tm_id: str, lost: bool = False) -> None:
        """Stop using a TaskManager; a lost one is not lent to anyone again."""
        with self._lock:
            handle = self.task_managers.pop(tm_id, None)
            self.registered.discard(tm_id)
        if lost and handle is not None:
            _tell_resource_manager("forget", tm_id)

    def _watch(self) -> None:
        """Heartbeats: a TaskManager that died, or stayed silent for heartbeat.timeout, is lost.
        Nothing stops the watch but the job's end: an error in one round is logged, and the
        next round comes."""
        interval = self.config[HEARTBEAT_INTERVAL.key] / 1000
        last_seen: dict[str, float] = {}
        while not self._stopped.wait(interval):
            try:
                self._heartbeat_round(interval, last_seen)
            except Exception as error:
                self.log.warning("heartbeat round failed", error=repr(error))

    def _heartbeat_round(self, interval: float, last_seen: dict[str, float]) -> None:
        timeout = self.config[HEARTBEAT_TIMEOUT.key] / 1000
        with self._lock:
            watched = {t: self.task_managers[t] for t in self.registered}
        pings = {t: h.ping.remote() for t, h in watched.items()}
        if not pings:
            return
        ready, _ = ray.wait(list(pings.values()), num_returns=len(pings), timeout=interval)
        ready = set(ready)
        now = time.time()
        for tm_id, ref in pings.items():
            cause = None
            if ref in ready:
                try:
                    ray.get(ref)
                    last_seen[tm_id] = now
                except Exception as error:
                    cause = f"{type(error).__name__}: {error}".splitlines()[0]
            elif now - last_seen.setdefault(tm_id, now) > timeout:
                cause = f"no heartbeat for {timeout:.0f} s"
            if cause is not None:
                self._lose(tm_id, cause)

    def _lose(self, tm_id: str, cause: str) -> None:
        """The TaskManager is lost (said once, however it was found out): forget it, and say
        so once its node has told what its files are. The survey runs on a worker thread, so
        the other TaskManagers' heartbeats go on meanwhile."""
        lost_at = now_ms()
        with self._lock:
            if tm_id not in self.registered or self._stopped.is_set():
                return
            self.registered.discard(tm_id)
            node, root = self._homes.pop(tm_id, ("", ""))
        self.log.warning("task manager lost", task_manager=tm_id, cause=cause)
        self._forget(tm_id, lost=True)

        def report() -> None:
            started = time.perf_counter()
            kept = survey_on_node(node, root, _SURVEY_TIMEOUT_S) if root else ()
            self.log.info(
                "lost task manager's files surveyed",
                task_manager=tm_id,
                node=node,
                whole_files=len(kept),
                ms=int((time.perf_counter() - started) * 1000),
            )
            self.enqueue(ev.TaskManagerLost(tm_id, cause, lost_at, node, kept))

        self._work.submit(report)

    def task_manager_logs(self) -> dict[str, bytes]:
        """Each TaskManager's part of its log for this job so far (see ``TaskManagerActor``)."""
        with self._lock:
            handles = dict(self.task_managers)
        asked = {tm_id: handle.job_log.remote(self.job_id) for tm_id, handle in handles.items()}
        logs = {}
        for tm_id, answer in asked.items():
            try:
                logs[tm_id] = ray.get(answer, timeout=10)
            except Exception as error:
                logs[tm_id] = f"# {tm_id}: its log is out of reach: {error!r}\n".encode()
        return logs

    def stop(self) -> None:
        """Give every TaskManager of the job back to the ResourceManager, which makes it leave
        the job (removing the job's partition files) and keeps it warm for the next one."""
        self._stopped.set()
        with self._lock:
            self.task_managers.clear()
            self.registered.clear()
        for node, root in self.view.departed().values():
            remove_on_node(node, [root])
        _tell_resource_manager("release_job", self.job_id)
        self._work.shutdown(wait=False)


def _tell_resource_manager(method: str, *args) -> None:
    """A fire-and-forget call to the ResourceManager, which may be gone or restarting: never an
    error for the caller (a restarted one rebuilds its leases from the TaskManagers)."""
    try:
        getattr(resource_manager_handle(), method).remote(*args)
    except Exception as error:
        _log.warning("resource manager unreachable", call=method, error=repr(error))


def _parquet_sink(operator) -> ParquetSink | None:
    """The Parquet sink ``operator`` writes to: itself, or the end of its chain."""
    sink = operator.sink if isinstance(operator, ChainedOperator) else operator
    return sink if isinstance(sink, ParquetSink) else None


HANDLERS: dict[type, Callable[[CommandExecutor, Any], None]] = {
    cmd.RequestTaskManagers: CommandExecutor._request_task_managers,
    cmd.DeployTask: CommandExecutor._stage_deployment,
    cmd.CancelTask: CommandExecutor._cancel_task,
    cmd.ReleasePartitions: CommandExecutor._release_partitions,
    cmd.StartTimer: CommandExecutor._start_timer,
    cmd.JobTerminated: CommandExecutor._job_terminated,
    cmd.InferSourceParallelism: CommandExecutor._infer_source_parallelism,
}
"""How each command is carried out: one handler per command type (a test checks the table
against ``jobmanager.core.commands``)."""
