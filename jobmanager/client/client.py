"""The Python client: connect to Ray, submit a job or a query, watch it, get its result.

    client = Client()                 # joins a running local Ray cluster, or starts one
    handle = client.submit(job, config={"taskmanager.numberOfTaskSlots": 2})
    result = handle.wait(progress=True)
    rows = client.sql("SELECT ...", tables={"lineitem": "/data/lineitem"}).wait().to_arrow()

Everything that can be checked before the job reaches the cluster is checked here, and fails
with an error naming the culprit: a query the planner cannot take, a cycle, a bad parallelism,
an unknown option or a bad value, a function that cannot be serialised, a sink whose target
already exists.
"""

from __future__ import annotations

import os
import time
from typing import Any, Iterable, Mapping

import ray

from jobmanager.client.connect import connect
from jobmanager.client.progress import Progress, progress_for
from jobmanager.client.query import collected_output, plan_query
from jobmanager.client.report import (
    explain_lines,
    find_job,
    job_facts,
    report_file_name,
    report_html,
)
from jobmanager.client.result import JobResult, QueryOutput
from jobmanager.client.watch import JobManagerWatch, install_filter
from jobmanager.core.admission import validate_job
from jobmanager.errors import JobManagerLost, TidalError, UnknownJobError
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.model import usercode
from jobmanager.model.config import JOB_RECOVERY_ENABLED, TASKMANAGER_IDLE_TIMEOUT, Configuration
from jobmanager.model.jobgraph import JobGraph
from jobmanager.model.operators import (
    ParquetSink,
    check_operators,
    serialize_vertex_code,
)
from jobmanager.runtime import sinks
from jobmanager.runtime.actor import create_job_manager
from jobmanager.runtime.cleanup import clean_up_job
from jobmanager.runtime.details import JobDetails, JobSummary, read_details
from jobmanager.runtime.eventlog import read_events
from jobmanager.runtime.firstjob import prepare_first_job
from jobmanager.runtime.jobrecords import forget_job, job_record, job_records
from jobmanager.runtime.jobstore import JobStore, store_root
from jobmanager.runtime.names import NAMESPACE, job_manager_name, new_job_id
from jobmanager.runtime.recovery import replay_store
from jobmanager.runtime.resourcemanager import resource_manager

__all__ = ["Client", "JobHandle"]


