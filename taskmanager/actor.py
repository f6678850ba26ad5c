"""TaskManagerActor: the Ray shell around a TaskManager's slots, shuffle files and Spark.

A TaskManager process outlives jobs: the ResourceManager keeps idle ones warm (their Python
modules loaded, their SparkSession and its JIT warmed up) and leases them to the next job, as
a Flink session cluster keeps its TaskManagers. It serves one job at a time: ``attach`` gives it
the job's JobManager and shuffle directory, ``detach`` cancels what is left, removes the job's
partition files and makes it idle again.

Every method returns promptly (the actor is threaded, ``max_concurrency`` = slots + 8): tasks run
on the slots' own threads, and the spare actor threads serve ``read_chunk`` to consumers on
other nodes while tasks run. Everything here is wiring; the task runtime is in
:mod:`taskmanager.runner` and its modules, which need no Ray.

Options read from its ``config`` (a ``Configuration``'s bytes, parsed once here):
``taskmanager.node-id`` (the node it says it is on; tests set two to force reads through
``read_chunk``), ``taskmanager.memory.spark-driver`` (its SparkSession's JVM heap) and
``io.tmp.dirs`` (part of its shape).

A TaskManager started ahead of any job (``start_spark``: the one the ResourceManager prepares
when a local cluster starts) starts its Spark JVM at once, on a thread of its own, so that the
first job's first Spark task finds the JVM up, or starting, rather than starting it (five
seconds on two cores). One started for a job starts its JVM with its first Spark task: a job of
Arrow functions alone never pays for one.
"""

from __future__ import annotations

import os
import resource
import threading
from collections import deque
from dataclasses import dataclass, field

import pyarrow as pa
import ray
import structlog

from blob import BlobCache, BlobKey
from jobmanager.logs import configure_logging, log_positions, log_since
from jobmanager.messages.codec import decode, encode
from jobmanager.messages.deployment import TaskDeploymentDescriptor
from jobmanager.messages.events import TaskManagerReport
from jobmanager.model.config import (
    SPARK_DRIVER_MEMORY,
    TASKMANAGER_NODE_ID,
    TMP_DIRS,
    Configuration,
)
from shuffle import IndexRange, PartitionId, PartitionServer, ShuffleDirectory
from taskmanager.blobs import FetchedBlobs
from taskmanager.ended import EndedTasks
from taskmanager.kept_jvm import JvmKeeping, registry_beside
from taskmanager.registry import PartitionRegistry
from taskmanager.remote import RayChunkFetcher
from taskmanager.reports import ReportBatcher
from taskmanager.slots import TaskSlots
from taskmanager.spark import SparkSessionProvider

__all__ = ["TaskManagerActor"]

_SHUTDOWN_WAIT_S = 5.0
_LEFT_JOBS_KEPT = 1024  # jobs remembered as left, so a late attach of theirs is refused


@dataclass
class _JobSession:
    """What a TaskManager holds for the job it serves."""

    job_id: str
    job_manager: object
    shuffle: ShuffleDirectory
    registry: PartitionRegistry
    server: PartitionServer
    blobs: BlobCache
    slots: TaskSlots
    reports: ReportBatcher
    ended: EndedTasks
    log_from: dict = field(default_factory=log_positions)  # where the job's part of the log begins
    vertices: set = field(default_factory=set)  # the vertices it ran tasks of
    left: threading.Event = field(default_factory=threading.Event)  # see ``outlive``


def _import_task_runtime() -> None:
    """What a TaskManager imports to run tasks, PySpark's Python side among it. The converter
    PySpark adds to Py4J imports ``pyspark.testing`` (and with it pandas: 0.2 s) on the first
    call with arguments, so that is imported here too, not on a replacement's first call."""
    import pyspark.sql.functions  # noqa: F401
    import pyspark.testing.utils  # noqa: F401

    import taskmanager.runner  # noqa: F401


def shape_of(slots: int, config: Configuration) -> tuple:
    """What a TaskManager is made with, which a job needing another cannot change: its slots,
    its Spark driver's memory, its scratch directory's base (``io.tmp.dirs``)."""
    return slots, config[SPARK_DRIVER_MEMORY.key], config[TMP_DIRS.key]


