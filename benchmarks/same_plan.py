"""The same-plan control: Tidal's plan of a query, run whole by Spark's own executor.

``benchmarks/tpch.py`` races Tidal against PySpark running the query's text. The two differ
in two ways at once: the plan (Tidal's planner orders the joins, picks broadcasts, cuts the
query into vertices; Spark's Catalyst plans the text its own way) and the runtime (Tidal
schedules each vertex as tasks on Ray, deploys them, shuffles their output through its own
partitions, and commits the sink; Spark runs one query in one JVM). A ratio of the two cannot
say which one a gap comes from. This control takes the first difference away: the job Tidal
would run, every vertex's Spark SQL with the planner's join hints, composed into ONE Spark SQL
query (``composed_sql``), and run by ``spark.sql`` in one session (``spark_on_same_plan``).
What is left between Tidal and the control is Tidal's runtime: scheduling, deployment, the
shuffle between vertices, reading its inputs back, and the commit. What is left between the
control and plain PySpark is the plan.

How the job becomes one query:

- each SQL vertex is a common table expression ``v_<n>`` (``n``: its place in the job's
  topological order), its SQL as the planner wrote it, hints (``BROADCAST``,
  ``SHUFFLE_HASH``) included;
- a vertex reads its inputs as temporary views (``SqlOperator.views``: ``s0``, ``s1``, ... for
  its sources, then ``in0``, ``in1``, ... for its incoming edges, as the TaskManager registers
  them, ``taskmanager/sql.py``). An edge's view becomes a read of its producer's CTE, under
  the view's own name where the SQL gave it no alias, so qualified columns and hints still
  find it; a source's (``FileSource``, or a ``BroadcastSource`` read whole by every task)
  becomes a read of a temporary view of its table (registered by the caller under the
  table's name, ``register_views``), narrowed to the columns the source reads. A source's
  hive partition filter is left out: it repeats conjuncts of the vertex's own WHERE (the
  planner filters the rows again after reading), so the vertex's SQL applies it anyway;
- edges carry no SQL: a hash, range, rebalance or forward edge is Tidal's exchange, and in the
  composed query Spark decides its own exchanges (that is the point); a broadcast edge's
  hint is the consuming vertex's. A vertex that works on its task's share (a partial
  aggregate, a top-N per task) gives the same rows once over the whole input, and its final
  vertex follows it;
- the vertex before the sink is the query's result (``SELECT * FROM`` its CTE).

Table references are renamed in sqlglot's tree of each vertex's SQL (Spark's dialect), never
in the text. A vertex that is not a SQL vertex (a PySpark or Arrow function) has no SQL to
compose: ``ValueError`` naming it.

What stays Tidal's alone: the JobManager's decisions at run time (a marked shuffled join
broadcast from the bytes really written, a hash build swapped to the smaller side,
``SqlOperator.built_on``; a hash build turned into a sort-merge join where it would not fit a
task's memory, ``taskmanager/join_memory.py``) are not in the plan, so the control runs the
planner's hints. And the session's own settings (adaptive execution on or off, shuffle
partitions) are the caller's: Tidal's tasks run with adaptive execution off, the TPC-H
baseline's session with it on, which lets Spark make such decisions its own way.

    tables = {"lineitem": "/data/tpch/lineitem", ...}
    register_views(spark, tables)
    frame = spark_on_same_plan(spark, "SELECT ...", tables, register=False)
"""

from __future__ import annotations

import os
import re
import tempfile
import uuid
from collections.abc import Mapping
from typing import Any

import sqlglot
from sqlglot import exp

from jobmanager.model.broadcast_source import BroadcastSource
from jobmanager.model.config import Configuration
from jobmanager.model.jobgraph import JobGraph, JobVertex
from jobmanager.model.operators import ParquetSink, SqlOperator
from jobmanager.model.sources import FileSource

__all__ = ["composed_sql", "planned_sql", "register_views", "spark_on_same_plan"]

