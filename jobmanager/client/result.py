"""A job's result as the client hands it to the user: built from the ``JobDetails`` the
JobManager answers with (``jobmanager.runtime.details``), and, for a query, its rows.

A query's result (``Client.sql``) is written by its last vertex as Parquet part files and
committed as any sink's; without an ``output`` the client picked where (a ``ResultSink`` under
the job stores), and ``JobResult.to_arrow()`` reads it back: exactly the files the commit
published, in name order (so a result sorted by one task, or ordered across tasks, reads back
in order), under the column names the query gives (``planned.columns``; Spark's own may
differ, and two columns may share a name). The client holds the whole result in memory, so its
size is checked first, from the files' footers alone (their row groups' uncompressed bytes),
against ``client.result.max-size``: past it, nothing is read, and the error says how to write
the result instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jobmanager.errors import NoResultError, ResultTooLargeError
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.model.config import RESULT_MAX_SIZE
from jobmanager.runtime.details import JobDetails, VertexDetails

if TYPE_CHECKING:
    import pandas
    import pyarrow

__all__ = ["JobResult", "QueryOutput", "VertexReport"]


@dataclass(frozen=True, slots=True)
class QueryOutput:
    """Where a query's result went: ``path``, collected for the client (under the job stores,
    read back by ``to_arrow``) or the ``output`` the user named; its column names (None: as
    written); ``max_bytes``: client.result.max-size when it was submitted."""

    path: str
    collected: bool
    columns: tuple[str, ...] | None
    max_bytes: int


@dataclass(frozen=True)
class VertexReport:
    name: str
    parallelism: int | None
    explanation: str
    tasks: int
    finished: int
    deployments: int
    rows_in: int
    rows_out: int
    bytes_in: int
    bytes_out: int
    duration_s: float | None
    bytes_in_remote: int = 0
    phases_ms: dict = field(default_factory=dict)  # where its tasks' time went, summed
    queued_ms: int = 0
    chain: str = ""  # the task it runs in, when chained with others (``a -> b``)
    spark_jobs: int = 0

    @staticmethod
    def of(v: VertexDetails) -> VertexReport:
        return VertexReport(
            v.name,
            v.parallelism,
            v.explanation,
            v.tasks,
            v.finished,
            v.deployments,
            v.rows_in,
            v.rows_out,
            v.bytes_in,
            v.bytes_out,
            v.duration_s,
            v.bytes_in_remote,
            dict(v.phases_ms),
            v.queued_ms,
            v.name if len(v.members) > 1 else "",
            v.spark_jobs,
        )


@dataclass(frozen=True)
class JobResult:
    job_id: str
    status: JobStatus
    cause: str
    duration_s: float | None
    max_running_tasks: int
    vertices: dict[str, VertexReport] = field(default_factory=dict)  # by the job graph's names:
    # vertices chained into one task share its report (its ``chain`` names the task)
    output: QueryOutput | None = None  # a query's: where its result went

    @property
    def succeeded(self) -> bool:
        return self.status is JobStatus.FINISHED

    def to_arrow(self) -> pyarrow.Table:
        """The query's result, read back (see the module docstring). ``NoResultError`` when
        there is none to read (the job failed, with its cause; the result went to ``output``,
        saying where); ``ResultTooLargeError`` past ``client.result.max-size``."""
        output = self.output
        if output is None:
            raise NoResultError(
                f"job {self.job_id} is not a query (Client.sql): its sinks "
                "wrote its output where its graph says"
            )
        if not self.succeeded:
            raise NoResultError(
                f"job {self.job_id} {self.status}, so it has no result: "
                f"{self.cause or 'no cause recorded'}"
            )
        if not output.collected:
            raise NoResultError(
                f"job {self.job_id} wrote its result to {output.path}, not back "
                "to the client: read it from there"
            )
        return _read(output, self.job_id)

    def to_pandas(self) -> pandas.DataFrame:
        """``to_arrow()`` as a pandas DataFrame."""
        return self.to_arrow().to_pandas()

    @staticmethod
    def of(details: JobDetails, output: QueryOutput | None = None) -> JobResult:
        ended = details.ended_at
        duration = round(ended - details.submitted_at, 3) if ended else None
        return JobResult(
            details.job_id,
            details.status,
            details.cause,
            duration,
            details.max_running_tasks,
            {
                member: report
                for v in details.vertices
                for report in (VertexReport.of(v),)
                for member in v.members
            },
            output,
        )


def _read(output: QueryOutput, job_id: str) -> pyarrow.Table:
    """The collected result's part files, sized by their footers, then read, in name order."""
    files = _result_files(output, job_id)
    footers = [_footer(path) for path in files]
    _check_size(footers, output.max_bytes, job_id)
    tables = [_read_part(path, footer) for path, footer in zip(files, footers)]
    return _concatenated(tables, output.columns, job_id)


def _result_files(output: QueryOutput, job_id: str) -> list[str]:
    from jobmanager.model.sources import FileSource, SourceError

    try:
        return [f.path for f in FileSource(output.path, format="parquet").data_files()]
    except SourceError as error:
        raise NoResultError(
            f"job {job_id}: its result at {output.path} cannot be read: {error} "
            "(released, or expired after jobstore.expiration-time?)"
        ) from None


def _check_size(footers: list, max_bytes: int, job_id: str) -> None:
    """Refuse a result larger, uncompressed, than the client collects."""
    from jobmanager.client.report.svg import size

    total = sum(
        footer.row_group(i).total_byte_size
        for footer in footers
        for i in range(footer.num_row_groups)
    )
    if total > max_bytes:
        raise ResultTooLargeError(
            f"job {job_id}: its result is {size(total)} uncompressed ({total:,} bytes, "
            f"{sum(f.num_rows for f in footers):,} rows), over {RESULT_MAX_SIZE.key}, "
            f"{size(max_bytes)}: write it instead, with "
            f'Client.sql(..., output="s3://bucket/out") or tidal sql ... -o OUT, or raise '
            f"{RESULT_MAX_SIZE.key}"
        )


def _concatenated(tables: list, columns, job_id: str) -> pyarrow.Table:
    """The part files' tables as one, with the query's column names (which may repeat)."""
    import pyarrow as pa

    names = list(columns) if columns is not None else tables[0].column_names
    if any(table.num_columns != len(names) for table in tables):
        raise NoResultError(
            f"job {job_id}: its result's files do not have the "
            f"{len(names)} columns of the query ({', '.join(names)})"
        )
    by_position = [f"_{i}" for i in range(len(names))]  # names may repeat: Arrow unifies by name
    return pa.concat_tables(
        [table.rename_columns(by_position) for table in tables], promote_options="default"
    ).rename_columns(names)


def _footer(path: str):
    import pyarrow.parquet as pq

    from jobmanager.model import storage

    fs, key = storage.filesystem(path)
    with fs.open(key, "rb") as handle:
        return pq.read_metadata(handle)


def _read_part(path: str, footer):
    import pyarrow.parquet as pq

    from jobmanager.model import storage

    fs, key = storage.filesystem(path)
    with fs.open(key, "rb") as handle:
        return pq.ParquetFile(handle, metadata=footer).read()
