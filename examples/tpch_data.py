"""TPC-H-shaped tables as Parquet: nation, customer, orders and lineitem, at any scale.

Not ``dbgen``: the values are drawn with numpy the way the TPC-H specification (section 4.2.3)
describes them, so the distributions that Q1, Q3 and the demo job depend on match -- order dates
uniform over 1992-01-01..1998-08-02, ship dates 1..121 days after the order date, return flag
and line status fixed by the receipt and ship dates against the spec's "current date"
1995-06-17, discounts 0.00..0.10, taxes 0.00..0.08, quantities 1..50, prices from the part key
formula, the five market segments, the 25 real nations with their region keys, only two thirds
of the customers placing orders, and sparse order keys (the first 8 of every 32). Only the
columns those queries and a little realism need are written.

Types: keys are int64; dates are date32; TPC-H's DECIMAL columns (prices, quantities,
discounts, taxes, balances) are float64, as most Spark TPC-H set-ups store them: numpy, Arrow
and Spark compute on them natively, and sums then differ from exact decimals only in the last
bits, so result checks compare money with a relative tolerance.

Generation is vectorised and deterministic: orders (with their lineitems) are drawn in chunks of
a fixed number of orders, each chunk from its own seed sequence ``(seed, table, chunk)``, so the
same scale and seed give the same rows on every machine. Each table is a directory of Parquet
part files of about 64 MiB on disk, in row groups of about 8 MiB, so a source can split it by
row group, or read a whole file in one split when the data volume per task is large. A hidden
``_tidal_tpch.json`` marker (Spark and Tidal's FileSource skip names starting with ``_``)
records scale and seed, and a table already generated for them is left alone.

    python examples/tpch_data.py --scale 0.1 --out /tmp/tpch
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script: the repository root, not examples/, comes first
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse  # noqa: E402
import datetime  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import fsspec  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from examples import parquet_parts  # noqa: E402
from examples.parquet_parts import PartWriter, generate_tables  # noqa: E402

__all__ = [
    "CURRENT_DATE",
    "MARKET_SEGMENTS",
    "NATIONS",
    "SCHEMAS",
    "TABLES",
    "generate",
    "row_counts",
]

TABLES = ("nation", "customer", "orders", "lineitem")

# (name, region key) in n_nationkey order, as in the specification.
NATIONS = (
    ("ALGERIA", 0),
    ("ARGENTINA", 1),
    ("BRAZIL", 1),
    ("CANADA", 1),
    ("EGYPT", 4),
    ("ETHIOPIA", 0),
    ("FRANCE", 3),
    ("GERMANY", 3),
    ("INDIA", 2),
    ("INDONESIA", 2),
    ("IRAN", 4),
    ("IRAQ", 4),
    ("JAPAN", 2),
    ("JORDAN", 4),
    ("KENYA", 0),
    ("MOROCCO", 0),
    ("MOZAMBIQUE", 0),
    ("PERU", 1),
    ("CHINA", 2),
    ("ROMANIA", 3),
    ("SAUDI ARABIA", 4),
    ("VIETNAM", 2),
    ("RUSSIA", 3),
    ("UNITED KINGDOM", 3),
    ("UNITED STATES", 1),
)
MARKET_SEGMENTS = ("AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD")
ORDER_PRIORITIES = ("1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW")
SHIP_MODES = ("REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB")

START_DATE = datetime.date(1992, 1, 1)
END_DATE = datetime.date(1998, 12, 31)
CURRENT_DATE = datetime.date(1995, 6, 17)
_LAST_ORDER_DATE = END_DATE - datetime.timedelta(days=151)
_EPOCH = datetime.date(1970, 1, 1)

CUSTOMERS_PER_SCALE = 150_000
ORDERS_PER_SCALE = 1_500_000
PARTS_PER_SCALE = 200_000
SUPPLIERS_PER_SCALE = 10_000

FILE_BYTES = parquet_parts.FILE_BYTES
ROW_GROUP_BYTES = parquet_parts.ROW_GROUP_BYTES
_ORDERS_PER_CHUNK = 250_000
_CUSTOMERS_PER_CHUNK = 500_000
_TABLE_CODES = {"customer": 1, "orders": 2}
_MARKER = "_tidal_tpch.json"
_FORMAT_VERSION = 2

SCHEMAS = {
    "nation": pa.schema(
        [
            ("n_nationkey", pa.int64()),
            ("n_name", pa.string()),
            ("n_regionkey", pa.int64()),
        ]
    ),
    "customer": pa.schema(
        [
            ("c_custkey", pa.int64()),
            ("c_name", pa.string()),
            ("c_nationkey", pa.int64()),
            ("c_acctbal", pa.float64()),
            ("c_mktsegment", pa.string()),
        ]
    ),
    "orders": pa.schema(
        [
            ("o_orderkey", pa.int64()),
            ("o_custkey", pa.int64()),
            ("o_orderstatus", pa.string()),
            ("o_totalprice", pa.float64()),
            ("o_orderdate", pa.date32()),
            ("o_orderpriority", pa.string()),
            ("o_shippriority", pa.int32()),
        ]
    ),
    "lineitem": pa.schema(
        [
            ("l_orderkey", pa.int64()),
            ("l_partkey", pa.int64()),
            ("l_suppkey", pa.int64()),
            ("l_linenumber", pa.int32()),
            ("l_quantity", pa.float64()),
            ("l_extendedprice", pa.float64()),
            ("l_discount", pa.float64()),
            ("l_tax", pa.float64()),
            ("l_returnflag", pa.string()),
            ("l_linestatus", pa.string()),
            ("l_shipdate", pa.date32()),
            ("l_commitdate", pa.date32()),
            ("l_receiptdate", pa.date32()),
            ("l_shipmode", pa.string()),
        ]
    ),
}


def row_counts(scale: float) -> dict[str, int]:
    """Rows of each table at ``scale``; lineitem has 1..7 lines per order (4 on average), so
    its count is known only after generation and given here as the expected value."""
    orders = _count(ORDERS_PER_SCALE, scale)
    return {
        "nation": len(NATIONS),
        "customer": _count(CUSTOMERS_PER_SCALE, scale),
        "orders": orders,
        "lineitem": 4 * orders,
    }


def generate(location: str | os.PathLike, scale: float, seed: int = 0) -> dict[str, str]:
    """The four tables under ``location`` (one directory each), generated unless already
    there; their paths. ``location`` may be any fsspec URL (``s3://bucket/tpch``): the tables
    are then generated in a local cache and uploaded, each table's marker last, so a table
    whose marker matches is whole."""
    location = os.fspath(location)
    if "://" not in location or location.startswith("file://"):
        return _generate_local(location.removeprefix("file://"), scale, seed)
    cache = os.path.join(tempfile.gettempdir(), f"tidal-tpch-sf{scale:g}-seed{seed}")
    local = _generate_local(cache, scale, seed)
    fs, root = fsspec.core.url_to_fs(location)
    for table, path in local.items():
        remote = f"{root.rstrip('/')}/{table}"
        marker = Path(path) / _MARKER
        try:
            if fs.cat_file(f"{remote}/{_MARKER}").decode() == marker.read_text():
                continue
        except (OSError, ValueError):
            pass
        if fs.exists(remote):
            fs.rm(remote, recursive=True)
        for file in sorted(Path(path).iterdir()):
            if file.name != _MARKER:
                fs.put_file(str(file), f"{remote}/{file.name}")
        fs.put_file(str(marker), f"{remote}/{_MARKER}")
    return {table: f"{location.rstrip('/')}/{table}" for table in TABLES}


def _generate_local(out_dir: str | os.PathLike, scale: float, seed: int = 0) -> dict[str, str]:
    """Write the four tables under ``out_dir`` (one directory each) and return their paths.

    A table whose marker says it was generated for this scale and seed is kept; any other
    content of its directory is replaced. A table appears whole or not at all: it is written
    beside its final place and renamed onto it."""
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    out = Path(out_dir).resolve()
    wanted = {"scale": float(scale), "seed": int(seed), "version": _FORMAT_VERSION}
    paths = {table: str(out / table) for table in TABLES}
    generate_tables(
        out,
        _MARKER,
        wanted,
        {
            ("nation",): lambda dirs: _write_nation(dirs["nation"]),
            ("customer",): lambda dirs: _write_customers(dirs["customer"], scale, seed),
            ("orders", "lineitem"): lambda dirs: _write_orders_and_lineitems(
                dirs["orders"], dirs["lineitem"], scale, seed
            ),
        },
    )
    return paths


def _count(per_scale: int, scale: float) -> int:
    return max(1, round(per_scale * scale))


def _part_writer(directory: Path, table: str) -> PartWriter:
    """Part files in the layout this module's FILE_BYTES and ROW_GROUP_BYTES ask for."""
    return PartWriter(directory, SCHEMAS[table], FILE_BYTES, ROW_GROUP_BYTES)


def _rng(seed: int, table: str, chunk: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, _TABLE_CODES[table], chunk]))


