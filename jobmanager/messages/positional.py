"""The field names, in order, of every message as Tidal encoded them by position, before
event-log format version 1: a message was ``[name, *values]`` (msgpack extension 1), its names
nowhere on the wire. A log or snapshot written then is read through this table, by name, so a
message that has gained a field with a default since, or lost one, still reads; a message
with more values than its names here was written by code this table does not know, and is
refused rather than misread.

Frozen as of commit b6c7503 (``tests/jobmanager/golden/logs/v0`` was written by it): never
edit it to follow the classes.
"""

from __future__ import annotations

__all__ = ["V0_FIELDS"]

# each message's field names, in order, as namedtuple takes them: one string, split on spaces
_V0_FIELD_NAMES: dict[str, str] = {
    "BroadcastInputInfo": "num_partitions consumers",
    "CancelTask": "vertex subtask attempt task_manager",
    "DecideParallelism": "vertex",
    "DeployTask": "vertex subtask attempt task_manager slot",
    "DynamicFilteringInfo": "column values",
    "ExecutionVertexInputInfo": "slices",
    "Explanation": "text input_bytes broadcast_bytes raw clamps",
    "ExplicitInputInfo": "infos",
    "FileSplit": "path format start length row_groups partition_values",
    "ForwardInputInfo": "partitions subpartitions",
    "IndexRange": "start end",
    "InferSourceParallelism": "vertex context",
    "InferenceContext": "parallelism_upper_bound data_volume_per_task dynamic_filtering slots",
    "InputGateDeploymentDescriptor": "result slices descriptors partitions",
    "InputSlice": "partitions subpartitions",
    "JobCancelRequested": "reason",
    "JobEnded": "status cause",
    "JobManagerRecovered": "time_ms task_managers",
    "JobStarted": "",
    "JobSubmitted": (
        "name graph_key config submitted_at cluster_cpus code_keys sink_paths chains inferred "
        "result_paths"
    ),
    "JobTerminated": "status cause",
    "PartitionId": "result index",
    "ProducedPartition": (
        "result subpartition_bytes filter_values written subpartitions total_bytes"
    ),
    "ReleasePartitions": "task_manager partitions attempts",
    "RequestTaskManagers": "count slots_each",
    "ResultPartitionDeploymentDescriptor": (
        "result index num_subpartitions partitioner keys filter_column breakdown"
    ),
    "ShuffleDescriptors": "group version inline blob_key",
    "SourceInferenceFailed": "vertex error",
    "SourceParallelismInferred": "vertex parallelism detail split_keys read_bytes",
    "StartTimer": "token delay_ms",
    "StateSnapshot": (
        "events_applied status failure_cause ended recoveries task_managers growth_steps "
        "parallelisms vertex_states attempts slots_held locations partitions result_bytes "
        "strategy growth backoff restarts slot_pool requests active speculation"
    ),
    "StoredSnapshot": "next_segment state ledger",
    "SubpartitionRangesInputInfo": "num_partitions cuts",
    "TaskCanceled": "vertex subtask attempt",
    "TaskDeploymentDescriptor": (
        "job_id vertex subtask attempt parallelism inputs outputs code_key split_target_bytes "
        "source_filters source_splits"
    ),
    "TaskFailed": "vertex subtask attempt error time_ms lost_partition error_types",
    "TaskFinished": "vertex subtask attempt produced metrics",
    "TaskManagerLost": "task_manager cause time_ms",
    "TaskManagerRegistered": "task_manager slots node shuffle_root",
    "TaskManagerReport": "task_manager slots node shuffle_root running ended partitions",
    "TaskManagerRequestFailed": "slots reason time_ms",
    "TaskMetrics": (
        "rows_in rows_out bytes_in duration_ms bytes_in_remote ranges_read phases queued_ms "
        "spark_jobs"
    ),
    "TaskRunning": "vertex subtask attempt time_ms",
    "TimerFired": "token time_ms",
    "VertexParallelismDecided": "vertex parallelism input_infos explanation",
}

V0_FIELDS: dict[str, tuple[str, ...]] = {
    name: tuple(names.split()) for name, names in _V0_FIELD_NAMES.items()
}
