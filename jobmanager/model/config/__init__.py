"""Configuration options, under Flink's keys where Flink has one.

Values come from the defaults, then a YAML file, then ``-D key=value`` pairs or the client call.
An unknown key or a bad value is an error that names the key.

A configuration crosses a process (to the ResourceManager that leases a job its TaskManagers,
to a TaskManager it starts) as its msgpack form, ``to_bytes``, and is parsed there by
``from_bytes``: every reader has the same options with the same defaults, none its own copy.

The options are declared by area (``scheduling``, ``recovery``, ``cluster``, ``stores``,
``optimizer``), each a constant that code reads as ``config[OPTION.key]``, never by the key's
text; ``registry.OPTIONS`` lists them all by key.
"""

from __future__ import annotations

from jobmanager.model.config.cluster import (
    BLOB_OFFLOAD_MINSIZE,
    HEARTBEAT_INTERVAL,
    HEARTBEAT_TIMEOUT,
    NUMBER_OF_TASK_SLOTS,
    SLOT_REQUEST_TIMEOUT,
    SPARK_DRIVER_MEMORY,
    TASKMANAGER_IDLE_TIMEOUT,
    TASKMANAGER_NODE_ID,
    TMP_DIRS,
)
from jobmanager.model.config.configuration import (
    Configuration,
)
from jobmanager.model.config.optimizer import (
    ADAPTIVE_BROADCAST_JOIN_STRATEGY,
    AUTO,
    BROADCAST_THRESHOLD,
    NONE,
    READ_WHOLE_THRESHOLD,
    RULES_DISABLED,
    RUNTIME_ONLY,
    broadcast_join_strategy,
    joins_decided_at_run_time,
    static_broadcast_threshold,
)
from jobmanager.model.config.option import (
    Option,
    parse_duration_ms,
    parse_memory_size,
)
from jobmanager.model.config.recovery import (
    EXPONENTIAL_ATTEMPTS,
    EXPONENTIAL_BACKOFF_MULTIPLIER,
    EXPONENTIAL_INITIAL_BACKOFF,
    EXPONENTIAL_JITTER_FACTOR,
    EXPONENTIAL_MAX_BACKOFF,
    EXPONENTIAL_RESET_BACKOFF_THRESHOLD,
    FIXED_DELAY_ATTEMPTS,
    FIXED_DELAY_DELAY,
    JOB_RECOVERY_ENABLED,
    NON_RECOVERABLE_EXCEPTIONS,
    PREVIOUS_WORKER_RECOVERY_TIMEOUT,
    RESTART_STRATEGY,
    SNAPSHOT_MIN_PAUSE,
)
from jobmanager.model.config.registry import (
    OPTIONS,
)
from jobmanager.model.config.scheduling import (
    AVG_DATA_VOLUME_PER_TASK,
    BLOCK_SLOW_NODE_DURATION,
    DEFAULT_SOURCE_PARALLELISM,
    FLINK_KEYS,
    MAX_PARALLELISM,
    MAX_SLOTS,
    MIN_DATA_VOLUME_PER_TASK,
    MIN_PARALLELISM,
    OPERATOR_CHAINING,
    PARALLELISM_DEFAULT,
    SCHEDULER,
    SKEWED_FACTOR,
    SKEWED_JOIN_STRATEGY,
    SKEWED_THRESHOLD,
    SLOT_PREFETCH,
    SLOW_TASK_BASELINE_LOWER_BOUND,
    SLOW_TASK_BASELINE_MULTIPLIER,
    SLOW_TASK_BASELINE_RATIO,
    SLOW_TASK_CHECK_INTERVAL,
    SOURCE_DATA_VOLUME_PER_TASK,
    SPECULATION_ENABLED,
    SPECULATIVE_MAX_ATTEMPTS,
)
from jobmanager.model.config.stores import (
    ARCHIVE_DIR,
    EVENT_FLUSH_INTERVAL,
    EVENT_WRITE_BUFFER_SIZE,
    JOBSTORE_DIR,
    JOBSTORE_EXPIRATION_TIME,
    RESULT_MAX_SIZE,
    RETAINED_JOBS,
)

__all__ = [
    "ADAPTIVE_BROADCAST_JOIN_STRATEGY",
    "ARCHIVE_DIR",
    "AUTO",
    "AVG_DATA_VOLUME_PER_TASK",
    "BLOB_OFFLOAD_MINSIZE",
    "BLOCK_SLOW_NODE_DURATION",
    "BROADCAST_THRESHOLD",
    "Configuration",
    "DEFAULT_SOURCE_PARALLELISM",
    "EVENT_FLUSH_INTERVAL",
    "EVENT_WRITE_BUFFER_SIZE",
    "EXPONENTIAL_ATTEMPTS",
    "EXPONENTIAL_BACKOFF_MULTIPLIER",
    "EXPONENTIAL_INITIAL_BACKOFF",
    "EXPONENTIAL_JITTER_FACTOR",
    "EXPONENTIAL_MAX_BACKOFF",
    "EXPONENTIAL_RESET_BACKOFF_THRESHOLD",
    "FIXED_DELAY_ATTEMPTS",
    "FIXED_DELAY_DELAY",
    "FLINK_KEYS",
    "HEARTBEAT_INTERVAL",
    "HEARTBEAT_TIMEOUT",
    "JOBSTORE_DIR",
    "JOBSTORE_EXPIRATION_TIME",
    "JOB_RECOVERY_ENABLED",
    "MAX_PARALLELISM",
    "MAX_SLOTS",
    "MIN_DATA_VOLUME_PER_TASK",
    "MIN_PARALLELISM",
    "NONE",
    "NON_RECOVERABLE_EXCEPTIONS",
    "NUMBER_OF_TASK_SLOTS",
    "OPERATOR_CHAINING",
    "OPTIONS",
    "Option",
    "PARALLELISM_DEFAULT",
    "PREVIOUS_WORKER_RECOVERY_TIMEOUT",
    "READ_WHOLE_THRESHOLD",
    "RESTART_STRATEGY",
    "RESULT_MAX_SIZE",
    "RETAINED_JOBS",
    "RULES_DISABLED",
    "RUNTIME_ONLY",
    "SCHEDULER",
    "SKEWED_FACTOR",
    "SKEWED_JOIN_STRATEGY",
    "SKEWED_THRESHOLD",
    "SLOT_PREFETCH",
    "SLOT_REQUEST_TIMEOUT",
    "SLOW_TASK_BASELINE_LOWER_BOUND",
    "SLOW_TASK_BASELINE_MULTIPLIER",
    "SLOW_TASK_BASELINE_RATIO",
    "SLOW_TASK_CHECK_INTERVAL",
    "SNAPSHOT_MIN_PAUSE",
    "SOURCE_DATA_VOLUME_PER_TASK",
    "SPARK_DRIVER_MEMORY",
    "SPECULATION_ENABLED",
    "SPECULATIVE_MAX_ATTEMPTS",
    "TASKMANAGER_IDLE_TIMEOUT",
    "TASKMANAGER_NODE_ID",
    "TMP_DIRS",
    "broadcast_join_strategy",
    "joins_decided_at_run_time",
    "parse_duration_ms",
    "parse_memory_size",
    "static_broadcast_threshold",
]
