"""Events: everything that happens to a job, in the order it happened.

The JobManager appends each event to the job's log before applying it; replaying the log into a
fresh state rebuilds the same state. Anything that depends on the outside world or on time
enters as an event: a TaskManager registering, a task finishing with its byte counts, a timer
firing, a failure with the time it was seen.
"""

from __future__ import annotations

import numpy as np

from jobmanager.messages.codec import message, register
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.messages.joins import JoinDecision
from shuffle.ids import PartitionId

__all__ = [
    "Event",
    "Explanation",
    "JobArchived",
    "JobCancelRequested",
    "JobEnded",
    "JobManagerRecovered",
    "JobStarted",
    "JobSubmitted",
    "JoinChained",
    "JoinDecision",
    "ProducedPartition",
    "SourceInferenceFailed",
    "SourceParallelismInferred",
    "TaskCanceled",
    "TaskFailed",
    "TaskFinished",
    "TaskManagerLost",
    "TaskManagerRegistered",
    "TaskManagerReport",
    "TaskManagerRequestFailed",
    "TaskMetrics",
    "TaskRunning",
    "TimerFired",
    "VertexParallelismDecided",
]

register(PartitionId)


@message
class JobSubmitted:
    """The job as its JobManager took it: the first record of every job's log, and all a replay
    needs besides the events. The graph travels as the blob of its cloudpickled bytes (user
    code); the configuration is the effective one; ``cluster_cpus`` is the one value read from
    the cluster at submission (the slot limit when ``slotmanager.number-of-slots.max`` is
    unset), so a JobManager replaying the log on another node makes the same plan.
    ``sink_paths`` are the targets of the job's Parquet sinks, so a job can be cleaned up
    without unpickling its graph. ``chains``: the vertices that run as one task
    (``jobmanager.model.chaining``), decided once, here; ``inferred``: what the sources of the
    vertices that decision rested on inferred when the job was taken (named as in the chained
    graph), applied as if the scheduler had asked for them. ``result_paths``: those of the
    sinks that are Tidal's own (``ResultSink``: a query's result collected for its client),
    removed with the job's store; last, so logs written before it decode."""

    name: str
    graph_key: str
    config: tuple[tuple[str, object], ...]
    submitted_at: float
    cluster_cpus: int
    code_keys: tuple[tuple[str, str], ...]
    sink_paths: tuple[str, ...] = ()
    chains: tuple[tuple[str, ...], ...] = ()
    inferred: tuple[SourceParallelismInferred, ...] = ()
    result_paths: tuple[str, ...] = ()


@message
class JobStarted:
    """The JobManager took the job; scheduling begins."""


@message
class TaskManagerRegistered:
    """A TaskManager joined: its slots, the node it runs on (consumers on the same node read
    its partition files directly) and the root of its shuffle directory."""

    task_manager: str
    slots: int
    node: str = ""
    shuffle_root: str = ""


@message
class TaskManagerRequestFailed:
    """TaskManagers of ``slots`` slots in all could not be started (or attached to the job)."""

    slots: int
    reason: str
    time_ms: int = 0


@message
class TaskManagerLost:
    """A TaskManager's process died or went silent. ``node``: its node, and ``kept``: the
    whole partition files its shuffle directory still holds there (path, size, fingerprint;
    ``shuffle.survey``), surveyed when the node is up; empty when the node is gone."""

    task_manager: str
    cause: str
    time_ms: int
    node: str = ""
    kept: tuple[tuple[str, int, int], ...] = ()


@message
class TaskRunning:
    """The attempt started running, at ``time_ms`` by its TaskManager's clock (what the slow
    task detector measures its execution time from)."""

    vertex: str
    subtask: int
    attempt: int
    time_ms: int = 0


