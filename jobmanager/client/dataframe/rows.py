"""A job's Arrow result as PySpark hands it back: ``Row``s, a pandas frame, ``show``'s table.

PySpark gives a timestamp as a naive ``datetime`` in the session's time zone, a date as a
``date``, a decimal as a ``Decimal``, a null as ``None``; ``show`` prints Spark's own text of
each value (``true``, ``NULL``, ``1.0E10``) in its boxed table, cells cut to 20 characters.
"""

from __future__ import annotations

import datetime
import decimal
import math
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["local_times", "show_string", "to_pandas", "to_rows"]


def local_times(table: pa.Table, zone: str | None = None) -> pa.Table:
    """Timestamps with a zone as the wall-clock time of the session's zone, zone dropped."""
    columns = []
    for column in table.columns:
        if pa.types.is_timestamp(column.type) and column.type.tz is not None:
            target = zone or _local_zone()
            column = pc.local_timestamp(column.cast(pa.timestamp(column.type.unit, target)))
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)


def _local_zone() -> str:
    """The zone Spark's session defaults to: the JVM's, which is ``TZ`` or the system's."""
    import os

    zone = os.environ.get("TZ")
    if zone:
        return zone
    link = os.path.realpath("/etc/localtime")
    return link.split("zoneinfo/", 1)[1] if "zoneinfo/" in link else "UTC"


def to_rows(table: pa.Table, zone: str | None = None) -> list:
    """The rows as PySpark's ``Row``s, field names as the query gives them."""
    table = local_times(table, zone)
    from sqlframe.base.types import Row

    names = list(table.column_names)
    columns = [
        [_spark_value(v, column.type) for v in column.to_pylist()] for column in table.columns
    ]
    rows = []
    for values in zip(*columns):
        row = Row(*values)  # positionally: Row(**kw) would turn decimals into floats
        row.__fields__ = names
        rows.append(row)
    return rows


def _row(value: dict, kind: pa.StructType):
    """A struct as PySpark's ``Row``, its fields in the struct's order."""
    from sqlframe.base.types import Row

    fields = [kind.field(i) for i in range(kind.num_fields)]
    row = Row(*[_spark_value(value.get(f.name), f.type) for f in fields])
    row.__fields__ = [f.name for f in fields]
    return row


def _spark_value(value: Any, kind: pa.DataType) -> Any:
    """``value`` as PySpark gives it: a struct a ``Row`` (Arrow's is a dict), inside arrays and
    maps too."""
    if value is None:
        return None
    if pa.types.is_struct(kind):
        return _row(value, kind)
    if pa.types.is_map(kind):
        return [(k, _spark_value(v, kind.item_type)) for k, v in value]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return [_spark_value(v, kind.value_type) for v in value]
    return value


def to_pandas(table: pa.Table, zone: str | None = None):
    """As PySpark's ``toPandas``: dates and decimals as Python objects."""
    return local_times(table, zone).to_pandas(date_as_object=True)


def show_string(names: list[str], rows: list[tuple], more: int, truncate: int | bool) -> str:
    """Spark's ``Dataset.showString``: a boxed table, right-aligned when cut (``truncate``),
    left-aligned otherwise; then ``only showing top N rows`` if rows were left out."""
    width = 20 if truncate is True else int(truncate or 0)
    cells = [[_cut(name, width) for name in names]]
    cells += [[_cut(spark_text(value), width) for value in row] for row in rows]
    sizes = _column_sizes(cells, len(names))
    line = "+" + "+".join("-" * size for size in sizes) + "+"
    boxed = [_boxed(row, sizes, right=width > 0) for row in cells]
    out = [line, boxed[0], line, *boxed[1:], line]
    if more:
        out.append(f"only showing top {_rows_word(len(rows))}")
    return "\n".join(out) + "\n"


def _column_sizes(cells: list[list[str]], columns: int) -> list[int]:
    """Each column's width: its longest cell's, at least 3."""
    return [max(3, *(len(row[i]) for row in cells)) for i in range(columns)]


def _boxed(cells: list[str], sizes: list[int], right: bool) -> str:
    """A row of the table, each cell padded to its column's size."""
    padded = (cell.rjust(size) if right else cell.ljust(size) for cell, size in zip(cells, sizes))
    return "|" + "|".join(padded) + "|"


def _rows_word(count: int) -> str:
    return f"{count} row" if count == 1 else f"{count} rows"


def _cut(text: str, width: int) -> str:
    if width <= 0 or len(text) <= width:
        return text
    return text[: width - 3] + "..." if width >= 4 else text[:width]


def spark_text(value: Any) -> str:
    """A value as Spark casts it to a string."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        return _timestamp_text(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(spark_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return _map_text(value)
    return str(value)


def _timestamp_text(value: datetime.datetime) -> str:
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return text


def _map_text(value: dict) -> str:
    return "{" + ", ".join(f"{spark_text(k)} -> {spark_text(v)}" for k, v in value.items()) + "}"


def _java_double(value: float) -> str:
    """Java's ``Double.toString``: plain between 1e-3 and 1e7, else ``d.dddE±n``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        text = repr(value)
        return text if "." in text or "e" in text else text + ".0"
    sign, digits, exponent = decimal.Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    power = len(digits) + exponent - 1
    mantissa = text[0] + "." + (text[1:] or "0")
    return f"{'-' if sign else ''}{mantissa}E{power}"