class Client:
    """A connection to the Ray cluster Tidal's jobs run on."""

    def __init__(
        self,
        address: str | None = None,
        *,
        num_cpus: int | None = None,
        log_to_driver: bool = False,
        dashboard: bool = True,
    ) -> None:
        """Join the cluster at ``address`` (or ``RAY_ADDRESS``), else the local one, else start
        one in this process (``jobmanager.client.connect``), with Ray's dashboard unless
        ``dashboard`` is False. A cluster started here starts, in the background, what its
        first job needs: a standby JobManager and a TaskManager of the default shape with its
        Spark JVM, so the job finds them up or on their way rather than starting them."""
        done = connect(address, num_cpus=num_cpus, log_to_driver=log_to_driver, dashboard=dashboard)
        install_filter()
        self._standby_asked, self._prepared_task_manager = (
            prepare_first_job() if done.startswith("started") else (None, None)
        )

    def submit(
        self,
        job: JobGraph,
        config: Mapping[str, Any] | None = None,
        *,
        config_file: str | None = None,
        properties: Iterable[str] = (),
    ) -> JobHandle:
        settings = _settings(config, config_file, properties)
        return self._submit(job, settings, collected_output(job, settings))

    def sql(
        self,
        query: str,
        tables: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        *,
        catalog: Any = None,
        output: str | None = None,
        overwrite: bool = False,
        config_file: str | None = None,
        properties: Iterable[str] = (),
        mode: str | None = None,
        output_format: str = "parquet",
        partition_by: Iterable[str] | str = (),
        csv_header: bool = False,
    ) -> JobHandle:
        """Run a query in Spark's dialect over ``tables`` (name to path, or to ``{path, format,
        partitioning, csv}``) and/or ``catalog`` (a ``jobmanager.planner.Catalog`` or its YAML
        file). Its result goes to ``output`` or, without one, back to the client:
        ``handle.wait().to_arrow()``. ``output`` is written as Spark's
        ``df.write.mode(mode).partitionBy(*partition_by)`` writes ``output_format``
        (``"parquet"``, or ``"csv"`` with a header line if ``csv_header``): ``mode`` one of
        ``"error"`` (the default), ``"overwrite"`` (also ``overwrite=True``), ``"append"``,
        ``"ignore"`` (the job's output is dropped if ``output`` exists by its commit). The query
        is planned here, before anything is submitted: a ``SqlError`` names what the planner
        cannot take.
        """
        settings = _settings(config, config_file, properties)
        planned, where = plan_query(
            query,
            settings,
            tables=tables,
            catalog=catalog,
            output=output,
            overwrite=overwrite,
            mode=mode,
            output_format=output_format,
            partition_by=partition_by,
            csv_header=csv_header,
        )
        return self._submit(planned.graph, settings, where)

    def _submit(
        self, job: JobGraph, settings: Configuration, output: QueryOutput | None
    ) -> JobHandle:
        """Check the job, ship its code and hand it to a JobManager (a standby one if ready)."""
        validate_job(job, settings)
        check_operators(job)
        usercode.ship_by_value(_user_code(job))
        for vertex in job.vertices:
            serialize_vertex_code(vertex)
            if isinstance(vertex.operator, ParquetSink):
                sinks.check_target(vertex.operator)
        start = (usercode.dumps(job), settings.to_dict(), time.time())
        root = store_root(settings)
        recovery = settings[JOB_RECOVERY_ENABLED.key]
        rm = resource_manager(settings[TASKMANAGER_IDLE_TIMEOUT.key] / 1000, root)
        self._after_standby_asked()
        standby = ray.get(rm.claim_job_manager.remote(root)) if recovery else None
        if standby is not None:
            job_id, actor = standby
            if _started(actor, start):
                return JobHandle(job_id, actor, output)
        job_id = new_job_id()
        actor = create_job_manager(job_id, root, recovery)
        if not _started(actor, start):
            raise JobManagerLost(f"the JobManager of job {job_id} died while starting")
        return JobHandle(job_id, actor, output)

    def _after_standby_asked(self) -> None:
        """Before the first claim, the answer to the standby this client asked for as it
        started the cluster (given once the standby is starting). The ResourceManager runs
        calls on threads, in no order Ray promises even from one caller: a claim run first
        finds no standby, and the job would start a JobManager of its own beside it."""
        asked, self._standby_asked = self._standby_asked, None
        if asked is not None:
            ray.wait([asked], timeout=_STANDBY_ASKED_TIMEOUT_S)

    def warm_up(self, timeout: float = 60.0) -> bool:
        """Have a standby JobManager ready for the next job (see ``ResourceManager``), a spare
        TaskManager up once there is a TaskManager (``jobmanager.runtime.spare``) and, on a
        cluster this client started, the TaskManager it prepared with its Spark JVM up: call it
        ahead of a submission whose latency matters, as a SparkSession is started before its
        first query. False if either was not ready in time."""
        deadline = time.monotonic() + timeout
        defaults = Configuration()
        rm = resource_manager(defaults[TASKMANAGER_IDLE_TIMEOUT.key] / 1000, store_root(defaults))
        standby = ray.get(rm.has_job_manager.remote(timeout))
        spare = ray.get(rm.has_spare_task_manager.remote(max(0.0, deadline - time.monotonic())))
        return self._prepared_spark_ready(deadline) and standby and spare

    def _prepared_spark_ready(self, deadline: float) -> bool:
        """Whether the TaskManager prepared as this client started the cluster has its Spark
        JVM up, waiting until ``deadline`` for it; True once it was, or if there is none (not
        started, or gone: stopped for the CPUs a job needed)."""
        if self._prepared_task_manager is None:
            return True
        try:
            left = max(0.0, deadline - time.monotonic())
            task_manager = ray.get(self._prepared_task_manager, timeout=left + _ACTOR_CALL_S)
            if task_manager is not None:
                handle = ray.get_actor(task_manager, namespace=NAMESPACE)
                left = max(0.0, deadline - time.monotonic())
                if not ray.get(handle.spark_ready.remote(left), timeout=left + _ACTOR_CALL_S):
                    return False
        except ray.exceptions.GetTimeoutError:
            return False
        except (ValueError, ray.exceptions.RayActorError):
            pass  # gone: nothing to wait for
        self._prepared_task_manager = None
        return True

    def job(self, job_id: str) -> JobHandle:
        """The job ``job_id``, running or ended (an ended one until jobstore.expiration-time)."""
        record = job_record(job_id)
        try:
            actor = ray.get_actor(job_manager_name(job_id), namespace=NAMESPACE)
        except ValueError:
            actor = None
        if record is not None and not record.cleaned:
            return JobHandle(job_id, actor)
        if actor is not None and JobHandle(job_id, actor).status().status is not JobStatus.STANDBY:
            return JobHandle(job_id, actor)
        raise UnknownJobError(
            f"no job {job_id!r} on this cluster (ended jobs are kept for jobstore.expiration-time)"
        )

    def list(self) -> list[JobSummary]:
        """Every job on the cluster, running or ended, in submission order: a running job's
        status from its JobManager, an ended one's summary from its record (no process)."""
        jobs = []
        for job_id, record in job_records().items():
            if record.cleaned:
                continue
            if record.end is not None:
                jobs.append(record.end.summary)
                continue
            try:
                jobs.append(self.job(job_id).status().summary())
            except TidalError:  # it ended or left between the two questions
                continue
        return sorted(jobs, key=lambda job: job.submitted_at)


