"""The real TPC-H: the 8 tables from DuckDB's ``dbgen`` as Parquet, its 22 queries, its answers.

Tidal's SQL front end is checked and measured against the specification's own data and query
texts, not a look-alike: DuckDB's TPC-H extension (the ``duckdb-extension-tpch`` package, loaded
from the file it ships, so no network) runs the reference ``dbgen`` and hands out the 22 queries
with the specification's validation parameters. No query is rewritten for Tidal.

- ``generate(directory, scale)`` writes each table as ``<directory>/<table>/part-NNNNN.parquet``,
  with dbgen's types kept: DECIMAL(15,2) money as decimal128(15, 2), dates as date32, BIGINT
  keys as int64, and INTEGER columns (the nation and region keys, ``o_shippriority``,
  ``p_size``) as int32, since that is what dbgen makes. The layout is ``examples/tpch_data.py``'s
  (``parquet_parts``): part files of about 64 MiB in row groups of about 8 MiB, so sources can
  split them, a hidden ``_tidal_tpch_dbgen.json`` marker with the scale (and layout and DuckDB
  version), a table already generated for them left alone, and each table written beside its
  place and renamed onto it. Measured here (2 cores, dbgen's own time included): scale 0.01 in
  0.8 s (2.8 s with the machine busy), scale 1 in 18 s (329 MiB of Parquet: lineitem's
  6,001,215 rows in 4 files of 8 row groups, 210 MiB).
- ``queries()``: the 22 query texts, ``{1: "SELECT ...", ..., 22: ...}``.
- ``duckdb_answer(directory, query)``: DuckDB's answer to a query text over views of the same
  Parquet files, so the reference and the engine under test read identical bytes.

    python examples/tpch_dbgen.py --scale 1 --out /tmp/tpch-dbgen
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script: the repository root, not examples/, comes first
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse  # noqa: E402
import functools  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

import duckdb  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from examples.parquet_parts import (  # noqa: E402
    FILE_BYTES,
    ROW_GROUP_BYTES,
    PartWriter,
    generate_tables,
)

__all__ = ["LAYOUTS", "TABLES", "duckdb_answer", "duckdb_answer_over", "generate", "queries"]

TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")

LAYOUTS = ("parts", "duckdb")
_MARKER = "_tidal_tpch_dbgen.json"
_FORMAT_VERSION = 1
_BATCH_ROWS = 262_144


def generate(
    directory: str | os.PathLike,
    scale: float,
    *,
    file_bytes: int = FILE_BYTES,
    row_group_bytes: int = ROW_GROUP_BYTES,
    layout: str = "parts",
) -> dict[str, str]:
    """The 8 tables under ``directory`` (one folder each), generated unless already there for
    this scale and layout; their paths by name. dbgen runs once, and only if a table is
    missing. ``layout``: ``parts``, part files of ``file_bytes`` in row groups of
    ``row_group_bytes`` on disk; or ``duckdb``, one file a table as DuckDB's ``COPY ... TO``
    writes it (its own row groups of 122,880 rows), as a user's tool leaves a table."""
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    out = Path(directory).resolve()
    wanted = {"scale": float(scale), "duckdb": duckdb.__version__, "version": _FORMAT_VERSION}
    wanted |= (
        {"file_bytes": file_bytes, "row_group_bytes": row_group_bytes}
        if layout == "parts"
        else {"layout": layout}
    )

    @functools.cache
    def generated() -> duckdb.DuckDBPyConnection:
        connection = _tpch_connection()
        connection.execute(f"CALL dbgen(sf={float(scale)!r})")
        return connection

    def copier(table: str):
        def write(staging: dict[str, Path]) -> dict[str, int]:
            target = _sql_string(str(staging[table] / f"{table}.parquet"))
            generated().execute(f"COPY {table} TO {target} (FORMAT parquet)")
            return {table: generated().execute(f"SELECT count(*) FROM {table}").fetchone()[0]}

        return write

    def writer(table: str):
        def write(staging: dict[str, Path]) -> dict[str, int]:
            rows = generated().execute(f"SELECT * FROM {table}").to_arrow_reader(_BATCH_ROWS)
            count = 0
            with PartWriter(staging[table], rows.schema, file_bytes, row_group_bytes) as parts:
                for batch in rows:
                    parts.write(pa.Table.from_batches([batch], rows.schema))
                    count += batch.num_rows
            return {table: count}

        return write

    try:
        write = writer if layout == "parts" else copier
        generate_tables(out, _MARKER, wanted, {(table,): write(table) for table in TABLES})
    finally:
        if generated.cache_info().currsize:
            generated().close()
    return {table: str(out / table) for table in TABLES}


def queries() -> dict[int, str]:
    """The 22 TPC-H query texts by number, as DuckDB's extension gives them (the
    specification's, with its validation parameters)."""
    return dict(_queries())


@functools.cache
def _queries() -> tuple[tuple[int, str], ...]:
    with _tpch_connection() as connection:
        rows = connection.execute("SELECT query_nr, query FROM tpch_queries()").fetchall()
    return tuple((int(number), text) for number, text in sorted(rows))


def duckdb_answer(directory: str | os.PathLike, query: str) -> pa.Table:
    """DuckDB's answer to ``query`` over views of the Parquet tables under ``directory``
    (``CREATE VIEW lineitem AS SELECT * FROM read_parquet('<directory>/lineitem/*.parquet')``
    and so on), columns in the query's order."""
    root = Path(directory).resolve()
    return duckdb_answer_over({table: str(root / table) for table in TABLES}, query)


def duckdb_answer_over(tables: dict[str, str], query: str) -> pa.Table:
    """DuckDB's answer to ``query`` over a view of each table's Parquet directory."""
    with duckdb.connect() as connection:
        connection.execute("SET enable_progress_bar = false")
        for table, path in tables.items():
            files = _sql_string(str(Path(path) / "*.parquet"))
            connection.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet({files})")
        return connection.execute(query).to_arrow_table()


def _tpch_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the TPC-H extension loaded from the file its package ships."""
    import duckdb_extension_tpch

    extension = (
        Path(duckdb_extension_tpch.__file__).parent
        / "extensions"
        / f"v{duckdb.__version__}"
        / "tpch.duckdb_extension"
    )
    connection = duckdb.connect()
    connection.execute("SET enable_progress_bar = false")
    connection.execute(f"LOAD {_sql_string(str(extension))}")
    return connection


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor")
    parser.add_argument("--out", required=True, help="directory to hold one folder per table")
    parser.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="parts",
        help="part files of row groups, or one file a table as DuckDB writes it",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    paths = generate(args.out, args.scale, layout=args.layout)
    for table, path in paths.items():
        files = sorted(Path(path).glob("*.parquet"))
        rows = sum(pq.read_metadata(f).num_rows for f in files)
        size = sum(f.stat().st_size for f in files)
        print(
            f"{table:<9} {rows:>12,} rows  {len(files):>3} files  {size / 2**20:9.1f} MiB  {path}"
        )
    print(f"scale {args.scale:g}: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
