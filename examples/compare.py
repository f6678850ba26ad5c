"""Comparing query results row by row, with money compared to a relative tolerance.

Money is float64 (see ``tpch_data``), and Tidal, Spark and pyarrow add it up in different
orders, so sums agree only to about 1e-12 relative; every other value must be equal.
"""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa

__all__ = ["first_difference", "read_result"]

REL_TOLERANCE = 1e-9


def first_difference(actual: pa.Table, expected: pa.Table,
                     rel_tolerance: float = REL_TOLERANCE) -> str | None:
    """None when the tables hold the same rows in the same order; otherwise what first
    differs, for a message. Columns are compared by name, in ``expected``'s order."""
    missing = [name for name in expected.column_names if name not in actual.column_names]
    if missing:
        return f"columns {missing} missing; got {actual.column_names}"
    actual = actual.select(expected.column_names)
    if actual.num_rows != expected.num_rows:
        return f"{actual.num_rows} rows, expected {expected.num_rows}"
    for name in expected.column_names:
        got, want = actual[name].to_pylist(), expected[name].to_pylist()
        for row, (a, e) in enumerate(zip(got, want)):
            if not _same(a, e, rel_tolerance):
                return f"row {row}, column {name!r}: {a!r}, expected {e!r}"
    return None


def read_result(path: str | Path) -> pa.Table:
    """A sink's output (a local directory or any fsspec URL) as one table, its part files in
    name order, so a sorted result written by several tasks reads back in order. Read as Tidal
    reads a source: exactly the files the result's manifest names, hidden files skipped."""
    from jobmanager.model.sources import FileSource, SourceError

    source = FileSource(str(path), format="parquet")
    try:
        splits = source.splits(1 << 62)
    except SourceError as error:
        raise FileNotFoundError(f"{path}: no Parquet part files ({error})") from None
    return source.read(splits)


def _same(a: object, b: object, rel_tolerance: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=rel_tolerance, abs_tol=1e-9)
    return a == b