@message
class ProducedPartition:
    """Bytes one finished task wrote to the subpartitions of one result partition, in the
    smallest of three forms the scheduler can use, so a report costs what the task wrote,
    never the consumer's parallelism:

    - sparse, when at most an eighth of the subpartitions were written to: ``written`` holds
      their indices (little-endian int32) and ``subpartition_bytes`` their bytes (int64), in
      the same order (a task that wrote nothing sends two empty strings);
    - dense: ``subpartition_bytes`` holds every subpartition's bytes (``written`` None);
    - total only, when the scheduler said it needs no breakdown (the consumer's ranges are
      fixed and there are many subpartitions): ``total_bytes``, every subpartition possibly
      written.

    ``subpartitions``: how many the partition has (the dense form says it by its length).
    For a broadcast result: one subpartition, the bytes produced once. ``filter_values``: for
    an edge with dynamic filtering, the values of the filtering column this task's output
    holds. ``range_bounds``: for a range-partitioned result, the sample its sort is cut by:
    the task wrote its output sorted, in chunks 0..c-1 (one per subpartition), and these are
    each chunk's lowest key and then its highest key of all, encoded (``shuffle.keyorder``):
    c + 1 keys, none for a task that wrote no rows. ``file_size`` and ``file_checksum``: the
    partition file's size and fingerprint (``shuffle.survey``), by which the file is known
    again after its TaskManager died (0: not known)."""

    result: str
    subpartition_bytes: bytes
    filter_values: tuple[str, ...] = ()
    written: bytes | None = None
    subpartitions: int = 0
    total_bytes: int | None = None
    range_bounds: tuple[bytes, ...] = ()
    file_size: int = 0
    file_checksum: int = 0

    @staticmethod
    def of(
        result: str, counts, breakdown: bool = True, filter_values: tuple[str, ...] = ()
    ) -> ProducedPartition:
        """The smallest form of ``counts`` (bytes per subpartition); ``breakdown`` False
        allows the total-only form."""
        counts = np.asarray(counts, dtype="<i8")
        written = np.flatnonzero(counts)
        return ProducedPartition.of_written(
            result, len(counts), written, counts[written], breakdown, filter_values
        )

    @staticmethod
    def of_written(
        result: str,
        subpartitions: int,
        written,
        lengths,
        breakdown: bool = True,
        filter_values: tuple[str, ...] = (),
    ) -> ProducedPartition:
        """The smallest form, from the subpartitions ``written`` to (in order) and their
        ``lengths``: O(written) unless the dense form is the smallest."""
        written = np.asarray(written)
        lengths = np.asarray(lengths, dtype="<i8")
        if len(written) <= subpartitions // 8:
            return ProducedPartition(
                result,
                lengths.tobytes(),
                filter_values,
                written.astype("<i4").tobytes(),
                subpartitions,
            )
        if not breakdown:
            return ProducedPartition.total_only(
                result, int(lengths.sum()), subpartitions, filter_values
            )
        dense = np.zeros(subpartitions, dtype="<i8")
        dense[written] = lengths
        return ProducedPartition(result, dense.tobytes(), filter_values)

    @staticmethod
    def total_only(
        result: str, total: int, subpartitions: int, filter_values: tuple[str, ...] = ()
    ) -> ProducedPartition:
        return ProducedPartition(result, b"", filter_values, None, subpartitions, total)

    @property
    def is_sparse(self) -> bool:
        return self.written is not None

    @property
    def has_breakdown(self) -> bool:
        return self.total_bytes is None

    @property
    def num_subpartitions(self) -> int:
        return (
            self.subpartitions
            if self.subpartitions or self.is_sparse
            else len(self.subpartition_bytes) // 8
        )

    def written_indices(self) -> np.ndarray:
        """The subpartitions a sparse report lists."""
        return np.frombuffer(self.written or b"", dtype="<i4")

    def values(self) -> np.ndarray:
        """The bytes of the listed subpartitions (sparse) or of every one (dense)."""
        return np.frombuffer(self.subpartition_bytes, dtype="<i8")

    def counts(self) -> np.ndarray:
        """Every subpartition's bytes (a total-only report has none to give)."""
        if not self.has_breakdown:
            raise ValueError(f"the report of {self.result!r} carries only its total")
        if not self.is_sparse:
            return self.values()
        dense = np.zeros(self.num_subpartitions, dtype=np.int64)
        dense[self.written_indices()] = self.values()
        return dense

    @property
    def total(self) -> int:
        return self.total_bytes if self.total_bytes is not None else int(self.values().sum())


@message
class TaskMetrics:
    """What a task did, for people: rows and bytes in and out (``bytes_in_remote`` of them
    fetched from TaskManagers on other nodes, in ``ranges_read`` reads of a subpartition range
    of a partition), and how long it ran."""

    rows_in: int = 0
    rows_out: int = 0
    bytes_in: int = 0
    duration_ms: int = 0
    bytes_in_remote: int = 0
    ranges_read: int = 0
    phases: tuple[tuple[str, int], ...] = ()  # where the duration went, ms (taskmanager.timing)
    queued_ms: int = 0  # how long it waited for its slot before it started
    spark_jobs: int = 0  # Spark jobs its PySpark functions ran (chained ones share a query)


@message
class TaskFinished:
    vertex: str
    subtask: int
    attempt: int
    produced: tuple[ProducedPartition, ...] = ()
    metrics: TaskMetrics | None = None