class TaskManagerActor:
    """``slots`` slots and a SparkSession (scratch under ``work_dir``) for one job at a time."""

    def __init__(
        self,
        task_manager_id: str,
        slots: int = 0,
        config: bytes = b"",
        work_dir: str = "",
        start_spark: bool = False,
        adopt: str = "",
        spare: bool = False,
    ) -> None:
        """``spare``: a process up, its imports done, and nothing else until ``take_over``
        (``jobmanager.runtime.spare``); the other arguments then come with that call."""
        configure_logging("INFO")
        self.task_manager_id = task_manager_id
        self._log = structlog.get_logger("tidal.taskmanager").bind(task_manager=task_manager_id)
        self._job: _JobSession | None = None
        self._left: deque[str] = deque(maxlen=_LEFT_JOBS_KEPT)
        self._lock = threading.Lock()
        self._spark_start: threading.Thread | None = None
        self.spare = spare
        if spare:
            _import_task_runtime()
            self._log.info("spare task manager started")
            return
        self._become(slots, config, work_dir, start_spark, adopt)

    def take_over(self, slots: int, config: bytes, work_dir: str, adopt: str) -> None:
        """A spare becomes the replacement of the lost TaskManager ``adopt``, adopting its
        Spark JVM if that is up on this node (``taskmanager.kept_jvm``). Ray started it with
        no CPUs, and so with ``OMP_NUM_THREADS`` = 1, which sizes Arrow's thread pool: it gets
        the threads of the slots it now has, as a TaskManager started with them does."""
        os.environ["OMP_NUM_THREADS"] = str(slots)
        pa.set_cpu_count(slots)
        self._become(slots, config, work_dir, True, adopt)
        self.spare = False

    def _become(self, slots: int, config: bytes, work_dir: str, start_spark: bool, adopt: str):
        config = Configuration.from_bytes(config)
        self.slots = slots
        self.shape = shape_of(slots, config)
        self.node_id = config[TASKMANAGER_NODE_ID.key] or ray.get_runtime_context().get_node_id()
        self.work_dir = work_dir
        os.makedirs(work_dir, exist_ok=True)  # its scratch space, from the start
        keeping = JvmKeeping(registry_beside(work_dir), self.task_manager_id, self.node_id, adopt)
        self._spark = SparkSessionProvider(
            slots, os.path.join(work_dir, ".spark"), config, keeping=keeping
        )
        self._log.info("task manager started", slots=slots, node=self.node_id, adopt=adopt)
        if start_spark:
            # PySpark's modules are imported here, before the JVM starts on its own thread: a
            # task unpickling code that imports pyspark.sql.functions while that thread imports
            # pyspark.sql would find a module half initialised (a circular-import ImportError)
            import pyspark.sql.functions  # noqa: F401

            self._spark_start = threading.Thread(
                target=self._start_spark, name="tidal-spark-start", daemon=True
            )
            self._spark_start.start()
        # the task runtime (a tenth of a second of imports, SQL's parser among them) loads
        # after the JVM's start, not before it; and the ResourceManager and JobManagers, which
        # need this class but run no task, never load it
        import taskmanager.runner  # noqa: F401

    def _start_spark(self) -> None:
        """Start the JVM now; a failure is only logged: the first Spark task starts it again
        and fails with the cause, where the job sees it."""
        try:
            self._spark.session()
        except Exception as error:
            self._log.warning(
                "spark session not started ahead of the first task",
                error=f"{type(error).__name__}: {error}",
            )

    def spark_ready(self, timeout_s: float) -> bool:
        """Whether its Spark JVM is up, once the start begun ahead of any job has ended or
        ``timeout_s`` has passed; one started without that start says at once."""
        if self._spark_start is not None:
            self._spark_start.join(timeout_s)
        return self._spark.started

    # -- jobs ---------------------------------------------------------------------------------

    def attach(self, job_id: str, job_manager, shuffle_root: str) -> dict:
        """Serve ``job_id`` from now on; its partition files go under ``shuffle_root``. Asked
        again for the job it serves, it keeps serving it (a JobManager that took the job over
        may not know whether the one before it had attached this TaskManager). A job it was
        told to leave is refused: its JobManager's attach and the ResourceManager's detach come
        from two callers, so Ray may run the detach first, and the TaskManager, idle for the
        ResourceManager, would otherwise serve a job that is over."""
        with self._lock:
            if self._job is not None and self._job.job_id == job_id:
                return self.describe()
            if job_id in self._left:
                raise RuntimeError(f"{self.task_manager_id} has left job {job_id}")
            if self._job is not None:
                raise RuntimeError(
                    f"{self.task_manager_id} serves job {self._job.job_id}, not {job_id}"
                )
            shuffle = ShuffleDirectory(shuffle_root)
            registry = PartitionRegistry(self.task_manager_id)
            blobs = BlobCache(
                FetchedBlobs(
                    lambda key: ray.get(job_manager.get_blob.remote(key)),
                    f"job manager of {job_id}",
                )
            )

            batcher = ReportBatcher(lambda batch: ray.get(job_manager.report_many.remote(batch)))
            ended = EndedTasks()

            def report(event) -> None:
                ended.record(event)
                batcher(event)

            from taskmanager.runner import TaskEnvironment, run_task

            environment = TaskEnvironment(
                task_manager_id=self.task_manager_id,
                node_id=self.node_id,
                shuffle=shuffle,
                registry=registry,
                blobs=blobs,
                spark=self._spark,
                report=report,
                fetch_chunk=RayChunkFetcher(),
                on_jvm_lost=lambda: self._leave(batcher),
            )
            slots = TaskSlots(
                self.slots,
                lambda tdd, token, queued: run_task(tdd, environment, token, queued),
                report,
            )
            self._job = _JobSession(
                job_id,
                job_manager,
                shuffle,
                registry,
                PartitionServer(registry),
                blobs,
                slots,
                batcher,
                ended,
            )
        self._log.info("serving job", job=job_id, shuffle_root=shuffle_root)
        return self.describe()

    def detach(self, job_id: str) -> bytes:
        """Stop serving ``job_id``: cancel its tasks, remove its partition files. Answers the
        job's part of this process's log (see ``job_log``)."""
        with self._lock:
            job = self._job if self._job is not None and self._job.job_id == job_id else None
            self._job = None if job is not None else self._job
            self._left.append(job_id)
        if job is None:
            return b""
        job.left.set()
        job.slots.cancel_all()
        if not job.slots.wait_idle(_SHUTDOWN_WAIT_S):
            self._log.warning("tasks still running when the job left", tasks=job.slots.running())
        job.slots.close()
        job.reports.close()
        job.shuffle.close()
        self._log.info("job left", job=job_id)
        return self._job_log(job)

    def job_log(self, job_id: str) -> bytes:
        """What this process logged while serving ``job_id`` (Tidal's log, the tasks' output,
        Spark's), after a first line naming the vertices whose tasks it ran."""
        job = self._job
        return self._job_log(job) if job is not None and job.job_id == job_id else b""

    def _job_log(self, job: _JobSession) -> bytes:
        ran = ", ".join(sorted(job.vertices))
        header = f"# {self.task_manager_id} (pid {os.getpid()}) ran tasks of: {ran}\n"
        return header.encode() + log_since(job.log_from)

    def rejoin(self, job_id: str, job_manager, shuffle_root: str, in_flight: bytes) -> bytes:
        """A JobManager taking ``job_id`` over asks what is left of it here: the job's tasks
        still running or queued, the final reports of those among ``in_flight`` (encoded task
        keys) that ended, and the partitions held. A TaskManager leased to the job but never
        attached to it attaches now. Answers an encoded ``TaskManagerReport``."""
        info = self.attach(job_id, job_manager, shuffle_root)
        job = self._serving(job_id)
        keys = [tuple(key) for key in decode(in_flight)]
        report = TaskManagerReport(
            self.task_manager_id,
            self.slots,
            info["node"],
            info["shuffle_root"],
            tuple(job.slots.active()),
            tuple(job.ended.reports_of(keys)),
            tuple(job.registry.held()),
        )
        self._log.info(
            "rejoined job",
            job=job_id,
            running=len(report.running),
            ended=len(report.ended),
            partitions=len(report.partitions),
        )
        return encode(report)

    def describe(self) -> dict:
        if self.spare:
            return {"spare": True, "pid": os.getpid()}
        job = self._job
        return {
            "node": self.node_id,
            "pid": os.getpid(),
            "slots": self.slots,
            "shape": self.shape,
            "job": job.job_id if job else None,
            "shuffle_root": str(job.shuffle.root) if job else "",
            "work_dir": self.work_dir,
            "spark_started": self._spark.started,
            "arrow_threads": pa.cpu_count(),
            "spark_jvm": (kept.pid, kept.adopted) if (kept := self._spark.kept) else None,
            "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        }

    # -- the job's work ---------------------------------------------------------------------------

    def deploy(self, tdd: bytes) -> None:
        deployment = decode(tdd)
        if not isinstance(deployment, TaskDeploymentDescriptor):
            raise TypeError(f"deploy takes a TaskDeploymentDescriptor, got {deployment!r:.200}")
        job = self._serving(deployment.job_id)
        job.vertices.add(deployment.vertex)
        job.slots.submit(deployment)

    def deploy_many(self, tdds: list[bytes]) -> None:
        """Several deployments in one call, in order."""
        for tdd in tdds:
            self.deploy(tdd)

    def cancel(self, vertex: str, subtask: int, attempt: int) -> None:
        job = self._job
        if job is not None:
            job.slots.cancel((vertex, subtask, attempt))

    def release(self, partitions: bytes) -> None:
        """Delete these producer attempts' files; ``partitions`` encodes (ids, attempts)."""
        job = self._job
        if job is None:
            return
        ids, attempts = decode(partitions)
        job.ended.released(ids, attempts)
        job.registry.forget(ids, attempts)
        job.server.forget(ids)
        job.shuffle.release(ids, attempts)

    def read_chunk(
        self, result: str, index: int, start: int, end: int, offset: int, max_bytes: int
    ) -> bytes:
        job = self._job
        if job is None:
            raise RuntimeError(f"{self.task_manager_id} serves no job")
        return job.server.read_chunk(
            PartitionId(result, index), IndexRange(start, end), offset, max_bytes
        )

    def drop_blobs(self, keys: list[str]) -> None:
        job = self._job
        if job is not None:
            job.blobs.drop(BlobKey(key) for key in keys)

    def ping(self) -> int:
        return os.getpid()

    def outlive(self, job_id: str, seconds: float) -> int:
        """Answer once ``job_id`` is left, or after ``seconds`` (the JobManager then asks
        again). A call that waits, so this process's death reaches the JobManager the moment
        Ray fails the call, not at its next heartbeat; it holds one of the threads beyond the
        slots while it waits, and gives it back when the job leaves."""
        job = self._job
        if job is not None and job.job_id == job_id:
            job.left.wait(seconds)
        return os.getpid()

    def shutdown(self) -> None:
        """Leave the current job, then stop Spark."""
        if self.spare:
            return
        job = self._job
        if job is not None:
            self.detach(job.job_id)
        self._spark.stop()
        self._log.info("task manager shut down")

    def _leave(self, batcher: ReportBatcher) -> None:
        """Exit the process: its Spark JVM is gone and PySpark cannot start another in it. As
        Flink's TaskManager exits on an OutOfMemoryError (``taskmanager.jvm-exit-on-oom``), so
        its JobManager finds it lost and runs its work again elsewhere, and the cluster gets a
        fresh TaskManager. The failed task's report goes out first."""
        batcher.close()
        self._log.error("task manager leaves: its Spark JVM has exited")
        os._exit(1)

    def _serving(self, job_id: str) -> _JobSession:
        job = self._job
        if job is None or job.job_id != job_id:
            raise RuntimeError(f"{self.task_manager_id} does not serve job {job_id}")
        return job
