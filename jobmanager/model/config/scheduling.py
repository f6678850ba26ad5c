"""The scheduler's options: parallelism, the adaptive scheduler's sizing and skew, slots,
chaining and speculation."""

from __future__ import annotations

from jobmanager.model.config.option import (
    Option,
    _bool,
    _choice,
    _float,
    _int,
    _positive_duration,
    _positive_memory,
)

__all__ = [
    "AVG_DATA_VOLUME_PER_TASK",
    "BLOCK_SLOW_NODE_DURATION",
    "DEFAULT_SOURCE_PARALLELISM",
    "FLINK_KEYS",
    "MAX_PARALLELISM",
    "MAX_SLOTS",
    "MIN_DATA_VOLUME_PER_TASK",
    "MIN_PARALLELISM",
    "OPERATOR_CHAINING",
    "PARALLELISM_DEFAULT",
    "SCHEDULER",
    "SKEWED_FACTOR",
    "SKEWED_JOIN_STRATEGY",
    "SKEWED_THRESHOLD",
    "SLOT_PREFETCH",
    "SLOW_TASK_BASELINE_LOWER_BOUND",
    "SLOW_TASK_BASELINE_MULTIPLIER",
    "SLOW_TASK_BASELINE_RATIO",
    "SLOW_TASK_CHECK_INTERVAL",
    "SOURCE_DATA_VOLUME_PER_TASK",
    "SPECULATION_ENABLED",
    "SPECULATIVE_MAX_ATTEMPTS",
]

_ADAPTIVE = "execution.batch.adaptive.auto-parallelism."
_SKEW = "execution.batch.adaptive.skewed-join-optimization."

PARALLELISM_DEFAULT = Option(
    "parallelism.default",
    _int(1),
    1,
    "Parallelism of a vertex that sets none when the job runs without the adaptive "
    "scheduler; the last fallback for a source's parallelism upper bound.",
)

SCHEDULER = Option(
    "jobmanager.core.scheduler",
    _choice("Default", "AdaptiveBatch"),
    None,
    "Default: every parallelism is fixed before the job starts. AdaptiveBatch: "
    "decided from the bytes inputs produced. Unset: AdaptiveBatch when some vertex "
    "leaves its parallelism unset.",
)

MIN_PARALLELISM = Option(
    _ADAPTIVE + "min-parallelism",
    _int(1),
    1,
    "Lower bound of a parallelism the adaptive scheduler decides.",
)

MAX_PARALLELISM = Option(
    _ADAPTIVE + "max-parallelism",
    _int(1),
    128,
    "Upper bound of a decided parallelism; also how many subpartitions a producer "
    "writes for a consumer whose parallelism is not decided yet.",
)

AVG_DATA_VOLUME_PER_TASK = Option(
    _ADAPTIVE + "avg-data-volume-per-task",
    _positive_memory,
    64 << 20,
    "Bytes of input each task should get (Spark's "
    "spark.sql.adaptive.advisoryPartitionSizeInBytes, 64 MiB: a Tidal task is a "
    "Spark query of its own, 100 to 200 ms before its first row, so smaller tasks "
    "spend more of their time starting).",
)

MIN_DATA_VOLUME_PER_TASK = Option(
    _ADAPTIVE + "min-data-volume-per-task",
    _positive_memory,
    16 << 20,
    "Spread a vertex over the job's slots: where its input fills fewer tasks "
    "than the job's slots at avg-data-volume-per-task, its tasks get "
    "input / slots bytes each, but at least this many (Spark's "
    "spark.sql.adaptive.coalescePartitions.parallelismFirst with minPartitionSize, "
    "1 MiB; Tidal 16 MiB, a task costing more to start than a partition). Unset: every "
    "task gets avg-data-volume-per-task, as in Flink.",
)

SOURCE_DATA_VOLUME_PER_TASK = Option(
    _ADAPTIVE + "source-data-volume-per-task",
    _positive_memory,
    128 << 20,
    "Bytes of its files' columns each task of a source should read (where unset and "
    "avg-data-volume-per-task is set, that). A task's "
    "Spark splits its own scan over its "
    "TaskManager's cores, so a source task may read as much as one Spark scan "
    "partition (spark.sql.files.maxPartitionBytes, 128 MiB).",
)

