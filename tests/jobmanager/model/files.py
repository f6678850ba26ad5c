"""Files for the file source's tests: Parquet and CSV written as a test needs them."""

from __future__ import annotations

import csv
import io
import logging
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import structlog

from jobmanager.model.sources import FileSource

BIG = 1 << 40


def numbers(n: int, start: int = 0) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "name": [f"row-{i}" for i in range(start, start + n)],
        }
    )


def write_parquet(path: Path, table: pa.Table, row_group_size: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


def csv_text(
    header: list[str], rows: list[list[str]], eol: str = "\n", trailing_newline: bool = True
) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator=eol).writerows([header, *rows])
    text = buffer.getvalue()
    return (text if trailing_newline else text[: -len(eol)]).encode()


def write_csv(path: Path, header: list[str], rows: list[list[str]], **kwargs) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(csv_text(header, rows, **kwargs))
    return path


def read_all(source: FileSource, target: int = BIG, filtering=None) -> pa.Table:
    return source.read(source.splits(target, filtering))


@pytest.fixture(autouse=True)
def quiet_logs():
    """Debug lines from every enumeration would bury a failure; warnings still show."""
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    yield
    structlog.reset_defaults()
