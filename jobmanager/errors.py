"""Tidal's exceptions: every exception class Tidal defines, as one tree.

Every error names what is wrong and where: the vertex, the edge, the option key, the partition.
Catch ``TidalError`` for all of them. Those a user's own mistake raises also derive from the
built-in a Python user would catch (``ValueError``, ``TypeError``), as httpx's do. A class
defined outside this module names its module in brackets; ``tests/test_errors.py`` checks the
tree against the classes.

    TidalError
    ├── JobGraphError               the submitted job graph is invalid (also a ValueError)
    │   ├── CyclicGraphError        ... it has a cycle (the message walks it)
    │   ├── InvalidParallelismError ... a parallelism or max parallelism is out of range
    │   ├── InvalidEdgeError        ... an edge or partitioner cannot be built as declared
    │   └── DuplicateNameError      ... two vertices share a name
    ├── ConfigurationError          an unknown option key or a bad value (names the key; also a
    │   │                           ValueError)
    │   └── ConfigurationFileError  ... or a YAML file of options that is missing or broken
    ├── JobFileError                a job file (``tidal run JOB.py``) that cannot give a job
    ├── UnsupportedCallError        a PySpark call Tidal cannot run (an RDD, a Python UDF,
    │                               streaming), said at the script's line (also a
    │                               NotImplementedError) [jobmanager.client.dataframe.unsupported]
    ├── TidalAnalysisException      a DataFrame naming a column or table that is not there
    │                               (also PySpark's AnalysisException)
    │                               [jobmanager.client.dataframe.jobs]
    ├── ActionFailedError           a DataFrame action whose job did not finish (also a
    │                               RuntimeError) [jobmanager.client.dataframe.jobs]
    ├── ClusterConnectionError      the Ray cluster cannot be joined or started
    │                               [jobmanager.client.connect]
    ├── NoResultError               a job has no result to read back (not a query, failed, or
    │                               written to ``output``: the message says where it went)
    ├── ResultTooLargeError         a query's result is over ``client.result.max-size``
    ├── SqlError                    a query that cannot be planned; names the place in the query
    │   │                           (also a ValueError)
    │   ├── SqlSyntaxError          ... it does not parse (line, column and the token)
    │   ├── UnknownTableError       ... it reads a table nobody named (lists the known ones)
    │   ├── UnknownColumnError      ... a column no table in scope has, or several have
    │   ├── SqlTypeError            ... an expression Spark's analysis would refuse
    │   ├── UnsupportedSqlError     ... a construct the planner does not support yet
    │   └── TableError              ... a table whose files cannot describe it (no data files)
    ├── PlannerBug                  the planner failed on a query it should take: a bug in
    │                               Tidal, not the user's mistake; names the part of the query
    ├── SourceError                 a source's files cannot be listed or read; names the path
    │                               [jobmanager.model.splits]
    ├── SinkError                   a sink's target exists, or its output cannot be committed
    │                               [jobmanager.runtime.sinks]
    ├── NoResourceAvailableError    a region needs more slots than the cluster may ever have
    ├── JobManagerLost              a job's JobManager is gone and nothing can take the job over
    ├── UnknownJobError             no job of that id on the cluster or in its stores (also a
    │                               LookupError)
    ├── JobStoreError               a job's store is missing, unreachable or cannot be written
    │   ├── EventLogCorrupted       ... a record in the middle of its event log is broken
    │   ├── EventLogVersionError    ... its event log is of a format newer than this Tidal reads
    │   └── SnapshotVersionError    ... its snapshot is of a format newer than this Tidal reads
    ├── NonRecoverableError         a task failure no restart can fix: the job fails at once
    │   │                           (raise it, or a subclass, from a function to say so)
    │   ├── UserOutputError         ... what a vertex's function returned cannot go on
    │   │   ├── OutputTypeError     ... ... not a DataFrame or Table, or a key column of a type
    │   │   │                       that cannot be hashed (also a TypeError)
    │   │   └── MissingColumnError  ... ... it lacks a column an edge partitions by (also a
    │   │                           ValueError)
    │   └── SqlRefused              ... Spark cannot analyse or parse a piece of a planned query
    │                               [taskmanager.sql]
    ├── JavaUnavailable             PySpark cannot start: no Java 17 or 21 [taskmanager.failures]
    ├── InvalidTransition           the scheduling core was asked to do something impossible;
    │                               carries the story of the transitions that led there
    │
    │   Met inside Tidal, seen by a user only as a task's or a job's cause:
    ├── TaskCancelled               a task stopped because it was asked to [taskmanager.failures]
    ├── InputLost                   a task's input partition cannot be read: its producer runs
    │                               again [taskmanager.failures]
    ├── PartitionError              a shuffle partition cannot be read; treat it as lost
    │   │                           [shuffle.errors]
    │   ├── PartitionNotFound       ... no file: released, deleted, or never written there
    │   ├── PartitionUnreachable    ... the TaskManager that holds it cannot be asked
    │   └── PartitionFileCorrupted  ... the file's bytes are not what was written
    │       ├── PartitionFileTruncated  ... ... cut short
    │       └── ChecksumMismatch        ... ... a checksum differs
    ├── BlobError                   a blob cannot be had [blob.errors]
    │   ├── BlobNotFound            ... no blob under this key
    │   └── BlobCorrupted           ... the stored bytes do not hash to their key
    └── DecodeError                 bytes that are not one LZ4-framed msgpack value (also a
                                    ValueError) [blob.codec]
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "ConfigurationFileError",
    "CyclicGraphError",
    "DuplicateNameError",
    "EventLogCorrupted",
    "EventLogVersionError",
    "InvalidEdgeError",
    "InvalidParallelismError",
    "InvalidTransition",
    "JobFileError",
    "JobGraphError",
    "JobManagerLost",
    "JobStoreError",
    "MissingColumnError",
    "NoResourceAvailableError",
    "NoResultError",
    "NonRecoverableError",
    "OutputTypeError",
    "PlannerBug",
    "ResultTooLargeError",
    "SnapshotVersionError",
    "SqlError",
    "SqlSyntaxError",
    "SqlTypeError",
    "TableError",
    "TidalError",
    "UnknownColumnError",
    "UnknownJobError",
    "UnknownTableError",
    "UnsupportedSqlError",
    "UserOutputError",
]


class TidalError(Exception):
    """Base of every error Tidal raises on purpose."""


class JobGraphError(TidalError, ValueError):
    """The job graph cannot run as declared."""


class CyclicGraphError(JobGraphError):
    def __init__(self, cycle: list[str]) -> None:
        self.cycle = cycle
        super().__init__("the job graph has a cycle: " + " -> ".join(cycle))


class InvalidParallelismError(JobGraphError):
    pass


class InvalidEdgeError(JobGraphError):
    pass


class DuplicateNameError(JobGraphError):
    pass


class ConfigurationError(TidalError, ValueError):
    def __init__(self, key: str, problem: str) -> None:
        self.key = key
        super().__init__(f"configuration option {key!r}: {problem}")


class ConfigurationFileError(ConfigurationError):
    """Names the file (and line) rather than an option key."""

    def __init__(self, where: str, problem: str) -> None:
        self.key = None
        self.where = where
        Exception.__init__(self, f"{where}: {problem}")


class JobFileError(TidalError):
    pass


class ResultTooLargeError(TidalError):
    """A query's result is larger than ``client.result.max-size``: write it instead."""