def _settings(
    config: Mapping[str, Any] | None, config_file: str | None, properties: Iterable[str]
) -> Configuration:
    """Defaults, then the YAML file, then ``config``, then ``key=value`` properties."""
    settings = Configuration.from_yaml(config_file) if config_file else Configuration()
    return settings.with_overrides(dict(config or {})).with_dynamic_properties(properties)


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
    the handle keeps working across that (status ``RECONCILING`` meanwhile). Once the job has
    ended its JobManager leaves, and the handle reads the job from its store. A JobManager gone
    for good before the end is a ``JobManagerLost`` error saying why, never a raw Ray error."""

    def __init__(self, job_id: str, actor, output: QueryOutput | None = None) -> None:
        self.job_id = job_id
        self.actor = actor  # None: the job ended and its JobManager left
        self.output = output  # a query's: where its result goes (``JobResult.to_arrow``)

    def _ask(self, method: str, *args, ended=None):
        """Ask the JobManager; once it has left, ``ended(store)`` answers from the job's store."""
        if self.actor is not None:
            try:
                return ray.get(getattr(self.actor, method).remote(*args))
            except ray.exceptions.RayActorError as error:
                lost = error
        else:
            lost = None
        store = _ended_store(self.job_id)
        if store is None or ended is None:
            why = (
                _why_lost(self.job_id, lost)
                if lost is not None
                else (f"job {self.job_id} has ended and its JobManager has left")
            )
            raise JobManagerLost(why) from None
        self.actor = None
        return ended(store)

    def status(self) -> JobDetails:
        return read_details(self._ask("status", ended=_final_status))

    def wait(self, timeout: float | None = None, progress: bool | Progress = False) -> JobResult:
        """Block until the job ends (or ``timeout`` seconds pass); show progress if asked. A
        JobManager lost and recovered meanwhile is one line each on stderr, in place of Ray's
        raw lines about it (``jobmanager.client.watch``)."""
        display = progress_for(progress) if isinstance(progress, bool) else progress
        deadline = None if timeout is None else time.monotonic() + timeout
        status = self.status()
        try:
            with JobManagerWatch(self.job_id) as watch:
                while not status.status.is_terminal:
                    watch.saw(status)
                    display.update(status)
                    left = 0.5 if deadline is None else min(0.5, deadline - time.monotonic())
                    if left <= 0:
                        break
                    status = read_details(self._ask("wait", left, ended=_final_status))
                watch.saw(status)
        finally:
            display.close(status)  # a Ctrl-C gives the terminal back too
        return JobResult.of(status, self.output)

    def cancel(self, reason: str = "cancelled by the user") -> None:
        """Cancel the job; nothing to do once it has ended."""
        self._ask("cancel", reason, ended=lambda store: None)

    def event_log(self) -> str:
        return self._ask("event_log", ended=lambda store: store.events_url)

    def events(self) -> list:
        """The job's events so far, decoded (``jobmanager.messages.events``), oldest first, the
        job's ``JobSubmitted`` the first: what a running JobManager has buffered is written out
        first, and an ended job's are read from its store. Only read: a write under way at the
        log's end is left out, never cut off the file (as a JobManager taking over does)."""
        return list(read_events(self.event_log()))

    def describe(self) -> tuple:
        """How the job's graph stands: from its JobManager, or, once it left, by replaying the
        job's event log (the same state, since replay never re-decides)."""
        return self._ask(
            "describe", ended=lambda store: replay_store(store, self.job_id).state.describe()
        )

    def facts(self):
        """What the job did and why (``jobmanager.client.report.JobFacts``), replayed from its
        event log: written out first while the job runs, read from its archive once its store
        has expired. Works with the cluster gone too (``tidal explain`` and ``tidal report``)."""
        try:
            self.event_log()  # a running JobManager writes what it buffered
        except JobManagerLost:
            pass
        record = job_record(self.job_id)
        return job_facts(
            find_job(self.job_id, store_url=record and record.taken.store), self.job_id
        )

    def explain(self) -> str:
        """Each vertex's parallelism and the whole reason for it (``tidal explain``)."""
        return "\n".join(explain_lines(self.facts()))

    def report(self, path: str | None = None) -> str:
        """Write the job's self-contained HTML report to ``path`` (default
        ``<job name>-<job id>.html`` here); return where it went."""
        facts = self.facts()
        path = os.path.abspath(path or report_file_name(facts))
        with open(path, "w", encoding="utf-8") as out:
            out.write(report_html(facts))
        return path

    def logs(self) -> dict[str, bytes]:
        """The job's logs by process: its JobManager's, and each TaskManager's part of its own
        while it served the job (``# ... ran tasks of: ...`` first)."""
        return self._ask("logs", ended=lambda store: store.logs())

    def release(self) -> None:
        """Let the job go now instead of after jobstore.expiration-time: its store and work
        directory are removed, with a query's result collected for the client (and a running
        job's JobManager stopped). Its JobManager does it while it is there; once it has left
        (a second after the job's end, or lost), the client does it from the job's record. A
        JobManager that does not answer (restarting) is a ``JobManagerLost`` saying so."""
        record = job_record(self.job_id)
        if record is None or record.end is None:  # running: its JobManager stops it, if there
            actor = self.actor or _named_job_manager(self.job_id)
            if actor is not None:
                _exit(actor, self.job_id)
            record = job_record(self.job_id)
        self.actor = None  # an ended job's leaves by itself: its end is recorded first
        if record is not None:  # its JobManager left: after the end, or lost before it
            if not record.cleaned:
                clean_up_job(
                    self.job_id,
                    JobStore(record.store_root, self.job_id),
                    work_dir=record.taken.work_dir,
                )
            forget_job(self.job_id)


