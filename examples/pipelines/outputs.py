"""Running the pipelines of this folder as programs, and reading what they wrote.

``run_pipeline`` runs one script the way a user would (``python examples/pipelines/x.py
--input ... --output ...``), or under another command such as ``tidal run``; ``read_output``
reads an output directory (Parquet, Hive-partitioned Parquet, or CSV part files with a header)
into one Arrow table, rows sorted by every column, so two engines' outputs compare as equal
tables whatever their part files and row order. ``OUTPUTS`` names each pipeline's output
directories (under its ``--output``) and their format.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.dataset as ds

__all__ = [
    "OUTPUTS",
    "PIPELINES",
    "PIPELINES_DIR",
    "REPO",
    "read_output",
    "run_pipeline",
    "sort_rows",
]

PIPELINES_DIR = Path(__file__).resolve().parent
REPO = PIPELINES_DIR.parent.parent

# pipeline -> {output directory under --output: format}
OUTPUTS: dict[str, dict[str, str]] = {
    "csv_cleanup": {"orders": "parquet"},
    "sessionize": {"events": "parquet", "sessions": "parquet"},
    "star_schema": {"revenue": "parquet"},
    "partitioned_write": {"events": "parquet", "summary": "parquet"},
    "missing_rows": {"missing": "csv", "unexpected": "csv"},
}
PIPELINES = tuple(OUTPUTS)


def script_path(script) -> Path:
    """A pipeline's script: a name (``"sessionize"``) or a path."""
    path = Path(script)
    if path.suffix != ".py":
        path = PIPELINES_DIR / f"{script}.py"
    return path.resolve()


def run_pipeline(
    script,
    args: Sequence[str],
    command: Sequence[str] | None = None,
    *,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess:
    """Run a pipeline script as a program: ``command`` (default: this Python) then the script
    path then ``args``, from the repository root, with the root on ``PYTHONPATH`` and the time
    zone fixed to UTC (timestamps are parsed and written in the session time zone, so two runs
    compare only in the same one). Output is captured as text; the caller checks the exit code.
    """
    command = list(command) if command is not None else [sys.executable]
    environment = dict(os.environ)
    paths = [str(REPO)] + [p for p in environment.get("PYTHONPATH", "").split(os.pathsep) if p]
    environment["PYTHONPATH"] = os.pathsep.join(paths)
    environment["TZ"] = "UTC"
    environment.update(env or {})
    return subprocess.run(
        [*command, str(script_path(script)), *map(str, args)],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _data_files(directory: Path) -> list[Path]:
    """Part files as Spark writes them: hidden and ``_``-prefixed names (``_SUCCESS``, ``.crc``)
    and empty files left out, in path order."""
    return sorted(
        path
        for path in directory.rglob("*")
        if path.is_file()
        and path.stat().st_size > 0
        and not any(part.startswith((".", "_")) for part in path.relative_to(directory).parts)
    )


def read_output(path, format: str = "parquet", *, sort: bool = True) -> pa.Table:
    """One output directory as a table, rows sorted by all columns (``sort=False``: in part
    file order, as a sorted write leaves them).

    Parquet is read as a dataset with Hive partitioning (``date=2024-01-02/`` directories give a
    ``date`` column, a string), dictionary columns decoded, timestamps as UTC wall-clock times
    in microseconds (Spark writes them as INT96, naive in nanoseconds; a writer of Parquet's
    own timestamps marks them adjusted to UTC: the same instants, with the session time zone
    UTC as ``run_pipeline`` fixes it). CSV part files are read with their
    header and every column as a string, so values compare as each engine wrote them.
    """
    directory = Path(path)
    files = _data_files(directory)
    if not files:
        raise FileNotFoundError(f"no output files in {directory}")
    if format == "parquet":
        table = ds.dataset(
            [str(f) for f in files],
            format="parquet",
            partitioning="hive",
            partition_base_dir=str(directory),
        ).to_table()
        table = _utc_microseconds(_decode_dictionaries(table))
    elif format == "csv":
        table = pa.concat_tables([_read_csv_strings(f) for f in files])
    else:
        raise ValueError(f"unknown output format {format!r} (parquet or csv)")
    return sort_rows(table) if sort else table


def _read_csv_strings(path: Path) -> pa.Table:
    with open(path, newline="") as file:
        header = next(csv.reader(file))
    options = pacsv.ConvertOptions(
        column_types={name: pa.string() for name in header}, strings_can_be_null=True
    )
    return pacsv.read_csv(path, convert_options=options)


def _decode_dictionaries(table: pa.Table) -> pa.Table:
    for index, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            column = table.column(index).cast(field.type.value_type)
            table = table.set_column(index, field.name, column)
    return table


def _utc_microseconds(table: pa.Table) -> pa.Table:
    for index, field in enumerate(table.schema):
        if pa.types.is_timestamp(field.type):
            table = table.set_column(
                index, field.name, table.column(index).cast(pa.timestamp("us"))
            )
    return table


def sort_rows(table: pa.Table) -> pa.Table:
    """The rows sorted by every column, left to right, nulls last."""
    if table.num_rows == 0 or table.num_columns == 0:
        return table
    return table.sort_by([(name, "ascending", "at_end") for name in table.column_names])