class NoResultError(TidalError):
    """There is no result to read back: the job failed or was cancelled, wrote its result to
    the ``output`` the user named, or is no query."""


class SqlError(TidalError, ValueError):
    """A query Tidal cannot plan. ``line`` and ``column`` (1-based) say where, when known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        self.line = line
        self.column = column
        where = f"line {line}, column {column}: " if line is not None and column is not None else ""
        super().__init__(where + message)


class SqlSyntaxError(SqlError):
    pass


class UnknownTableError(SqlError):
    pass


class UnknownColumnError(SqlError):
    pass


class SqlTypeError(SqlError):
    pass


class UnsupportedSqlError(SqlError):
    pass


class TableError(SqlError):
    pass


class PlannerBug(TidalError):
    pass


class NoResourceAvailableError(TidalError):
    pass


class JobManagerLost(TidalError):
    pass


class UnknownJobError(TidalError, LookupError):
    pass


class NonRecoverableError(TidalError):
    """A task's failure that would come back on every attempt (bad code, not bad luck): its job
    fails on the first one, without restarts, like Flink's ``SuppressRestartsException``."""


class UserOutputError(NonRecoverableError):
    """What a vertex's function returned cannot be partitioned or passed on; every attempt
    would return the same, so the job fails at its first."""


class OutputTypeError(UserOutputError, TypeError):
    pass


class MissingColumnError(UserOutputError, ValueError):
    pass


class JobStoreError(TidalError):
    pass


class EventLogCorrupted(JobStoreError):
    pass


class EventLogVersionError(JobStoreError):
    """A segment of the event log is of a format version newer than this Tidal reads (it was
    written by a later Tidal): refused, never guessed at. Names both versions."""


class SnapshotVersionError(JobStoreError):
    """A job store's snapshot is of a format version newer than this Tidal reads (it was
    written by a later Tidal): refused, never guessed at nor passed over. Names both versions."""


class InvalidTransition(TidalError):
    """A transition the task state machine does not allow; a bug in the core or a bad event."""

    def __init__(self, subject: str, current: str, wanted: str, story: list[str]) -> None:
        self.subject = subject
        self.current = current
        self.wanted = wanted
        self.story = story
        lines = "\n  ".join(story) if story else "(no earlier transitions recorded)"
        super().__init__(
            f"{subject}: cannot go from {current} to {wanted}; recent transitions:\n  {lines}"
        )