_DIALECT = "spark"
_CTE_PREFIX = "v_"


def composed_sql(graph: JobGraph, tables: Mapping[str, Any] | None = None) -> str:
    """The whole job as one Spark SQL query (see the module docstring). ``tables`` (name to
    path, or to ``{"path": ...}``, as the planner's catalogue was given) names each source's
    table by its path; without it, a source's table is named by its path's last component
    (``/data/tpch/lineitem`` reads ``lineitem``)."""
    names = _names_by_path(tables)
    result = _result_vertex(graph)
    prefix = _prefix(set(names.values()))
    ctes: dict[str, str] = {}
    query = exp.select("*")
    for vertex in graph.topological_order():
        if isinstance(vertex.operator, ParquetSink):
            continue
        operator = vertex.operator
        if not isinstance(operator, SqlOperator):
            runs = "nothing (it passes its input on)" if operator is None else operator
            raise ValueError(
                f"vertex {vertex.name!r} runs {runs}, not SQL: the same-plan "
                "control composes SQL vertices only"
            )
        name = f"{prefix}{len(ctes)}"
        query = query.with_(
            name, as_=_vertex_query(vertex, operator, ctes, names, tables), copy=False
        )
        ctes[vertex.name] = name
    query = query.from_(exp.to_table(ctes[result.name]), copy=False)
    return query.sql(dialect=_DIALECT, pretty=True)


def planned_sql(
    text: str, tables: Mapping[str, Any], config: Configuration | Mapping[str, Any] | None = None
) -> str:
    """``text`` planned by Tidal's planner over ``tables`` (as ``Client.sql`` plans it, with
    ``config``'s options over the defaults), composed into one query (``composed_sql``)."""
    from jobmanager.planner import Catalog, plan_sql

    settings = (
        config
        if isinstance(config, Configuration)
        else Configuration().with_overrides(dict(config or {}))
    )
    unused = os.path.join(tempfile.gettempdir(), f"tidal-same-plan-{uuid.uuid4().hex}")
    planned = plan_sql(
        text, Catalog.from_tables(tables), ParquetSink(unused), config=settings, name="same-plan"
    )
    return composed_sql(planned.graph, tables)


def register_views(session, tables: Mapping[str, Any], names=None) -> None:
    """Each Parquet table (of ``names``, all by default) as a temporary view of ``session``
    under its name (``spark.read.parquet``, hive partitions found as Spark finds them)."""
    for name in tables if names is None else names:
        session.read.parquet(_path_of(name, tables[name])).createOrReplaceTempView(name)


def spark_on_same_plan(
    session,
    text: str,
    tables: Mapping[str, Any],
    config: Configuration | Mapping[str, Any] | None = None,
    *,
    register: bool = True,
):
    """``text`` as Tidal plans it (``planned_sql``), a DataFrame of ``session`` not yet run.
    With ``register``, the tables the plan reads are registered as views first (as
    ``examples.spark_sql.spark_query`` registers the baseline's); without, the caller has
    registered them (``register_views``)."""
    composed = planned_sql(text, tables, config)
    if register:
        read = {
            t.name.lower() for t in sqlglot.parse_one(composed, read=_DIALECT).find_all(exp.Table)
        }
        register_views(session, tables, [name for name in tables if name.lower() in read])
    return session.sql(composed)


