"""Comparing query results: the example jobs' against their references, and SQL answers of two
engines (Tidal or PySpark against DuckDB, Tidal against PySpark), by one set of value rules.

The rules (``same_value``), and why:

- NULL equals only NULL; strings, dates, timestamps, booleans and integers must be equal.
- Decimals (Python ``Decimal``) against decimals exactly: TPC-H's money is DECIMAL(15,2) and
  every engine sums it exactly. An integer against a decimal counts as one number: DuckDB's SUM
  of an INTEGER column is a HUGEINT, which Arrow gives as decimal128(38, 0).
- A decimal against a double: Spark's AVG of decimal(p,s) and its decimal division are decimals
  (rounded HALF_UP to their scale), where DuckDB's are doubles. They are equal when the double,
  rounded HALF_UP to the decimal's scale, is the decimal, give or take one unit in its last
  place: a double holds the exact quotient only to about 16 digits, so at a tie (an exact
  quotient ending in 5 just past the scale) its error may put it on the other side and round
  it one unit away from Spark's exactly rounded decimal. Where the decimal has more digits than
  a double holds, the double's own last place is the unit.
- Doubles against doubles to 1e-9 relative (1e-9 absolute near zero): engines add them up in
  different orders, so sums agree only to about 1e-12 relative. NaN equals NaN, as in Spark.

``first_difference`` compares the example jobs' results by column name, row by row.
``sql_difference`` compares SQL answers by column position (engines name an unnamed expression
each their own way), row by row when the query orders its result (``query_is_ordered``), else as
multisets.
"""

from __future__ import annotations

import decimal
import math
from decimal import Decimal
from pathlib import Path
from typing import Sequence

import pyarrow as pa

__all__ = ["first_difference", "query_is_ordered", "read_result", "same_value", "sql_difference"]

REL_TOLERANCE = 1e-9
ABS_TOLERANCE = 1e-9
# Enough digits for a decimal128(38, s) and the exact expansion of any double near it.
_EXACT = decimal.Context(prec=120, rounding=decimal.ROUND_HALF_UP)


def first_difference(
    actual: pa.Table, expected: pa.Table, rel_tolerance: float = REL_TOLERANCE
) -> str | None:
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
            if not same_value(a, e, rel_tolerance):
                return f"row {row}, column {name!r}: {a!r}, expected {e!r}"
    return None


def sql_difference(actual: pa.Table, expected: pa.Table, ordered: bool) -> str | None:
    """None when ``actual`` holds ``expected``'s rows (in its order if ``ordered``); otherwise
    the first difference: its row, column position and name, and both values.

    Columns are matched by position, and their counts must agree; names that differ are only
    mentioned. Unordered, both sides are sorted by all their columns first (None last; columns
    exact on both sides before doubles, so a double's last bits never reorder rows), and a
    difference names its row in that sorted order."""
    renamed = _renamed(actual.column_names, expected.column_names)
    if actual.num_columns != expected.num_columns:
        return (
            f"{actual.num_columns} columns {actual.column_names}, expected "
            f"{expected.num_columns} {expected.column_names}"
        )
    if actual.num_rows != expected.num_rows:
        return f"{actual.num_rows} rows, expected {expected.num_rows}{renamed}"
    got, want = _rows(actual), _rows(expected)
    if not ordered:
        exact = [
            i
            for i in range(expected.num_columns)
            if not pa.types.is_floating(actual.schema.field(i).type)
            and not pa.types.is_floating(expected.schema.field(i).type)
        ]
        positions = exact + [i for i in range(expected.num_columns) if i not in exact]
        got, want = _sorted(got, positions), _sorted(want, positions)
    where = "" if ordered else " (both sorted by all columns)"
    for row, (got_row, want_row) in enumerate(zip(got, want)):
        for column, (a, e) in enumerate(zip(got_row, want_row)):
            if not same_value(a, e):
                name = expected.column_names[column]
                return (
                    f"row {row}{where}, column {column} ({name!r}): {a!r}, expected {e!r}{renamed}"
                )
    return None


def query_is_ordered(query: str) -> bool:
    """True if the query orders its result: an ORDER BY at its top, read by sqlglot in Spark's
    dialect (an ORDER BY inside a subquery orders nothing the user sees)."""
    import sqlglot

    return sqlglot.parse_one(query, read="spark").args.get("order") is not None


def same_value(a: object, b: object, rel_tolerance: float = REL_TOLERANCE) -> bool:
    """The value rules of this module's docstring."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=rel_tolerance, abs_tol=ABS_TOLERANCE)
    if isinstance(a, Decimal) and isinstance(b, float):
        return _decimal_matches_double(a, b)
    if isinstance(a, float) and isinstance(b, Decimal):
        return _decimal_matches_double(b, a)
    if isinstance(a, float) or isinstance(b, float):
        return False  # a double against an integer, a string, a date...
    return a == b


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


def _decimal_matches_double(exact: Decimal, double: float) -> bool:
    """The double rounded HALF_UP to the decimal's scale is the decimal, within one unit of
    that scale or of the double's last place, whichever is coarser."""
    if not exact.is_finite() or not math.isfinite(double):
        return False
    scale_unit = Decimal(1).scaleb(exact.as_tuple().exponent, _EXACT)
    rounded = Decimal(double).quantize(scale_unit, context=_EXACT)
    unit = max(scale_unit, Decimal(math.ulp(double)))
    return abs(_EXACT.subtract(rounded, exact)) <= unit


def _rows(table: pa.Table) -> list[tuple]:
    if not table.num_columns:
        return [()] * table.num_rows
    return list(zip(*(column.to_pylist() for column in table.columns)))


def _sorted(rows: list[tuple], positions: Sequence[int]) -> list[tuple]:
    return sorted(rows, key=lambda row: tuple(_sort_key(row[i]) for i in positions))


def _sort_key(value: object) -> tuple:
    """Orders any one column's values: None after everything, NaN after the numbers; lists
    and structs by their items."""
    if value is None:
        return (2,)
    if isinstance(value, float) and math.isnan(value):
        return (1,)
    if isinstance(value, (list, tuple)):
        return (0, tuple(_sort_key(item) for item in value))
    if isinstance(value, dict):
        return (0, tuple((key, _sort_key(item)) for key, item in value.items()))
    return (0, value)


def _renamed(actual: list[str], expected: list[str]) -> str:
    """A note naming the positions whose column names differ (information only)."""
    differ = [
        f"{i}: {a!r} against {e!r}" for i, (a, e) in enumerate(zip(actual, expected)) if a != e
    ]
    return f" (column names differ, not compared: {'; '.join(differ)})" if differ else ""
