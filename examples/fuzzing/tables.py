"""The fuzzer's tables: a handful of small random tables, one of them empty, as Parquet files.

Small (0 to 40 rows), because a wrong answer shows on a few rows as well as on millions, and
because every query runs twice, on PySpark and on Tidal. What makes them worth querying is in
their values, chosen where engines and planners go wrong:

- keys share small domains across tables (``k`` in 0..7, ``k2`` in 0..3, the same strings and
  dates), so joins match, several times over (duplicates), and one key takes most rows of
  ``t5`` (skew);
- every column but ``id`` has nulls: a join key, a grouping key or a NOT IN's subquery column
  that is null is where three-valued logic shows;
- doubles are multiples of 1/4 below 100 in magnitude, so any sum of them is exact in any order
  (no aggregate depends on the order rows arrive in), with ``0.0`` and ``-0.0`` (equal to
  Spark, but not to a hash of their bits) and one NaN;
- strings differ by case and by leading or trailing spaces (``'a'``, ``'A'``, ``' a'``,
  ``'a '``), and one is empty;
- ``id`` is unique and never null, so an ORDER BY or a window that ends with it orders rows
  totally: the query generator relies on it for deterministic answers;
- ``t4`` has no rows at all.

Each table is a directory of two Parquet files in row groups of eight rows, so that Tidal's
sources split even a small table and the plan's exchanges really move rows between tasks.
"""

from __future__ import annotations

import datetime
import random
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["COLUMN_TYPES", "Column", "TABLES", "TableSpec", "write_tables"]

# each column name has one kind in every table, so generated predicates and joins type-check
COLUMN_TYPES = {
    "id": "int",
    "k": "int",
    "k2": "int",
    "b": "bigint",
    "x": "double",
    "d": "decimal",
    "dt": "date",
    "ts": "timestamp",
    "s": "string",
    "f": "boolean",
}
SQL_TYPES = {
    "int": "int",
    "bigint": "bigint",
    "double": "double",
    "decimal": "decimal(12,2)",
    "date": "date",
    "timestamp": "timestamp",
    "string": "string",
    "boolean": "boolean",
}
ARROW_TYPES = {"int": pa.int32(), "bigint": pa.int64(), "double": pa.float64(),
               "decimal": pa.decimal128(12, 2), "date": pa.date32(),
               "timestamp": pa.timestamp("us", tz="UTC"), "string": pa.string(),
               "boolean": pa.bool_()}  # fmt: skip
STRINGS = ("a", "A", " a", "a ", "b", "B", "abc", "Abc", "ab%", "xyz", "")
BASE_DATE = datetime.date(2024, 1, 1)
ROW_GROUP_ROWS = 8
FILES = 2


@dataclass(frozen=True, slots=True)
class Column:
    """A column by name and kind (``COLUMN_TYPES``)."""

    name: str
    kind: str

    @property
    def sql_type(self) -> str:
        return SQL_TYPES[self.kind]


@dataclass(frozen=True, slots=True)
class TableSpec:
    """A table's name, columns, row count range, its null fraction and, for the skewed table,
    the share of rows whose ``k`` is 1."""

    name: str
    columns: tuple[Column, ...]
    rows: tuple[int, int]
    null_fraction: float = 0.15
    skew: float = 0.0

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)

    def of_kind(self, kind: str) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.kind == kind)


def _spec(name: str, names: str, rows: tuple[int, int], **options) -> TableSpec:
    return TableSpec(
        name, tuple(Column(n, COLUMN_TYPES[n]) for n in names.split()), rows, **options
    )


TABLES = (
    _spec("t1", "id k k2 b x d dt ts s f", (30, 40)),
    _spec("t2", "id k k2 x d dt s", (15, 40)),
    _spec("t3", "id k b d s f", (4, 12), null_fraction=0.3),
    _spec("t4", "id k x d s", (0, 0)),
    _spec("t5", "id k k2 dt ts s", (25, 40), skew=0.6),
)


def write_tables(directory: str | Path, seed: int) -> dict[str, str]:
    """Write every table of ``TABLES`` under ``directory`` (a folder each), drawn from
    ``seed``: the same seed, the same rows. The tables' paths by name."""
    paths = {}
    for spec in TABLES:
        rng = random.Random(f"{seed}:{spec.name}")
        table = table_of(spec, rng)
        folder = Path(directory) / spec.name
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.parquet"):
            old.unlink()
        half = (table.num_rows + 1) // 2
        for index, part in enumerate((table.slice(0, half), table.slice(half))):
            if index and not part.num_rows:
                break  # an empty table is one file with its schema
            pq.write_table(part, folder / f"part-{index}.parquet", row_group_size=ROW_GROUP_ROWS)
        paths[spec.name] = str(folder)
    return paths


def table_of(spec: TableSpec, rng: random.Random) -> pa.Table:
    """The table's rows, drawn from ``rng``."""
    count = rng.randint(*spec.rows)
    columns = {}
    for column in spec.columns:
        values = [_value(column, row, spec, rng) for row in range(count)]
        columns[column.name] = pa.array(values, ARROW_TYPES[column.kind])
    schema = pa.schema([(c.name, ARROW_TYPES[c.kind]) for c in spec.columns])
    return pa.table(columns, schema=schema)


def _value(column: Column, row: int, spec: TableSpec, rng: random.Random) -> object:
    if column.name == "id":
        return row + 1
    if rng.random() < spec.null_fraction:
        return None
    kind = column.kind
    if column.name == "k":
        return 1 if rng.random() < spec.skew else rng.randint(0, 7)
    if column.name == "k2":
        return rng.randint(0, 3)
    if kind == "bigint":
        return rng.choice((3_000_000_000, -3_000_000_000, 0)) + rng.randint(-5, 5)
    if kind == "double":
        special = rng.random()
        if special < 0.06:
            return -0.0 if special < 0.03 else 0.0
        if special < 0.08 and spec.name == "t1":
            return float("nan")
        return rng.randint(-400, 400) / 4
    if kind == "decimal":
        return Decimal(rng.randint(-99_999, 99_999)).scaleb(-2)
    if kind == "date":
        return BASE_DATE + datetime.timedelta(days=rng.randint(0, 45))
    if kind == "timestamp":
        moment = datetime.datetime.combine(BASE_DATE, datetime.time(), datetime.timezone.utc)
        return moment + datetime.timedelta(days=rng.randint(0, 45), minutes=rng.randint(0, 1439))
    if kind == "string":
        return rng.choice(STRINGS)
    if kind == "boolean":
        return rng.random() < 0.5
    return rng.randint(-20, 20)
