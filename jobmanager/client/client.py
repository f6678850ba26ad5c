"""The Python client: connect to Ray, submit a job, watch it, get its result.

    client = Client()                 # joins a running local Ray cluster, or starts one
    handle = client.submit(job, config={"taskmanager.numberOfTaskSlots": 2})
    result = handle.wait(progress=True)

Everything that can be checked before the job reaches the cluster is checked here, and fails
with an error naming the culprit: a cycle, a bad parallelism, an unknown option or a bad value,
a function that cannot be serialised, a sink whose target already exists.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Any, Iterable, Mapping

import cloudpickle
import ray

from jobmanager.client.progress import TERMINAL, Progress, progress_for
from jobmanager.client.result import JobResult
from jobmanager.core.admission import validate_job
from jobmanager.errors import JobManagerLost
from jobmanager.model.config import Configuration
from jobmanager.model.jobgraph import JobGraph
from jobmanager.model.operators import ParquetSink, check_operators, serialize_vertex_code
from jobmanager.runtime import sinks
from jobmanager.runtime.actor import STANDBY, create_job_manager
from jobmanager.runtime.jobrecords import job_record
from jobmanager.runtime.jobstore import store_root
from jobmanager.runtime.names import NAMESPACE, job_manager_name, new_job_id
from jobmanager.runtime.resourcemanager import resource_manager

__all__ = ["Client", "JobHandle"]


class Client:
    """A connection to the Ray cluster Tidal's jobs run on."""

    def __init__(
        self, address: str | None = None, *, num_cpus: int | None = None, log_to_driver: bool = False
    ) -> None:
        if not ray.is_initialized():
            options = dict(namespace=NAMESPACE, logging_level=logging.WARNING,
                           log_to_driver=log_to_driver, include_dashboard=False)  # fmt: skip
            if address or os.environ.get("RAY_ADDRESS"):
                ray.init(address=address, **options)
            else:
                try:
                    ray.init(address="auto", **options)
                except ConnectionError:
                    ray.init(num_cpus=num_cpus, **options)

    def submit(
        self,
        job: JobGraph,
        config: Mapping[str, Any] | None = None,
        *,
        config_file: str | None = None,
        properties: Iterable[str] = (),
    ) -> JobHandle:
        settings = Configuration.from_yaml(config_file) if config_file else Configuration()
        settings = settings.with_overrides(dict(config or {})).with_dynamic_properties(properties)
        validate_job(job, settings)
        check_operators(job)
        _pickle_user_modules_by_value(job)
        for vertex in job.vertices:
            serialize_vertex_code(vertex)
            if isinstance(vertex.operator, ParquetSink):
                sinks.check_target(vertex.operator)
        start = (cloudpickle.dumps(job), settings.to_dict(), time.time())
        root = store_root(settings)
        recovery = settings["execution.batch.job-recovery.enabled"]
        rm = resource_manager(settings["resourcemanager.taskmanager-timeout"] / 1000, root)
        standby = ray.get(rm.claim_job_manager.remote(root)) if recovery else None
        if standby is not None:
            job_id, actor = standby
            if _started(actor, start):
                return JobHandle(job_id, actor)
        job_id = new_job_id()
        actor = create_job_manager(job_id, root, recovery)
        if not _started(actor, start):
            raise JobManagerLost(f"the JobManager of job {job_id} died while starting")
        return JobHandle(job_id, actor)

    def warm_up(self, timeout: float = 60.0) -> bool:
        """Have a standby JobManager ready for the next job (see ``ResourceManager``): call
        it ahead of a submission whose latency matters. False if none became ready in time."""
        defaults = Configuration()
        rm = resource_manager(defaults["resourcemanager.taskmanager-timeout"] / 1000,
                              store_root(defaults))  # fmt: skip
        return ray.get(rm.has_job_manager.remote(timeout))

    def job(self, job_id: str) -> JobHandle:
        try:
            handle = JobHandle(job_id, ray.get_actor(job_manager_name(job_id), namespace=NAMESPACE))
            if handle.status()["status"] != STANDBY:
                return handle
        except ValueError:
            pass
        raise LookupError(f"no job {job_id!r} on this cluster (finished jobs are kept for "
                          "jobstore.expiration-time)")

    def list(self) -> list[dict]:
        jobs = []
        for entry in ray.util.list_named_actors(all_namespaces=True):
            name = entry["name"] if isinstance(entry, dict) else entry
            namespace = entry.get("namespace") if isinstance(entry, dict) else NAMESPACE
            if namespace == NAMESPACE and name.startswith("tidal-job-"):
                try:
                    jobs.append(self.job(name[len("tidal-job-"):]).status())
                except Exception:  # it left between the listing and the question
                    continue
        return sorted(jobs, key=lambda s: s["submitted_at"])


