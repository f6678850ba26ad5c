"""Tidal's exceptions.

Every error names what is wrong and where: the vertex, the edge, the option key, the partition.

    TidalError
    ├── JobGraphError               the submitted job graph is invalid
    │   ├── CyclicGraphError        ... it has a cycle (the message walks it)
    │   ├── InvalidParallelismError ... a parallelism or max parallelism is out of range
    │   ├── InvalidEdgeError        ... an edge cannot be built as declared
    │   └── DuplicateNameError      ... two vertices share a name
    ├── ConfigurationError          an unknown option key or a bad value (names the key)
    │   └── ConfigurationFileError  ... or a YAML file of options that is missing or broken
    ├── JobFileError                a job file (``tidal run JOB.py``) that cannot give a job
    ├── NoResultError               a job has no result to read back (not a query, failed, or
    │                               written to ``output``: the message says where it went)
    ├── ResultTooLargeError         a query's result is over ``client.result.max-size``
    ├── SqlError                    a query that cannot be planned; names the place in the query
    │   ├── SqlSyntaxError          ... it does not parse (line, column and the token)
    │   ├── UnknownTableError       ... it reads a table nobody named (lists the known ones)
    │   ├── UnknownColumnError      ... a column no table in scope has, or several have
    │   ├── SqlTypeError            ... an expression Spark's analysis would refuse
    │   ├── UnsupportedSqlError     ... a construct the planner does not support yet
    │   └── TableError              ... a table whose files cannot describe it (no data files)
    ├── NoResourceAvailableError    a region needs more slots than the cluster may ever have
    ├── JobManagerLost              a job's JobManager is gone and nothing can take the job over
    ├── JobStoreError               a job's store is missing, unreachable or cannot be written
    │   └── EventLogCorrupted       ... a record in the middle of its event log is broken
    ├── NonRecoverableError         a task failure no restart can fix: the job fails at once
    │                               (raise it, or a subclass, from a function to say so)
    └── InvalidTransition           the scheduling core was asked to do something impossible;
                                    carries the story of the transitions that led there
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "ConfigurationFileError",
    "CyclicGraphError",
    "DuplicateNameError",
    "InvalidEdgeError",
    "InvalidParallelismError",
    "EventLogCorrupted",
    "InvalidTransition",
    "JobFileError",
    "SqlError",
    "SqlSyntaxError",
    "SqlTypeError",
    "TableError",
    "UnknownColumnError",
    "UnknownTableError",
    "UnsupportedSqlError",
    "JobGraphError",
    "JobManagerLost",
    "JobStoreError",
    "NoResourceAvailableError",
    "NoResultError",
    "ResultTooLargeError",
    "NonRecoverableError",
    "TidalError",
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


class NoResourceAvailableError(TidalError):
    pass


class JobManagerLost(TidalError):
    pass


class NonRecoverableError(TidalError):
    """A task's failure that would come back on every attempt (bad code, not bad luck): its job
    fails on the first one, without restarts, like Flink's ``SuppressRestartsException``."""


class JobStoreError(TidalError):
    pass


class EventLogCorrupted(JobStoreError):
    pass


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
