"""What a vertex runs: a PySpark function, an Arrow function, a piece of Spark SQL, or a
sink (Parquet or CSV files).

A vertex's function receives one input per source it reads (in the order given) and then one
per incoming edge (in declared order): DataFrames for a PySpark function, ``pyarrow.Table``s for
an Arrow function. It returns one DataFrame or Table, which every outgoing edge partitions its
own way. A vertex with no operator passes its single input through. Arrow functions run with no
JVM at all.

User code travels with cloudpickle, as in Ray (``jobmanager.model.usercode``); everything else
Tidal sends is msgpack.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Callable

from jobmanager.errors import JobGraphError
from jobmanager.model import storage, usercode
from jobmanager.model.jobgraph import JobGraph, JobVertex
from jobmanager.model.joins import PlannedJoin
from jobmanager.model.sink import Sink
from jobmanager.model.sink_layout import FORMATS, attempt_name

__all__ = [
    "ArrowFunction",
    "ParquetSink",
    "ResultSink",
    "SparkFunction",
    "SqlOperator",
    "VertexCode",
    "arrow",
    "check_operators",
    "part_file",
    "serialize_vertex_code",
    "spark",
    "staging_dir",
]


@dataclass(frozen=True)
class SparkFunction:
    """``fn(*dataframes) -> DataFrame``, run in the TaskManager's SparkSession."""

    fn: Callable[..., Any]

    def __str__(self) -> str:
        return f"spark({getattr(self.fn, '__name__', 'function')})"


@dataclass(frozen=True)
class ArrowFunction:
    """``fn(*tables) -> pyarrow.Table``, run in plain Python."""

    fn: Callable[..., Any]

    def __str__(self) -> str:
        return f"arrow({getattr(self.fn, '__name__', 'function')})"


@dataclass(frozen=True, slots=True)
class SqlOperator:
    """A piece of a planned query (``jobmanager.planner``): Spark SQL over the vertex's inputs,
    each (its sources, then its incoming edges, in order) registered under ``views[i]`` as a
    temporary view of a session of its own, so two tasks sharing a JVM never see each other's
    names. ``origin`` is the part of the user's query the piece came from and ``joins`` what the
    planner decided of each join in it (``PlannedJoin``), both for explain only."""

    sql: str
    views: tuple[str, ...]
    origin: str = ""
    joins: tuple[PlannedJoin, ...] = ()

    def __setstate__(self, state) -> None:
        """Unpickle, also a piece pickled before ``joins`` existed (an archived graph)."""
        values = (*state, *("", "", (), ())[len(state) :])
        for name, value in zip(("sql", "views", "origin", "joins"), values):
            object.__setattr__(self, name, value)

    def built_on(self, sides: Mapping[str, str]) -> SqlOperator:
        """This piece with each join decided at run time (``sides``: join id -> the side the
        JobManager found smaller, broadcast or built on) hinted to build on that side in the
        task, where the planner's hint, from listed bytes, named the other."""
        sql = self.sql
        for join in self.joins:
            side = sides.get(join.join)
            if side is None or side == join.side or len(join.hints) != 2:
                continue
            planned = f"/*+ {join.hints[join.side == 'right']} */"
            if sql.count(planned) == 1:
                sql = sql.replace(planned, f"/*+ {join.hints[side == 'right']} */")
        return self if sql == self.sql else replace(self, sql=sql)

    def __str__(self) -> str:
        return "sql"


@dataclass(frozen=True)
class ParquetSink(Sink):
    """Writes its input as part files under ``path``, committed only when the whole job
    finishes: tasks write into a staging directory beside ``path``, and the JobManager moves the
    final attempts' files into place, so a failed or restarted job never leaves half a result.
    A relative local path is made absolute here, where the user means it: the commit happens in
    the JobManager's process, whose working directory is another.

    What Spark's ``df.write.mode(m).partitionBy(*cols).format(f)`` says, it says:

    - ``mode``: ``"error"`` (or ``"errorifexists"``, ``"default"``: the job refuses to start,
      or to commit, over an existing ``path``), ``"overwrite"`` (replaces it), ``"append"`` (adds
      this job's files beside what is there, into the partition directories they belong to),
      ``"ignore"`` (over an existing ``path`` the job's output is dropped; a caller that checks
      ``sinks.target_exists`` first need not run the job at all). ``overwrite=True``, the older
      spelling, means ``mode="overwrite"``; the two agree after construction.
    - ``partition_by``: columns whose values name ``<col>=<value>/`` directories, dropped
      from the files (``jobmanager.model.sink_layout``).
    - ``format``: ``"parquet"`` or ``"csv"`` (comma-separated, a header line if
      ``csv_header``, Spark's default being none).

    The name stays ParquetSink, Parquet being what it writes unless told otherwise."""

    path: str
    overwrite: bool = False
    partition_by: tuple[str, ...] = ()
    format: str = "parquet"
    csv_header: bool = False
    mode: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", _sink_path(self.path))
        mode = self._checked_mode()
        object.__setattr__(self, "mode", mode)
        object.__setattr__(self, "overwrite", mode == "overwrite")
        columns = (self.partition_by,) if isinstance(self.partition_by, str) else self.partition_by
        object.__setattr__(self, "partition_by", tuple(columns))
        if not _distinct_names(self.partition_by):
            raise JobGraphError(
                f"sink {self.path}: partition_by {self.partition_by!r} must be "
                "distinct column names"
            )
        object.__setattr__(self, "format", str(self.format).lower())
        if self.format not in FORMATS:
            raise JobGraphError(
                f"sink {self.path}: unknown format {self.format!r}; a sink "
                f"writes one of {', '.join(FORMATS)}"
            )
        if self.csv_header and self.format != "csv":
            raise JobGraphError(f"sink {self.path}: csv_header is for format='csv'")

    def _checked_mode(self) -> str:
        """The save mode, ``overwrite=True`` standing for ``overwrite``; refused if unknown or
        at odds with ``overwrite``."""
        mode = _MODES.get(str(self.mode or ("overwrite" if self.overwrite else "error")).lower())
        if mode is None or (self.overwrite and mode != "overwrite"):
            raise JobGraphError(
                f"sink {self.path}: mode {self.mode!r}"
                + (" with overwrite=True" if mode else "")
                + "; use one of "
                "'error', 'errorifexists', 'overwrite', 'append', 'ignore'"
            )
        return mode

    def __setstate__(self, state: dict) -> None:
        """Unpickle, also a sink pickled before modes and formats existed (an archived graph):
        its missing fields take their defaults, its mode from ``overwrite``."""
        for name, value in state.items():
            object.__setattr__(self, name, value)
        if state.get("mode") is None:
            object.__setattr__(self, "mode", "overwrite" if state.get("overwrite") else "error")

    def __str__(self) -> str:
        shape = "".join(
            [
                f" by {','.join(self.partition_by)}" if self.partition_by else "",
                "" if self.mode == "error" else f" ({self.mode})",
            ]
        )
        return f"{self.format} sink {self.path}{shape}"


