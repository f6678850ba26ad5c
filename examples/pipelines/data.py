"""Deterministic inputs for the five plain PySpark pipelines of this folder.

Pure Python and pyarrow (no Spark), from one fixed seed, so every run writes the same bytes.
Small (a few thousand rows at most) but made to exercise what each pipeline does:

- ``csv_cleanup``: ``orders_raw.csv``, every field a string: stray spaces, mixed case, empty
  amounts, quantities, customers and statuses, a few rows without an order id or a date (to be
  dropped), copies of rows that differ only in spaces and case, and orders updated twice (the
  later ``updated_at`` wins).
- ``sessionize``: ``clicks.csv`` (user_id, ts as ``yyyy-MM-dd HH:mm:ss``, url): gaps of minutes,
  gaps of exactly 30 minutes (same session), 30 minutes and one second and hours (new session),
  a few clicks recorded twice; within a user no two distinct clicks share a second.
- ``star_schema``: ``star/`` with ``sales.parquet`` and the dimensions ``dim_date.parquet``,
  ``dim_product.parquet``, ``dim_store.parquet``; a few sales name a product missing from its
  dimension (kept, category ``unknown``) or a store missing from its (dropped).
- ``partitioned_write``: ``events.csv`` over five days, 2024-01-01 .. 2024-01-05.
- ``missing_rows``: ``shipping/`` with ``expected_orders.csv`` and ``shipments.csv``: some
  expected orders never shipped, some shipped twice, some shipments of orders nobody expected,
  two shipments without an order id.

``write_inputs(directory)`` returns each pipeline's ``--input`` path by pipeline name.

    python examples/pipelines/data.py /tmp/pipeline-inputs
"""

from __future__ import annotations

import argparse
import csv
import datetime
import random
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["SEED", "write_inputs"]

SEED = 20240102
START = datetime.datetime(2024, 1, 1)