_RELEASE_TIMEOUT_S = 60.0
_STANDBY_ASKED_TIMEOUT_S = 30.0  # as long as a claim waits for a standby that is starting
_ACTOR_CALL_S = 10.0  # a call's own way there and back, beyond what it was asked to wait


def _exit(actor, job_id: str) -> None:
    """Ask the JobManager to clean up and leave, until it has left: one that is leaving or
    restarting is unavailable for a moment, and is asked again for ``_RELEASE_TIMEOUT_S``."""
    deadline = time.monotonic() + _RELEASE_TIMEOUT_S
    while True:
        left = deadline - time.monotonic()
        try:
            ray.get(actor.exit.remote(), timeout=max(left, 0.1))
            return
        except ray.exceptions.ActorUnavailableError as error:
            if left <= 0:
                raise _not_released(job_id, error) from None
            time.sleep(0.1)
        except ray.exceptions.GetTimeoutError as error:
            raise _not_released(job_id, error) from None
        except ray.exceptions.RayActorError:
            return  # it left: cleaned up if it was there to exit, else its record says


def _not_released(job_id: str, error: Exception) -> JobManagerLost:
    return JobManagerLost(
        f"job {job_id} was not released: its JobManager did not answer within "
        f"{_RELEASE_TIMEOUT_S:.0f} s ({type(error).__name__}); release it "
        f"again once `tidal status {job_id}` answers"
    )


def _named_job_manager(job_id: str):
    """The JobManager actor of ``job_id`` if there is one (restarted ones included), else None."""
    try:
        return ray.get_actor(job_manager_name(job_id), namespace=NAMESPACE)
    except ValueError:
        return None


def _ended_store(job_id: str) -> JobStore | None:
    """The store of ``job_id`` if the job ended and its end is stored, else None."""
    record = job_record(job_id)
    if record is None or record.end is None or record.cleaned:
        return None
    return JobStore(record.store_root, job_id)


def _final_status(store: JobStore) -> bytes:
    """The job's final details as its JobManager would have answered them (encoded)."""
    status = store.final_status()
    if status is None:
        raise JobManagerLost(f"the job's final status is missing from its store {store.url}")
    return status.encode()


def _why_lost(job_id: str, error: Exception) -> str:
    record = job_record(job_id)
    if record is not None and not record.taken.recovery:
        why = "job recovery is off (execution.batch.job-recovery.enabled: false)"
    else:
        why = "Ray did not restart it (it was stopped for good, or its node is gone)"
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"the JobManager of job {job_id} is gone and the job cannot go on: {why} ({first})"


def _user_code(job: JobGraph) -> list:
    return [
        thing
        for vertex in job.vertices
        for thing in (getattr(vertex.operator, "fn", None), *vertex.sources)
        if thing is not None
    ]