def _write_nation(directory: Path) -> dict[str, int]:
    table = pa.table(
        {
            "n_nationkey": pa.array(np.arange(len(NATIONS)), pa.int64()),
            "n_name": [name for name, _ in NATIONS],
            "n_regionkey": pa.array([region for _, region in NATIONS], pa.int64()),
        },
        schema=SCHEMAS["nation"],
    )
    pq.write_table(table, directory / "part-00000.parquet")
    return {"nation": table.num_rows}


def _write_customers(directory: Path, scale: float, seed: int) -> dict[str, int]:
    total = _count(CUSTOMERS_PER_SCALE, scale)
    with _part_writer(directory, "customer") as writer:
        for chunk, first in enumerate(range(0, total, _CUSTOMERS_PER_CHUNK)):
            keys = np.arange(first + 1, min(total, first + _CUSTOMERS_PER_CHUNK) + 1)
            writer.write(_customers(keys, _rng(seed, "customer", chunk)))
    return {"customer": total}


def _customers(keys: np.ndarray, rng: np.random.Generator) -> pa.Table:
    n = len(keys)
    key_array = pa.array(keys, pa.int64())
    names = pc.binary_join_element_wise(
        "Customer#", pc.utf8_lpad(pc.cast(key_array, pa.string()), 9, "0"), ""
    )
    return pa.table(
        {
            "c_custkey": key_array,
            "c_name": names,
            "c_nationkey": rng.integers(0, len(NATIONS), n, dtype=np.int64),
            "c_acctbal": rng.integers(-99_999, 1_000_000, n) / 100.0,
            "c_mktsegment": _choice(MARKET_SEGMENTS, rng.integers(0, len(MARKET_SEGMENTS), n)),
        },
        schema=SCHEMAS["customer"],
    )


