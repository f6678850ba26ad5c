"""The TaskManagers' options: their slots, memory, node and scratch space, how they are watched,
kept and waited for, and how deployments reach them."""

from __future__ import annotations

from jobmanager.model.config.option import Option, _int, _positive_duration, _positive_memory

__all__ = [
    "BLOB_OFFLOAD_MINSIZE",
    "HEARTBEAT_INTERVAL",
    "HEARTBEAT_TIMEOUT",
    "NUMBER_OF_TASK_SLOTS",
    "SLOT_REQUEST_TIMEOUT",
    "SPARK_DRIVER_MEMORY",
    "TASKMANAGER_IDLE_TIMEOUT",
    "TASKMANAGER_NODE_ID",
    "TMP_DIRS",
]

BLOB_OFFLOAD_MINSIZE = Option(
    "blob.offload.minsize",
    _positive_memory,
    1 << 20,
    "Shuffle descriptors of a consumed partition group at least this large travel "
    "through the blob store; smaller ones inline in the deployment.",
)

NUMBER_OF_TASK_SLOTS = Option(
    "taskmanager.numberOfTaskSlots",
    _int(1),
    2,
    "Slots per TaskManager; each runs one task at a time. (Flink: 1; Tidal: 2, "
    "because every TaskManager process carries its own Spark JVM.)",
)

SPARK_DRIVER_MEMORY = Option(
    "taskmanager.memory.spark-driver",
    _positive_memory,
    None,
    "JVM heap of the SparkSession in each TaskManager. Unset: a quarter of its "
    "node's memory, shared by the TaskManagers the node's CPUs hold (its slots' "
    "share), between 1 GiB and 16 GiB; as Spark sizes executors from the "
    "machine, the rest left to Python, Arrow, Ray's object store and the page "
    "cache.",
)

HEARTBEAT_INTERVAL = Option(
    "heartbeat.interval",
    _positive_duration,
    1000,
    "How often the JobManager checks that each TaskManager is alive.",
)

HEARTBEAT_TIMEOUT = Option(
    "heartbeat.timeout",
    _positive_duration,
    30_000,
    "A TaskManager that does not answer for this long is lost.",
)

TASKMANAGER_IDLE_TIMEOUT = Option(
    "resourcemanager.taskmanager-timeout",
    _positive_duration,
    300_000,
    "An idle TaskManager is kept this long for the next job, then stopped; sooner "
    "when a job of another shape needs the CPUs it holds. (Flink: 30 s; Tidal: 5 "
    "min, Ray's autoscaler's idle node timeout, because every TaskManager carries a "
    "Spark JVM whose start and warm-up cost the next job seconds.)",
)

SLOT_REQUEST_TIMEOUT = Option(
    "slot.request.timeout",
    _positive_duration,
    300_000,
    "A TaskManager the cluster cannot start within this time is given up.",
)

TASKMANAGER_NODE_ID = Option(
    "taskmanager.node-id",
    str,
    "",
    "The node a TaskManager says it is on; empty means Ray's node id. Consumers on "
    "the same node read its partition files directly; tests set two ids to force "
    "reads through the network.",
)

TMP_DIRS = Option(
    "io.tmp.dirs",
    str,
    "",
    "Where TaskManagers keep the job's partition files and their scratch space "
    "(Spark's temporary files; a TaskManager started elsewhere is not reused for "
    "the job); empty means the system's temporary directory.",
)