@message
class TaskFailed:
    """A task failed. ``lost_partition`` names an input it could not read (missing, truncated,
    corrupt): that partition's producer must run again; the task's own code is not at fault.
    ``error_types``: the qualified class names of the exception and of those it was raised
    from, so the JobManager can tell a failure no restart can fix."""

    vertex: str
    subtask: int
    attempt: int
    error: str
    time_ms: int
    lost_partition: PartitionId | None = None
    error_types: tuple[str, ...] = ()


@message
class TaskCanceled:
    vertex: str
    subtask: int
    attempt: int


@message
class TimerFired:
    """A timer the core started fired, at ``time_ms`` (the shell's clock)."""

    token: int
    time_ms: int = 0


@message
class JobCancelRequested:
    reason: str


@message
class TaskManagerReport:
    """What one TaskManager told a JobManager taking over the job: the job's tasks it still runs
    or has queued, how those it was asked about ended (their final reports, which may never have
    reached the JobManager that died), and the partitions it holds, as (partition, attempt)."""

    task_manager: str
    slots: int
    node: str
    shuffle_root: str
    running: tuple[tuple[str, int, int], ...]
    ended: tuple[TaskFinished | TaskFailed | TaskCanceled, ...]
    partitions: tuple[tuple[PartitionId, int], ...]


@message
class JobManagerRecovered:
    """A new JobManager took over the job after the previous one died, and these TaskManagers
    answered it; every other TaskManager the job had is lost. Everything the previous
    JobManager had on its way (TaskManager requests, timers, decisions being computed) died
    with it."""

    time_ms: int
    task_managers: tuple[TaskManagerReport, ...]


@message
class JobEnded:
    """The JobManager finished ending the job (its sinks committed, or aborted): the final
    status a client sees. Until this is in the log, a new JobManager ends the job again."""

    status: JobStatus
    cause: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", JobStatus(self.status))  # msgpack carries its name


@message
class JobArchived:
    """The ended job was copied to its archive (``archive``, a URL) for ``tidal history``, or
    could not be (``error``; the job's end stands). Until this is in the log, a new
    JobManager archives the job again."""

    archive: str
    error: str


@message
class Explanation:
    """Why a vertex got its parallelism: the numbers and every adjustment, in words too."""

    text: str
    input_bytes: int = 0
    broadcast_bytes: int = 0
    raw: float = 0.0
    clamps: tuple[str, ...] = ()


@message
class VertexParallelismDecided:
    """The adaptive scheduler's decision for one job vertex, recorded so a replay applies it
    rather than deciding again, and so a user can ask why. ``joins``: how the join the vertex
    runs was decided from its inputs' bytes (broadcast or shuffled), if it runs one the
    scheduler may decide; defaulted, so logs written before it decode. ``range_bounds``: for
    a vertex reading a range-partitioned input, the parallelism - 1 keys (encoded, ascending)
    between its tasks' key ranges: task k keeps the keys in [bounds[k-1], bounds[k])."""

    vertex: str
    parallelism: int
    input_infos: tuple[tuple[str, object], ...]
    explanation: Explanation
    joins: tuple[JoinDecision, ...] = ()
    range_bounds: tuple[bytes, ...] = ()


@message
class JoinChained:
    """From here on, join ``decision.join``'s vertex ``consumer`` runs in the tasks of
    ``producer`` (its other side's producer, not started yet), as the one chained vertex
    ``vertex``: the side ``decision.side`` was small once its producers finished, so it is
    broadcast to the producer's tasks and the producer's rows are joined as they are made,
    never written (``jobmanager.model.join_chains``). The chained vertex's own decision (its
    parallelism, the producer's, and its reads) follows as a ``VertexParallelismDecided``."""

    producer: str
    consumer: str
    vertex: str
    decision: JoinDecision


@message
class SourceParallelismInferred:
    """A source vertex's inferred parallelism; ``detail`` says what each source saw (files,
    bytes, splits, what listing them cost). ``split_keys``: per source, the blob of the splits
    its listing found ("" for a source that lists nothing), so tasks read them instead of
    listing again. ``read_bytes``: what the listed splits hold (0 where nothing was listed),
    which orders the job's first tasks, largest first."""

    vertex: str
    parallelism: int
    detail: str
    split_keys: tuple[str, ...] = ()
    read_bytes: int = 0


@message
class SourceInferenceFailed:
    vertex: str
    error: str


Event = (
    JobStarted
    | TaskManagerRegistered
    | TaskManagerRequestFailed
    | TaskManagerLost
    | TaskRunning
    | TaskFinished
    | TaskFailed
    | TaskCanceled
    | TimerFired
    | JobCancelRequested
    | VertexParallelismDecided
    | SourceParallelismInferred
    | SourceInferenceFailed
    | JobManagerRecovered
    | JobEnded
    | JobArchived
)