def write_inputs(directory) -> dict[str, str]:
    """Write every pipeline's input under ``directory``; pipeline name -> its ``--input`` path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    return {
        "csv_cleanup": _orders_raw(directory / "orders_raw.csv", random.Random(SEED + 1)),
        "sessionize": _clicks(directory / "clicks.csv", random.Random(SEED + 2)),
        "star_schema": _star(directory / "star", random.Random(SEED + 3)),
        "partitioned_write": _events(directory / "events.csv", random.Random(SEED + 4)),
        "missing_rows": _shipping(directory / "shipping", random.Random(SEED + 5)),
    }


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> str:
    with open(path, "w", newline="") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return str(path)


def _timestamp(value: datetime.datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S")


# --- csv_cleanup ----------------------------------------------------------------------------

CUSTOMERS = [
    "Alice Martin",
    "Bob Chen",
    "Carla Diaz",
    "Dev Patel",
    "Emma Rossi",
    "Farid Haddad",
    "Grace Kim",
    "Hugo Weber",
    "Ines Sousa",
    "Jonas Berg",
]
COUNTRIES = ["US", "DE", "FR", "BR", "JP"]
STATUSES = ["pending", "shipped", "delivered", "cancelled"]


def _messy(rng: random.Random, value: str) -> str:
    """The same value with stray spaces and a random case (never all blanks)."""
    case = rng.choice([str.lower, str.upper, str.title, lambda text: text])
    return " " * rng.choice([0, 0, 1, 2]) + case(value) + " " * rng.choice([0, 0, 1, 3])


def _orders_raw(path: Path, rng: random.Random) -> str:
    header = [
        "order_id",
        "customer",
        "country",
        "status",
        "amount",
        "quantity",
        "order_date",
        "updated_at",
    ]
    rows = []
    for order_id in range(1, 601):
        versions = 2 if rng.random() < 0.15 else 1
        updated = START + datetime.timedelta(days=rng.randrange(30), seconds=rng.randrange(86400))
        order_date = updated.date()
        customer = rng.choice(CUSTOMERS)
        country = rng.choice(COUNTRIES)
        for _ in range(versions):
            cents = rng.randrange(100, 500000)
            amount = f"{cents // 100}" if cents % 100 == 0 else f"{cents / 100:.2f}"
            fields = {
                "order_id": str(order_id),
                "customer": customer,
                "country": country,
                "status": rng.choice(STATUSES),
                "amount": amount,
                "quantity": str(rng.randrange(1, 20)),
                "order_date": order_date.isoformat(),
                "updated_at": _timestamp(updated),
            }
            for name, share in (
                ("customer", 0.03),
                ("status", 0.03),
                ("amount", 0.05),
                ("quantity", 0.04),
                ("order_date", 0.02),
                ("order_id", 0.01),
            ):
                if rng.random() < share:
                    fields[name] = ""
            copies = 1 + (rng.random() < 0.10) + (rng.random() < 0.03)
            for _ in range(copies):  # copies differ only in spaces and case
                row = dict(fields)
                for name in ("order_id", "amount", "quantity", "order_date", "updated_at"):
                    if row[name] and rng.random() < 0.3:
                        row[name] = (
                            " " * rng.randrange(1, 3) + row[name] + " " * rng.randrange(0, 2)
                        )
                for name in ("customer", "country", "status"):
                    if row[name]:
                        row[name] = _messy(rng, row[name])
                rows.append([row[name] for name in header])
            updated += datetime.timedelta(hours=rng.randrange(1, 72), seconds=rng.randrange(60))
    rng.shuffle(rows)
    return _write_csv(path, header, rows)


# --- sessionize -----------------------------------------------------------------------------

PAGES = ["/", "/search", "/product/1", "/product/2", "/product/3", "/cart", "/checkout", "/help"]


def _clicks(path: Path, rng: random.Random) -> str:
    rows = []
    for user_id in range(1, 41):
        ts = START + datetime.timedelta(hours=rng.randrange(0, 48), seconds=rng.randrange(3600))
        for _ in range(rng.randrange(5, 60)):
            rows.append([str(user_id), _timestamp(ts), rng.choice(PAGES)])
            if rng.random() < 0.03:  # the same click recorded twice
                rows.append(list(rows[-1]))
            draw = rng.random()
            if draw < 0.04:
                gap = 1800  # exactly 30 minutes: still the same session
            elif draw < 0.07:
                gap = 1801  # 30 minutes and a second: a new session
            elif draw < 0.20:
                gap = rng.randrange(1801, 6 * 3600)
            else:
                gap = rng.randrange(1, 600)
            ts += datetime.timedelta(seconds=gap)
    rng.shuffle(rows)
    return _write_csv(path, ["user_id", "ts", "url"], rows)


# --- star_schema ----------------------------------------------------------------------------

CATEGORIES = ["books", "garden", "kitchen", "music", "sports", "toys"]
REGIONS = {
    "north": ["Oslo", "Bergen", "Tromso"],
    "south": ["Seville", "Malaga", "Cadiz"],
    "east": ["Krakow", "Lviv", "Brno"],
    "west": ["Porto", "Nantes", "Cork"],
}


def _star(directory: Path, rng: random.Random) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    days = [datetime.date(2022, 1, 1) + datetime.timedelta(days=n) for n in range(3 * 365 + 1)]
    pq.write_table(
        pa.table(
            {
                "date_key": pa.array([int(day.strftime("%Y%m%d")) for day in days], pa.int32()),
                "date": pa.array(days, pa.date32()),
                "year": pa.array([day.year for day in days], pa.int32()),
                "quarter": pa.array([(day.month - 1) // 3 + 1 for day in days], pa.int32()),
                "month": pa.array([day.month for day in days], pa.int32()),
            }
        ),
        directory / "dim_date.parquet",
    )
    products = list(range(1, 61))
    pq.write_table(
        pa.table(
            {
                "product_id": pa.array(products, pa.int32()),
                "product_name": [f"product {n}" for n in products],
                "category": [CATEGORIES[rng.randrange(len(CATEGORIES))] for _ in products],
            }
        ),
        directory / "dim_product.parquet",
    )
    stores = [(region, city) for region, cities in REGIONS.items() for city in cities]
    pq.write_table(
        pa.table(
            {
                "store_id": pa.array(range(1, len(stores) + 1), pa.int32()),
                "city": [city for _, city in stores],
                "region": [region for region, _ in stores],
            }
        ),
        directory / "dim_store.parquet",
    )
    count = 3000
    product_ids = [999 if rng.random() < 0.02 else rng.choice(products) for _ in range(count)]
    store_ids = [
        99 if rng.random() < 0.01 else rng.randrange(1, len(stores) + 1) for _ in range(count)
    ]
    pq.write_table(
        pa.table(
            {
                "sale_id": pa.array(range(1, count + 1), pa.int64()),
                "date_key": pa.array(
                    [int(rng.choice(days).strftime("%Y%m%d")) for _ in range(count)], pa.int32()
                ),
                "product_id": pa.array(product_ids, pa.int32()),
                "store_id": pa.array(store_ids, pa.int32()),
                "quantity": pa.array([rng.randrange(1, 10) for _ in range(count)], pa.int32()),
                "unit_price": pa.array(
                    [Decimal(rng.randrange(99, 20000)) / 100 for _ in range(count)],
                    pa.decimal128(10, 2),
                ),
            }
        ),
        directory / "sales.parquet",
    )
    return str(directory)


# --- partitioned_write ----------------------------------------------------------------------

EVENT_TYPES = ["view", "click", "add_to_cart", "purchase"]


def _events(path: Path, rng: random.Random) -> str:
    rows = []
    for event_id in range(1, 1501):
        at = START + datetime.timedelta(seconds=rng.randrange(5 * 86400))
        kind = rng.choices(EVENT_TYPES, weights=[50, 30, 12, 8])[0]
        amount = f"{rng.randrange(100, 30000) / 100:.2f}" if kind == "purchase" else ""
        rows.append([str(event_id), _timestamp(at), str(rng.randrange(1, 200)), kind, amount])
    return _write_csv(path, ["event_id", "event_time", "user_id", "event_type", "amount"], rows)


# --- missing_rows ---------------------------------------------------------------------------

CARRIERS = ["dhl", "ups", "fedex", "post"]


def _shipping(directory: Path, rng: random.Random) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    expected = []
    for order_id in range(1001, 1501):
        day = datetime.date(2024, 1, 1) + datetime.timedelta(days=rng.randrange(20))
        expected.append([str(order_id), rng.choice(CUSTOMERS), day.isoformat()])
    _write_csv(directory / "expected_orders.csv", ["order_id", "customer", "order_date"], expected)
    shipped = [row[0] for row in expected if rng.random() < 0.92]
    shipped += rng.sample(shipped, 20)  # shipped twice
    shipped += [str(order_id) for order_id in rng.sample(range(9000, 9100), 10)]  # unexpected
    shipped += ["", ""]  # no order id
    rng.shuffle(shipped)
    shipments = [
        [
            str(n),
            order_id,
            _timestamp(START + datetime.timedelta(seconds=rng.randrange(25 * 86400))),
            rng.choice(CARRIERS),
        ]
        for n, order_id in enumerate(shipped, start=1)
    ]
    _write_csv(
        directory / "shipments.csv", ["shipment_id", "order_id", "shipped_at", "carrier"], shipments
    )
    return str(directory)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", default="/tmp/tidal-pipeline-inputs")
    args = parser.parse_args(argv)
    for name, path in write_inputs(args.directory).items():
        print(f"{name}: {path}")


if __name__ == "__main__":
    main()
