"""Joins decided at run time (FLIP-470) on a real local Ray cluster with real PySpark, through
``Client.sql``: a table its listing calls large that a filter leaves a few rows of is broadcast
to the other side's tasks, and a table listed small that a join blows up is not. Each answer
is DuckDB's over the same files, and the same as with ``strategy: NONE``."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from examples.compare import sql_difference
from examples.tpch_dbgen import duckdb_answer_over
from jobmanager import Client
from jobmanager.messages import events as ev
from jobmanager.model.config import (
    ADAPTIVE_BROADCAST_JOIN_STRATEGY,
    AVG_DATA_VOLUME_PER_TASK,
    BROADCAST_THRESHOLD,
    MAX_SLOTS,
    NUMBER_OF_TASK_SLOTS,
    RESTART_STRATEGY,
)
from tests.jobmanager.runtime.jobs import FAST

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

ROWS = 40_000
CONFIG = {
    **FAST,
    NUMBER_OF_TASK_SLOTS.key: 2,
    MAX_SLOTS.key: 2,
    BROADCAST_THRESHOLD.key: "64 kb",
    AVG_DATA_VOLUME_PER_TASK.key: "128 kb",
    RESTART_STRATEGY.key: "none",
}
STRATEGY = ADAPTIVE_BROADCAST_JOIN_STRATEGY.key

FILTERED = """
SELECT o.o_region, SUM(f.f_amount) AS total, COUNT(*) AS n
FROM facts f JOIN orders o ON f.f_order = o.o_id
WHERE o.o_note = 'rare'
GROUP BY o.o_region
"""
BLOWN_UP = """
SELECT d.d_kind, COUNT(*) AS n, SUM(f.f_amount) AS total
FROM facts f
JOIN (SELECT a.s_key, a.s_kind AS d_kind FROM small a JOIN small b ON a.s_group = b.s_group) d
  ON f.f_bucket = d.s_key
GROUP BY d.d_kind
"""


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, str]:
    """``facts`` and ``orders`` both well over the threshold as listed; only 20 orders are
    ``rare``. ``small`` is 2 KiB as listed, 200 rows in one group: joined with itself, 40,000."""
    root = tmp_path_factory.mktemp("joins")
    ids = pa.array(range(ROWS), pa.int64())
    written = {
        "facts": pa.table({"f_order": pa.array([i * 7 % ROWS for i in range(ROWS)], pa.int64()),
                           "f_bucket": pa.array([i * 7 % ROWS % 50 for i in range(ROWS)], pa.int64()),
                           "f_amount": ids}),
        "orders": pa.table({"o_id": ids, "o_region": pa.array([i % 5 for i in range(ROWS)],
                                                              pa.int64()),
                            "o_note": ["rare" if i % 2000 == 0 else f"note {i}"
                                       for i in range(ROWS)]}),
        "small": pa.table({"s_key": pa.array(range(200), pa.int64()),
                           "s_kind": [f"k{i % 3}" for i in range(200)],
                           "s_group": pa.array([0] * 200, pa.int64())}),
    }  # fmt: skip
    paths = {}
    for name, table in written.items():
        (root / name).mkdir()
        for part in range(2):
            half = table.slice(part * table.num_rows // 2, table.num_rows // 2)
            pq.write_table(half, root / name / f"part-{part}.parquet", row_group_size=4000)
        paths[name] = str(root / name)
    return paths


@pytest.fixture(scope="module")
def client(ray_cluster):
    return Client()


def run(client, tables, query: str, strategy: str):
    handle = client.sql(query, tables=tables, config={**CONFIG, STRATEGY: strategy})
    result = handle.wait(timeout=240)
    assert result.succeeded, result.cause
    decisions = [
        join
        for event in handle.events()
        if type(event) is ev.VertexParallelismDecided
        for join in event.joins
    ]
    answer = result.to_arrow()
    handle.release()
    return answer, decisions


def test_a_table_a_filter_leaves_few_rows_of_is_broadcast_at_run_time_with_the_same_answer(
    client, tables
):
    expected = duckdb_answer_over(tables, FILTERED)
    answer, decisions = run(client, tables, FILTERED, "AUTO")
    assert sql_difference(answer, expected, ordered=False) is None
    (decision,) = decisions
    small, big = sorted((decision.left_bytes, decision.right_bytes))
    assert decision.is_broadcast and small <= decision.threshold < big, decision.text
    broadcast = decision.left_bytes if decision.side == "left" else decision.right_bytes
    assert broadcast == small  # the filtered orders, though listed well over the threshold
    static, none_decided = run(client, tables, FILTERED, "NONE")
    assert none_decided == [] and sql_difference(static, expected, ordered=False) is None


def test_a_table_listed_small_that_a_join_blows_up_is_not_broadcast(client, tables):
    expected = duckdb_answer_over(tables, BLOWN_UP)
    answer, decisions = run(client, tables, BLOWN_UP, "RUNTIME_ONLY")
    assert sql_difference(answer, expected, ordered=False) is None
    blown = [d for d in decisions if not d.is_broadcast]
    assert blown, [d.text for d in decisions]
    assert all(max(d.left_bytes, d.right_bytes) > d.threshold for d in blown)