def _write_orders_and_lineitems(
    orders_dir: Path, lineitem_dir: Path, scale: float, seed: int
) -> dict[str, int]:
    total = _count(ORDERS_PER_SCALE, scale)
    customers = _count(CUSTOMERS_PER_SCALE, scale)
    parts = _count(PARTS_PER_SCALE, scale)
    suppliers = _count(SUPPLIERS_PER_SCALE, scale)
    lines = 0
    with (
        _part_writer(orders_dir, "orders") as orders_writer,
        _part_writer(lineitem_dir, "lineitem") as lineitem_writer,
    ):
        for chunk, first in enumerate(range(0, total, _ORDERS_PER_CHUNK)):
            count = min(_ORDERS_PER_CHUNK, total - first)
            orders, lineitems = _orders_chunk(
                first, count, customers, parts, suppliers, _rng(seed, "orders", chunk)
            )
            orders_writer.write(orders)
            lineitem_writer.write(lineitems)
            lines += lineitems.num_rows
    return {"orders": total, "lineitem": lines}


def _orders_chunk(
    first: int, n: int, customers: int, parts: int, suppliers: int, rng: np.random.Generator
) -> tuple[pa.Table, pa.Table]:
    """``n`` orders starting at order index ``first``, and their lineitems."""
    index = np.arange(first, first + n, dtype=np.int64)
    order_keys = (index // 8) * 32 + index % 8 + 1
    # Customers whose key is a multiple of 3 place no orders: draw among the others.
    ordering = max(1, customers - customers // 3)
    drawn = rng.integers(0, ordering, n, dtype=np.int64)
    cust_keys = np.minimum(drawn + drawn // 2 + 1, customers)
    order_days = _days(START_DATE) + rng.integers(
        0, (_LAST_ORDER_DATE - START_DATE).days + 1, n, dtype=np.int32
    )

    per_order = rng.integers(1, 8, n)
    owner = np.repeat(np.arange(n), per_order)
    starts = np.cumsum(per_order) - per_order
    m = len(owner)
    line_numbers = (np.arange(m) - starts[owner] + 1).astype(np.int32)
    part_keys = rng.integers(1, parts + 1, m, dtype=np.int64)
    quantity = rng.integers(1, 51, m).astype(np.float64)
    price = np.round(quantity * _retail_price(part_keys), 2)
    discount = rng.integers(0, 11, m) / 100.0
    tax = rng.integers(0, 9, m) / 100.0
    ship = order_days[owner] + rng.integers(1, 122, m, dtype=np.int32)
    commit = order_days[owner] + rng.integers(30, 91, m, dtype=np.int32)
    receipt = ship + rng.integers(1, 31, m, dtype=np.int32)
    current = _days(CURRENT_DATE)
    returned = np.where(rng.integers(0, 2, m) == 0, 0, 1)
    flag_index = np.where(receipt <= current, returned, 2)
    open_line = ship > current
    supp_keys = _supplier_keys(part_keys, rng.integers(0, 4, m), suppliers)
    lineitems = pa.table(
        {
            "l_orderkey": order_keys[owner],
            "l_partkey": part_keys,
            "l_suppkey": supp_keys,
            "l_linenumber": line_numbers,
            "l_quantity": quantity,
            "l_extendedprice": price,
            "l_discount": discount,
            "l_tax": tax,
            "l_returnflag": _choice(("R", "A", "N"), flag_index),
            "l_linestatus": _choice(("F", "O"), open_line.astype(np.int64)),
            "l_shipdate": _dates(ship),
            "l_commitdate": _dates(commit),
            "l_receiptdate": _dates(receipt),
            "l_shipmode": _choice(SHIP_MODES, rng.integers(0, len(SHIP_MODES), m)),
        },
        schema=SCHEMAS["lineitem"],
    )

    charged = np.round(price * (1 + tax) * (1 - discount), 2)
    total_price = np.round(np.bincount(owner, weights=charged, minlength=n), 2)
    open_lines = np.bincount(owner, weights=open_line, minlength=n)
    status = np.where(open_lines == 0, 0, np.where(open_lines == per_order, 1, 2))
    orders = pa.table(
        {
            "o_orderkey": order_keys,
            "o_custkey": cust_keys,
            "o_orderstatus": _choice(("F", "O", "P"), status),
            "o_totalprice": total_price,
            "o_orderdate": _dates(order_days),
            "o_orderpriority": _choice(ORDER_PRIORITIES, rng.integers(0, 5, n)),
            "o_shippriority": np.zeros(n, dtype=np.int32),
        },
        schema=SCHEMAS["orders"],
    )
    return orders, lineitems


def _retail_price(part_keys: np.ndarray) -> np.ndarray:
    """P_RETAILPRICE of the specification, in dollars."""
    cents = 90_000 + (part_keys // 10) % 20_001 + 100 * (part_keys % 1_000)
    return cents / 100.0


def _supplier_keys(part_keys: np.ndarray, which: np.ndarray, suppliers: int) -> np.ndarray:
    """One of the four suppliers of each part, by the specification's PARTSUPP formula."""
    s = suppliers
    return (part_keys + which * (s // 4 + (part_keys - 1) // s)) % s + 1


def _choice(values: tuple[str, ...], indices: np.ndarray) -> pa.Array:
    """``values[indices]`` as a plain string array, built by Arrow rather than per row."""
    dictionary = pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), pa.array(values))
    return dictionary.cast(pa.string())


def _days(day: datetime.date) -> int:
    return (day - _EPOCH).days


def _dates(days: np.ndarray) -> pa.Array:
    return pa.array(days.astype(np.int32), pa.int32()).cast(pa.date32())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor")
    parser.add_argument("--out", required=True, help="directory to hold one folder per table")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    paths = generate(args.out, args.scale, args.seed)
    for table, path in paths.items():
        files = sorted(Path(path).glob("*.parquet"))
        rows = sum(pq.read_metadata(f).num_rows for f in files)
        size = sum(f.stat().st_size for f in files)
        print(
            f"{table:<9} {rows:>12,} rows  {len(files):>3} files  {size / 2**20:9.1f} MiB  {path}"
        )
    print(f"scale {args.scale}, seed {args.seed}: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
