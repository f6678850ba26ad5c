"""Where a job's records go and how long they stay: its store and event log, its archive, and the
result read back into the client."""

from __future__ import annotations

from jobmanager.model.config.option import (
    Option,
    _positive_duration,
    _positive_memory,
    _retained_jobs,
)

__all__ = [
    "ARCHIVE_DIR",
    "EVENT_FLUSH_INTERVAL",
    "EVENT_WRITE_BUFFER_SIZE",
    "JOBSTORE_DIR",
    "JOBSTORE_EXPIRATION_TIME",
    "RESULT_MAX_SIZE",
    "RETAINED_JOBS",
]

JOBSTORE_DIR = Option(
    "jobstore.dir",
    str,
    "",
    "Where each job's store lives (its event log, snapshots, graph and blobs): a "
    "local directory or any fsspec URL a restarted JobManager can reach. Empty: "
    "$TIDAL_HOME/jobs, or ~/.tidal/jobs.",
)

EVENT_WRITE_BUFFER_SIZE = Option(
    "job-event.store.write-buffer.size",
    _positive_memory,
    1 << 20,
    "Events that start no work (a task reporting it runs) are written to the job's "
    "event log in batches of this size ...",
)

EVENT_FLUSH_INTERVAL = Option(
    "job-event.store.write-buffer.flush-interval",
    _positive_duration,
    1000,
    "... or at least this often. An event that leads to work (a deployment, a "
    "cancellation, a decision) is written before the work starts.",
)

JOBSTORE_EXPIRATION_TIME = Option(
    "jobstore.expiration-time",
    _positive_duration,
    600_000,
    "How long an ended job's store and work directory are kept (status, logs and "
    "recovery read them); its archive stays.",
)

ARCHIVE_DIR = Option(
    "jobmanager.archive.fs.dir",
    str,
    "",
    "Where an ended job's archive goes (its event log, graph, final status and "
    "logs), for tidal history, explain and report: a local directory or any fsspec "
    "URL. Empty: $TIDAL_HOME/history, or ~/.tidal/history. (Flink: no archive "
    "unless set.)",
)

RESULT_MAX_SIZE = Option(
    "client.result.max-size",
    _positive_memory,
    256 << 20,
    "The largest query result JobResult.to_arrow() reads back into the client, "
    "measured before reading from its Parquet files' uncompressed row groups; a "
    "larger one is an error saying to write it instead (Client.sql(output=...), "
    "tidal sql -o).",
)

RETAINED_JOBS = Option(
    "historyserver.archive.retained-jobs",
    _retained_jobs,
    1000,
    "How many archives are kept, the newest; -1 keeps all. (Flink: -1.)",
)
