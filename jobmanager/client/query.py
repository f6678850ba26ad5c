"""A query becomes a job here, in the client, with no cluster: its tables, its sink, its plan
(``jobmanager.planner``).

A query without ``output`` brings its result back to the client: its sink is a ``ResultSink``
under the job stores (``<jobstore.dir>/results/<uuid>``), where the JobManager, which commits
it, and the client, which reads it back (``JobResult.to_arrow``), both reach it, and which goes
with the job's store. With ``output``, the result is a ``ParquetSink`` there, as a job's:
Parquet or CSV, partitioned or not, in one of Spark's write modes.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jobmanager.client.result import QueryOutput
from jobmanager.model.config import RESULT_MAX_SIZE, Configuration
from jobmanager.model.jobgraph import JobGraph
from jobmanager.model.operators import ParquetSink, ResultSink
from jobmanager.model.urls import redact
from jobmanager.runtime import sinks
from jobmanager.runtime.jobstore import store_root

if TYPE_CHECKING:
    from jobmanager.planner import Catalog, PlannedQuery

__all__ = ["catalog_of", "collected_output", "plan_query"]


def catalog_of(
    tables: Mapping[str, Any] | None, catalog: Catalog | str | os.PathLike | None
) -> Catalog:
    """The tables a query may read: ``catalog`` (a Catalog, or a YAML file of one), with
    ``tables`` (name to path) added, a name in both taken from ``tables``. (The planner is
    imported here, not with the client: a job without SQL never loads it.)"""
    from jobmanager.planner import Catalog

    if catalog is None:
        return Catalog.from_tables(tables)
    found = catalog if isinstance(catalog, Catalog) else Catalog.from_yaml(os.fspath(catalog))
    return found.merged(Catalog.from_tables(tables)) if tables else found


def plan_query(
    query: str,
    settings: Configuration,
    *,
    tables: Mapping[str, Any] | None = None,
    catalog: Catalog | str | os.PathLike | None = None,
    output: str | None = None,
    overwrite: bool = False,
    mode: str | None = None,
    output_format: str = "parquet",
    partition_by: Sequence[str] | str = (),
    csv_header: bool = False,
    name: str | None = None,
    rule_trace: list | None = None,
) -> tuple[PlannedQuery, QueryOutput]:
    """The query's plan, its sink last, and where its result goes; a ``SqlError`` (or a
    ``TableError`` of the catalogue) for a query or tables the planner cannot take. With
    ``output``, the sink writes as Spark's ``df.write.mode(mode).partitionBy(*partition_by)``
    writes ``output_format`` (``ParquetSink``); ``mode="ignore"`` over an existing output is
    the caller's to skip (``sinks.target_exists``), or the commit drops the result. ``name``
    names the job (``sql`` if not given); ``rule_trace``, if given, gets what each of the
    planner's logical rules changed."""
    from jobmanager.planner import plan_sql

    if output is not None:
        columns = (partition_by,) if isinstance(partition_by, str) else tuple(partition_by)
        sink = ParquetSink(output, overwrite, columns, output_format, csv_header, mode)
        try:
            sinks.check_target(sink)  # an output that is there already: a mistake, said at once
        except sinks.SinkError:
            raise sinks.SinkError(
                f"output {redact(sink.path)} exists already: replace it "
                "with overwrite=True (tidal sql --overwrite)"
            ) from None
    else:
        if partition_by or output_format != "parquet" or csv_header or mode:
            raise sinks.SinkError(
                "partition_by, output_format, csv_header and mode shape an output: give output= too"
            )
        sink = ResultSink(f"{store_root(settings)}/results/{uuid.uuid4().hex}")
    planned = plan_sql(
        query, catalog_of(tables, catalog), sink, config=settings, name=name, rule_trace=rule_trace
    )
    _check_partition_columns(sink, tuple(planned.columns))
    return planned, QueryOutput(
        sink.path, output is None, tuple(planned.columns), settings[RESULT_MAX_SIZE.key]
    )


def _check_partition_columns(sink: ParquetSink, columns: tuple[str, ...]) -> None:
    """Partition columns the result has (without case, as Spark resolves them), not all of
    them: said before anything runs, not by every sink task."""
    lower = [c.lower() for c in columns]
    missing = [c for c in sink.partition_by if c.lower() not in lower]
    if missing:
        raise sinks.SinkError(
            f"output {redact(sink.path)}: partition columns {missing} are not "
            f"among the query's columns {list(columns)}"
        )
    if sink.partition_by and len(sink.partition_by) >= len(columns):
        raise sinks.SinkError(
            f"output {redact(sink.path)}: cannot partition by every column "
            f"{list(columns)}: the files would have none left"
        )


def collected_output(job: JobGraph, settings: Configuration) -> QueryOutput | None:
    """Where a hand-built job that ends in a ``ResultSink`` collects its result, if it does
    (only one can be read back)."""
    results = [v.operator for v in job.vertices if isinstance(v.operator, ResultSink)]
    if len(results) != 1:
        return None
    return QueryOutput(results[0].path, True, None, settings[RESULT_MAX_SIZE.key])