_MODES = {
    "error": "error",
    "errorifexists": "error",
    "default": "error",
    "overwrite": "overwrite",
    "append": "append",
    "ignore": "ignore",
}


@dataclass(frozen=True)
class ResultSink(ParquetSink):
    """The sink of a query whose result goes back to its client (``Client.sql`` without
    ``output``): written and committed as any ParquetSink's, at a path the client picks under
    the job stores (``<jobstore.dir>/results/<uuid>``), and, being Tidal's own, removed with
    the job's store when the job is released or expires. A subclass, not a flag of
    ParquetSink: everything that stages, commits, aborts or chains a sink treats it as one
    unchanged, and only what must tell it apart (the job's cleanup, explain) asks. Always
    unpartitioned Parquet, which is what the client reads back."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.partition_by or self.format != "parquet":
            raise JobGraphError(f"result {self.path}: a result sink is unpartitioned Parquet")

    def __str__(self) -> str:
        return f"result {self.path}"


def staging_dir(sink: ParquetSink, job_id: str) -> str:
    """Where a job's sink tasks write their part files: beside the target, on its file system
    (so a local commit is a rename; see ``jobmanager.runtime.sinks``)."""
    return f"{sink.path.rstrip('/').rstrip(os.sep)}.tidal-staging-{job_id}"


def part_file(
    sink: ParquetSink, job_id: str, subtask: int, attempt: int, partition: str = ""
) -> str:
    """Each attempt's own file (in ``partition``, a ``col=value/...`` directory, for a
    partitioned sink): attempts never overwrite each other's output."""
    parts = [partition] if partition else []
    return storage.join(
        staging_dir(sink, job_id), *parts, attempt_name(subtask, attempt, sink.format)
    )


def spark(fn: Callable[..., Any]) -> SparkFunction:
    return SparkFunction(fn)


def arrow(fn: Callable[..., Any]) -> ArrowFunction:
    return ArrowFunction(fn)


@dataclass(frozen=True)
class VertexCode:
    """Everything a TaskManager needs of a vertex's user code, shipped once per TaskManager
    through the blob store."""

    operator: Any
    sources: tuple


def serialize_vertex_code(vertex: JobVertex) -> bytes:
    try:
        return usercode.dumps(VertexCode(vertex.operator, vertex.sources))
    except Exception as error:
        raise JobGraphError(
            f"vertex {vertex.name!r}: its function or sources cannot be serialised to ship to "
            f"TaskManagers ({type(error).__name__}: {error}); functions must not capture "
            "locks, sockets, open files or SparkSessions"
        ) from error


def _sink_path(path) -> str:
    """A sink's path: a URL as it is, a local path absolute (``file://`` dropped)."""
    path = os.fspath(path)
    path = path[len("file://") :] if path.startswith("file://") else path
    return path if "://" in path else os.path.abspath(path)


def _distinct_names(columns: tuple) -> bool:
    return all(isinstance(c, str) and c for c in columns) and len(set(columns)) == len(columns)


def check_operators(graph: JobGraph) -> None:
    """Refuse, by vertex name, shapes a TaskManager could not run."""
    for vertex in graph.vertices:
        inputs = len(vertex.sources) + len(vertex.inputs)
        op = vertex.operator
        if op is not None and not isinstance(
            op, (SparkFunction, ArrowFunction, SqlOperator, ParquetSink)
        ):
            raise JobGraphError(
                f"vertex {vertex.name!r}: operator {op!r} is not spark(fn), arrow(fn), SQL or a "
                "ParquetSink"
            )
        if isinstance(op, SqlOperator) and len(op.views) != inputs:
            raise JobGraphError(
                f"vertex {vertex.name!r}: its SQL names {len(op.views)} views "
                f"({', '.join(op.views)}) for {inputs} inputs"
            )
        if isinstance(op, ParquetSink):
            _check_sink(vertex, inputs)
        if op is None and inputs != 1:
            raise JobGraphError(
                f"vertex {vertex.name!r} has no operator, so it passes its input through, "
                f"but it has {inputs} inputs"
            )


def _check_sink(vertex, inputs: int) -> None:
    if vertex.outputs:
        raise JobGraphError(f"vertex {vertex.name!r}: a sink cannot have outgoing edges")
    if inputs != 1:
        raise JobGraphError(f"vertex {vertex.name!r}: a sink reads exactly one input")
