"""``Client.sql`` writing as Spark's ``df.write`` does, on a real local Ray cluster with real
PySpark: an output partitioned by a column, then appended to, read back by plain PySpark with
the same rows and partition values (and by Tidal's catalogue, naming the partition value in
the query); a CSV output with a header read back by PySpark."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobmanager import Client
from jobmanager.model.config import NUMBER_OF_TASK_SLOTS
from tests.jobmanager.runtime.jobs import FAST

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

CONFIG = {**FAST, NUMBER_OF_TASK_SLOTS.key: 2}
DAYS = [datetime.date(2024, 1, 1), datetime.date(2024, 1, 2), None]


@pytest.fixture(scope="module")
def events(tmp_path_factory):
    path = tmp_path_factory.mktemp("sink-shapes") / "events.parquet"
    pq.write_table(
        pa.table(
            {
                "d": [DAYS[i % 3] for i in range(30)],
                "v": list(range(30)),
                "s": [f"name {i % 4}" for i in range(30)],
            }
        ),
        path,
    )
    return str(path)


def rows(frame) -> list[tuple]:
    return sorted(tuple(r) for r in frame.collect())


def test_a_partitioned_output_and_an_append_to_it_read_back_by_pyspark(
    ray_cluster, spark_session, events, tmp_path
):
    client = Client()
    out = str(tmp_path / "by_day")
    query = "SELECT v, d FROM events WHERE v < 20"
    done = client.sql(query, {"events": events}, CONFIG, output=out, partition_by=("d",)).wait(240)
    assert done.succeeded, done.cause
    assert sorted(p.name for p in (tmp_path / "by_day").iterdir()) == [
        "_SUCCESS",
        "d=2024-01-01",
        "d=2024-01-02",
        "d=__HIVE_DEFAULT_PARTITION__",
    ]
    expected = sorted((v, DAYS[v % 3]) for v in range(20))
    assert rows(spark_session.read.parquet(out).select("v", "d")) == expected
    again = client.sql(
        "SELECT v, d FROM events WHERE v >= 20",
        {"events": events},
        CONFIG,
        output=out,
        partition_by=("d",),
        mode="append",
    ).wait(240)
    assert again.succeeded, again.cause
    everything = sorted((v, DAYS[v % 3]) for v in range(30))
    assert rows(spark_session.read.parquet(out).select("v", "d")) == everything
    back = client.sql(
        "SELECT v FROM t WHERE d = DATE '2024-01-02'",
        {"t": {"path": out, "partitioning": "hive"}},
        CONFIG,
    ).wait(240)
    assert back.succeeded, back.cause
    assert sorted(back.to_arrow().column("v").to_pylist()) == [v for v in range(30) if v % 3 == 1]


def test_a_csv_output_with_a_header_read_back_by_pyspark(
    ray_cluster, spark_session, events, tmp_path
):
    out = str(tmp_path / "csv")
    done = (
        Client()
        .sql(
            "SELECT v, s, d FROM events",
            {"events": events},
            CONFIG,
            output=out,
            output_format="csv",
            csv_header=True,
        )
        .wait(240)
    )
    assert done.succeeded, done.cause
    frame = spark_session.read.option("header", True).option("inferSchema", True).csv(out)
    assert frame.columns == ["v", "s", "d"]
    assert rows(frame) == sorted((v, f"name {v % 4}", DAYS[v % 3]) for v in range(30))