def _started(actor, start: tuple) -> bool:
    """Hand the job to a JobManager; False if the actor is dead. A job it cannot start (its
    graph does not unpickle there, say) is an error raised here, and the actor is stopped."""
    try:
        ray.get(actor.start.remote(*start))
        return True
    except ray.exceptions.RayActorError:
        return False
    except ray.exceptions.RayTaskError as error:
        ray.kill(actor, no_restart=True)
        raise error.as_instanceof_cause() from None


class JobHandle:
    """A submitted job. Its JobManager may die and be replaced by one that takes the job over;
    the handle keeps working across that (status ``RECOVERING`` meanwhile). A JobManager gone
    for good is a ``JobManagerLost`` error saying why, never a raw Ray error."""

    def __init__(self, job_id: str, actor) -> None:
        self.job_id = job_id
        self.actor = actor

    def _ask(self, ref):
        try:
            return ray.get(ref)
        except ray.exceptions.RayActorError as error:
            raise JobManagerLost(_why_lost(self.job_id, error)) from None

    def status(self) -> dict:
        return self._ask(self.actor.status.remote())

    def wait(self, timeout: float | None = None, progress: bool | Progress = False) -> JobResult:
        """Block until the job ends (or ``timeout`` seconds pass); show progress if asked."""
        display = progress_for(progress) if isinstance(progress, bool) else progress
        deadline = None if timeout is None else time.monotonic() + timeout
        status = self.status()
        while status["status"] not in TERMINAL:
            display.update(status)
            left = 0.5 if deadline is None else min(0.5, deadline - time.monotonic())
            if left <= 0:
                break
            status = self._ask(self.actor.wait.remote(left))
        display.close(status)
        return JobResult.of(status)

    def cancel(self, reason: str = "cancelled by the user") -> None:
        self._ask(self.actor.cancel.remote(reason))

    def event_log(self) -> str:
        return self._ask(self.actor.event_log.remote())

    def describe(self) -> tuple:
        return self._ask(self.actor.describe.remote())

    def release(self) -> None:
        """Let the JobManager go now instead of after jobstore.expiration-time."""
        try:
            self.actor.exit.remote()
        except Exception:  # already gone
            pass


def _why_lost(job_id: str, error: Exception) -> str:
    record = job_record(job_id)
    if record is not None and not record["recovery"]:
        why = "job recovery is off (execution.batch.job-recovery.enabled: false)"
    else:
        why = "Ray did not restart it (it was stopped for good, or its node is gone)"
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"the JobManager of job {job_id} is gone and the job cannot go on: {why} ({first})"


def _pickle_user_modules_by_value(job: JobGraph) -> None:
    """Functions from the user's own files travel by value: Ray workers may not import them."""
    roots = tuple(p for p in sys.path if "site-packages" in p or "dist-packages" in p)
    for vertex in job.vertices:
        for thing in (getattr(vertex.operator, "fn", None), *vertex.sources):
            name = getattr(thing, "__module__", None) or type(thing).__module__
            module = sys.modules.get(name)
            path = getattr(module, "__file__", None) or ""
            if module is None or name == "__main__" or name.split(".")[0] in _OWN:
                continue
            if path and not path.startswith(roots):
                cloudpickle.register_pickle_by_value(module)


_OWN = {"jobmanager", "taskmanager", "shuffle", "blob", "pyspark", "pyarrow", "builtins"}