def _vertex_query(
    vertex: JobVertex,
    operator: SqlOperator,
    ctes: Mapping[str, str],
    names: Mapping[str, str],
    tables: Mapping[str, Any] | None,
) -> exp.Expression:
    """The vertex's SQL with its views read from the tables and its producers' CTEs."""
    if len(operator.views) != len(vertex.sources) + len(vertex.inputs):
        raise ValueError(
            f"vertex {vertex.name!r}: its SQL names {len(operator.views)} views "
            f"for {len(vertex.sources)} sources and {len(vertex.inputs)} inputs"
        )
    reads: dict[str, exp.Expression] = {}
    for view, source in zip(operator.views, vertex.sources):
        reads[view.lower()] = _source_read(vertex, source, names, tables)
    for view, edge in zip(operator.views[len(vertex.sources) :], vertex.inputs):
        reads[view.lower()] = exp.to_table(ctes[edge.source.name])
    try:
        tree = sqlglot.parse_one(operator.sql, read=_DIALECT)
    except sqlglot.errors.ParseError as error:
        raise ValueError(f"vertex {vertex.name!r}: sqlglot cannot read its SQL: {error}") from None
    for table in list(tree.find_all(exp.Table)):
        if table.find_ancestor(exp.Hint) or table.args.get("db") or table.args.get("catalog"):
            continue  # a hint names an alias; a qualified name is no view of the vertex
        read = reads.get(table.name.lower())
        if read is not None:
            table.replace(_aliased(read.copy(), table))
    return tree


def _aliased(read: exp.Expression, table: exp.Table) -> exp.Expression:
    """``read`` under the view's alias, or under the view's own name where it had none."""
    others = [key for key, value in table.args.items() if value and key not in ("this", "alias")]
    if others:
        raise ValueError(f"cannot compose a read of view {table.name!r} with {others}")
    alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(table.name))
    if isinstance(read, exp.Select):
        return exp.Subquery(this=read, alias=alias)
    read.set("alias", alias)
    return read


def _source_read(
    vertex: JobVertex, source: Any, names: Mapping[str, str], tables: Mapping[str, Any] | None
) -> exp.Expression:
    """A read of the source's table view, narrowed to the columns it reads."""
    source = source.source if isinstance(source, BroadcastSource) else source
    if not isinstance(source, FileSource):
        raise ValueError(
            f"vertex {vertex.name!r} reads {source!r}, not files: the same-plan "
            "control reads tables only"
        )
    keys = [_normal(path) for path in source.paths]
    found = {names[key] for key in keys if key in names}
    if len(found) != 1 or len(keys) != 1:
        if tables is not None or len(keys) != 1:
            raise ValueError(
                f"vertex {vertex.name!r} reads {source!r}, which is not one of "
                f"the tables {sorted(names.values())}"
            )
        found = {_default_name(keys[0])}
    table = exp.Table(this=exp.to_identifier(found.pop(), quoted=True))
    if not source.columns:  # all of them, or none at all (COUNT(*)): the SQL names what it reads
        return table
    return exp.select(*(exp.column(c, quoted=True) for c in source.columns)).from_(table)


def _result_vertex(graph: JobGraph) -> JobVertex:
    sinks = [v for v in graph.vertices if isinstance(v.operator, ParquetSink)]
    if len(sinks) != 1 or len(sinks[0].inputs) != 1:
        raise ValueError(
            f"job {graph.name!r}: expected one sink with one input, found {[v.name for v in sinks]}"
        )
    return sinks[0].inputs[0].source


def _names_by_path(tables: Mapping[str, Any] | None) -> dict[str, str]:
    return {_normal(_path_of(name, value)): name for name, value in (tables or {}).items()}


def _path_of(name: str, value: Any) -> str:
    """A table's path: ``value`` itself, or a Parquet spec's ``path``."""
    if isinstance(value, Mapping):
        if value.get("format") not in (None, "parquet") or value.get("csv"):
            raise ValueError(f"table {name!r}: the same-plan control reads Parquet tables only")
        value = value["path"]
    return os.fspath(value)


def _normal(path: str) -> str:
    """A path as a ``FileSource`` keeps it: local paths absolute."""
    path = path if "://" in path else os.path.abspath(path)
    return path.rstrip("/") or "/"


def _default_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _prefix(taken: set[str]) -> str:
    """``v_``, or ``v__`` and so on where a table's name would read as a CTE's."""
    prefix = _CTE_PREFIX
    while any(re.fullmatch(re.escape(prefix) + r"\d+", name.lower()) for name in taken):
        prefix += "_"
    return prefix
