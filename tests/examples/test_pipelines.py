"""The five plain PySpark pipelines of ``examples/pipelines``, each run unchanged twice: under
PySpark (as ``python examples/pipelines/x.py --input ... --output ...`` would, in this process
on the tests' local SparkSession, whose ``stop`` the script's ``spark.stop()`` leaves running)
and under Tidal (the script with ``pyspark`` bound to Tidal, as ``tidal run`` runs it: in this
process for four of them, through the ``tidal run`` command for the fifth), each action a Tidal
job.
Both runs' outputs are checked row for row against DuckDB's SQL over the same input files (so
they equal each other): the cleaned orders, the sessions (window SQL), the star-schema
aggregate, the partitioned write and its one-day summary, the anti joins (``NOT EXISTS``)."""

from __future__ import annotations

import contextlib
import datetime
import io
import runpy
import sys
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from examples.pipelines import data
from examples.pipelines.outputs import OUTPUTS, read_output, run_pipeline, script_path, sort_rows
from jobmanager.model.config import MAX_SLOTS, NUMBER_OF_TASK_SLOTS

pytestmark = [pytest.mark.spark]

TIDAL_OPTIONS = {NUMBER_OF_TASK_SLOTS.key: 2, MAX_SLOTS.key: 2}
THROUGH_THE_COMMAND = {"missing_rows"}  # the others run in this process, on its Ray connection


@pytest.fixture(params=["pyspark", pytest.param("tidal", marks=pytest.mark.runtime)])
def engine(request) -> str:
    request.getfixturevalue("ray_cluster" if request.param == "tidal" else "spark_session")
    return request.param


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, str]:
    return data.write_inputs(tmp_path_factory.mktemp("pipeline-inputs"))


def run(
    name: str, inputs: dict[str, str], output: Path, engine: str, *extra: str
) -> dict[str, pa.Table]:
    """Run the pipeline under ``engine``; each of its outputs read back, rows sorted."""
    args = ["--input", inputs[name], "--output", str(output), *extra]
    if engine == "tidal" and name in THROUGH_THE_COMMAND:
        options = [f"-D{key}={value}" for key, value in TIDAL_OPTIONS.items()]
        result = run_pipeline(
            name, args, [sys.executable, "-m", "jobmanager", "run", "--no-dashboard", *options]
        )
        assert result.returncode == 0, f"{name} failed:\n{result.stderr[-4000:]}"
        printed = result.stdout
    elif engine == "tidal":
        printed = run_on_tidal(name, args)
    else:
        printed = run_on_pyspark(name, args)
    assert f"{name}:" in printed  # its summary line
    return {out: read_output(output / out, fmt) for out, fmt in OUTPUTS[name].items()}


def run_on_pyspark(name: str, args: list[str]) -> str:
    """What the script printed, run as a program on the tests' SparkSession (in UTC, as
    ``run_pipeline`` runs it)."""
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    printed, saved = io.StringIO(), sys.argv[:]
    sys.argv = [str(script_path(name)), *args]
    stop, SparkSession.stop = SparkSession.stop, lambda self: None
    try:
        with contextlib.redirect_stdout(printed):
            runpy.run_path(str(script_path(name)), run_name="__main__")
    finally:
        SparkSession.stop, sys.argv = stop, saved
        spark.conf.set("spark.sql.session.timeZone", zone)
    return printed.getvalue()


def run_on_tidal(name: str, args: list[str]) -> str:
    """What the script printed, run as ``tidal run`` runs it, in this process."""
    from jobmanager.client.client import Client
    from jobmanager.client.scripts import run_script

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code, jobs = run_script(str(script_path(name)), args, TIDAL_OPTIONS, Client)
    assert code == 0 and jobs, printed.getvalue()[-4000:]
    return printed.getvalue()


def duck(query: str) -> pa.Table:
    return sort_rows(duckdb.sql(query).to_arrow_table())


def assert_same_rows(actual: pa.Table, expected: pa.Table) -> None:
    """Same column names and the same rows (both sorted by every column); values compare by
    Python equality, so decimal(31,2) equals decimal(38,2) and int64 equals a DuckDB HUGEINT."""
    assert actual.column_names == expected.column_names
    assert actual.num_rows == expected.num_rows
    for index, (got, want) in enumerate(zip(actual.to_pylist(), expected.to_pylist())):
        assert got == want, f"row {index}: {got} != {want}"