DEFAULT_SOURCE_PARALLELISM = Option(
    _ADAPTIVE + "default-source-parallelism",
    _int(1),
    None,
    "Upper bound of a source's inferred parallelism; unset falls back to "
    "max-parallelism, then parallelism.default.",
)

SKEWED_JOIN_STRATEGY = Option(
    _SKEW + "strategy",
    _choice("none", "auto", "forced"),
    "auto",
    "auto: cut skewed subpartitions of inputs marked splittable across consumers; "
    "a SQL join whose output its own task uses as hash-partitioned (an aggregate, "
    "window or join on its keys placed after it) is not cut. forced: the planner "
    "puts such an operator behind a hash exchange of its own, so the join is cut "
    "too (Flink's FORCED, planned before the run: the exchange is there whether or "
    "not skew appears). none: nothing is cut.",
)

SKEWED_FACTOR = Option(
    _SKEW + "skewed-factor",
    _float(1.0),
    4.0,
    "A subpartition is skewed above this many times the median ...",
)

SKEWED_THRESHOLD = Option(
    _SKEW + "skewed-threshold",
    _positive_memory,
    256 << 20,
    "... and above this many bytes.",
)

SLOT_PREFETCH = Option(
    "jobmanager.slot-prefetch",
    _int(0),
    4,
    "How many single-task regions may wait in a busy slot behind its running task, "
    "hiding the round trip to the JobManager between short tasks; 0 turns it off.",
)

MAX_SLOTS = Option(
    "slotmanager.number-of-slots.max",
    _int(1),
    None,
    "Most slots the job's TaskManagers may have in all. Unset: the cluster's CPUs "
    "when the job was submitted (kept in the job's store, so a recovered job plans "
    "with the same number).",
)

OPERATOR_CHAINING = Option(
    "pipeline.operator-chaining.enabled",
    _bool,
    True,
    "Run vertices joined by a FORWARD edge, one consumer to one producer, as one "
    "task: one Spark query, no partition file between them.",
)

SPECULATION_ENABLED = Option(
    "execution.batch.speculative.enabled",
    _bool,
    False,
    "Run another attempt of a task much slower than its finished peers, in a slot "
    "on another TaskManager; the first to finish wins, the others are cancelled.",
)

SPECULATIVE_MAX_ATTEMPTS = Option(
    "execution.batch.speculative.max-concurrent-executions",
    _int(2),
    2,
    "Most attempts of one task running at once, the first one included.",
)

BLOCK_SLOW_NODE_DURATION = Option(
    "execution.batch.speculative.block-slow-node-duration",
    _positive_duration,
    60_000,
    "A TaskManager found running a slow task takes no speculative attempt for this long.",
)

SLOW_TASK_CHECK_INTERVAL = Option(
    "slow-task-detector.check-interval",
    _positive_duration,
    1000,
    "How often running tasks are checked for slowness (with speculation on).",
)

SLOW_TASK_BASELINE_LOWER_BOUND = Option(
    "slow-task-detector.execution-time.baseline-lower-bound",
    _positive_duration,
    60_000,
    "A task is never slow before it ran this long ...",
)

SLOW_TASK_BASELINE_RATIO = Option(
    "slow-task-detector.execution-time.baseline-ratio",
    _float(0.0, 1.0),
    0.75,
    "... nor before this share of its vertex's tasks finished ...",
)

SLOW_TASK_BASELINE_MULTIPLIER = Option(
    "slow-task-detector.execution-time.baseline-multiplier",
    _float(1.0),
    1.5,
    "... nor before it ran this many times the median of its finished peers.",
)

# Flink's keys for an option Tidal names otherwise: either may be given, read under Tidal's.
# Flink's table planner reads the skewed join options as table.optimizer.*; Tidal's runtime
# key came first and stays, and a Flink configuration carries over as it is.
FLINK_KEYS = {
    "table.optimizer.skewed-join-optimization." + option.key.removeprefix(_SKEW): option.key
    for option in (SKEWED_JOIN_STRATEGY, SKEWED_FACTOR, SKEWED_THRESHOLD)
}