def test_csv_cleanup(inputs, tmp_path, engine):
    orders = run("csv_cleanup", inputs, tmp_path, engine)["orders"]
    path = inputs["csv_cleanup"]
    expected = duck(f"""
        with typed as (
            select cast(trim(order_id) as integer) as order_id,
                   lower(trim(customer)) as customer, lower(trim(country)) as country,
                   lower(trim(status)) as status, cast(trim(amount) as decimal(12, 2)) as amount,
                   cast(trim(quantity) as integer) as quantity,
                   cast(trim(order_date) as date) as order_date,
                   cast(trim(updated_at) as timestamp) as updated_at
            from read_csv('{path}', header = true, all_varchar = true)),
        cleaned as (
            select distinct order_id, coalesce(customer, 'unknown') as customer, country,
                   coalesce(status, 'pending') as status, coalesce(amount, 0) as amount,
                   coalesce(quantity, 1) as quantity, order_date, updated_at
            from typed where order_id is not null and order_date is not null),
        ranked as (
            select *, row_number() over (partition by order_id order by updated_at desc) as rn
            from cleaned)
        select order_id, customer, country, status, amount, quantity, order_date, updated_at,
               amount >= 1000 as is_large
        from ranked where rn = 1""")
    assert_same_rows(orders, expected)
    ids = orders.column("order_id").to_pylist()
    assert len(ids) == len(set(ids)) and None not in ids
    raw_rows = duckdb.sql(
        f"select count(*) from read_csv('{path}', header = true, all_varchar = true)"
    ).fetchone()[0]
    assert 500 < len(ids) < 600 < raw_rows  # some dropped, duplicates and old versions removed
    assert set(orders.column("customer").to_pylist()) >= {"unknown", "alice martin"}


def test_sessionize(inputs, tmp_path, engine):
    outputs = run("sessionize", inputs, tmp_path, engine)
    events, sessions = outputs["events"], outputs["sessions"]
    path = inputs["sessionize"]
    expected = duck(f"""
        with clicks as (
            select distinct cast(user_id as integer) as user_id,
                   strptime(ts, '%Y-%m-%d %H:%M:%S') as ts, url
            from read_csv('{path}', header = true, all_varchar = true)),
        gaps as (
            select *, lag(ts) over (partition by user_id order by ts) as prev_ts from clicks),
        flagged as (
            select *, case when prev_ts is null or date_diff('second', prev_ts, ts) > 1800
                           then 1 else 0 end as new_session
            from gaps),
        numbered as (
            select *, cast(sum(new_session) over (partition by user_id order by ts
                rows between unbounded preceding and current row) as bigint) as session_number
            from flagged)
        select user_id, user_id || '-' || session_number as session_id, session_number,
               min(ts) as session_start, max(ts) as session_end, count(*) as events,
               count(distinct url) as distinct_pages,
               date_diff('second', min(ts), max(ts)) as duration_seconds
        from numbered group by user_id, session_number""")
    assert_same_rows(sessions, expected)
    assert sessions.num_rows > 2 * len(set(sessions.column("user_id").to_pylist()))

    rows = events.to_pylist()
    assert len(rows) == sum(sessions.column("events").to_pylist())
    per_session = Counter(row["session_id"] for row in rows)
    assert per_session == {row["session_id"]: row["events"] for row in sessions.to_pylist()}
    for row in rows:  # a session starts at a user's first click or after more than 30 minutes
        first = row["event_in_session"] == 1
        gap = row["gap_seconds"]
        assert first == (gap is None or gap > 1800), row
    gaps = Counter(row["gap_seconds"] for row in rows)
    assert gaps[1800] > 0 and gaps[1801] > 0  # both sides of the boundary are exercised
    numbers = {}
    for row in rows:
        numbers.setdefault(row["session_id"], []).append(row["event_in_session"])
    assert all(sorted(n) == list(range(1, len(n) + 1)) for n in numbers.values())


def test_star_schema(inputs, tmp_path, engine):
    revenue = run("star_schema", inputs, tmp_path, engine)["revenue"]
    star = inputs["star_schema"]
    expected = duck(f"""
        select d.year, coalesce(p.category, 'unknown') as category, s.region,
               sum(f.quantity * f.unit_price) as revenue, sum(f.quantity) as quantity,
               count(f.sale_id) as sales, count(distinct f.product_id) as products
        from read_parquet('{star}/sales.parquet') f
        join read_parquet('{star}/dim_date.parquet') d on f.date_key = d.date_key
        left join read_parquet('{star}/dim_product.parquet') p on f.product_id = p.product_id
        join read_parquet('{star}/dim_store.parquet') s on f.store_id = s.store_id
        group by d.year, coalesce(p.category, 'unknown'), s.region""")
    assert_same_rows(revenue, expected)
    assert "unknown" in revenue.column("category").to_pylist()
    # written in order: by year, then revenue from the largest
    written = read_output(tmp_path / "revenue", "parquet", sort=False).to_pylist()
    keys = [(row["year"], -row["revenue"]) for row in written]
    assert keys == sorted(keys) and len(written) == revenue.num_rows


def test_partitioned_write(inputs, tmp_path, engine):
    outputs = run("partitioned_write", inputs, tmp_path, engine, "--date", "2024-01-02")
    events, summary = outputs["events"], outputs["summary"]
    path = inputs["partitioned_write"]
    days = [f"2024-01-0{n}" for n in range(1, 6)]
    assert sorted(p.name for p in (tmp_path / "events").glob("date=*")) == [
        f"date={day}" for day in days
    ]
    assert events.num_rows == 1500
    assert all(row["event_time"].date().isoformat() == row["date"] for row in events.to_pylist())
    per_day = Counter(events.column("date").to_pylist())
    expected_per_day = dict(
        duckdb.sql(f"""
        select strftime(cast(event_time as timestamp), '%Y-%m-%d'), count(*)
        from read_csv('{path}', header = true, all_varchar = true) group by 1""").fetchall()
    )
    assert per_day == expected_per_day and set(per_day) == set(days)

    expected = duck(f"""
        with e as (
            select cast(event_time as timestamp) as event_time, cast(user_id as integer) as user_id,
                   event_type, cast(amount as decimal(10, 2)) as amount
            from read_csv('{path}', header = true, all_varchar = true))
        select event_type, count(*) as events, count(distinct user_id) as users,
               sum(amount) as amount, min(event_time) as first_event,
               max(event_time) as last_event, date '2024-01-02' as date
        from e where cast(event_time as date) = date '2024-01-02'
        group by event_type""")
    assert_same_rows(summary, expected)
    assert sum(summary.column("events").to_pylist()) == per_day["2024-01-02"]
    assert summary.column("date").to_pylist() == [datetime.date(2024, 1, 2)] * summary.num_rows


def test_missing_rows(inputs, tmp_path, engine):
    outputs = run("missing_rows", inputs, tmp_path, engine)
    shipping = inputs["missing_rows"]
    expected_orders = (
        f"read_csv('{shipping}/expected_orders.csv', header = true, all_varchar = true)"
    )
    shipments = f"read_csv('{shipping}/shipments.csv', header = true, all_varchar = true)"
    missing = duck(f"""
        select e.order_id, e.customer, e.order_date from {expected_orders} e
        where not exists (select 1 from {shipments} s where s.order_id = e.order_id)""")
    unexpected = duck(f"""
        select s.order_id, s.shipment_id, s.shipped_at, s.carrier from {shipments} s
        where not exists (select 1 from {expected_orders} e where e.order_id = s.order_id)""")
    assert_same_rows(outputs["missing"], missing)
    assert_same_rows(outputs["unexpected"], unexpected)
    assert 0 < missing.num_rows < 100
    assert outputs["unexpected"].column("order_id").null_count == 2  # no order id: no match
    # the CSV is written ordered by order id
    written = read_output(tmp_path / "missing", "csv", sort=False).column("order_id").to_pylist()
    assert [int(n) for n in written] == sorted(int(n) for n in written)
