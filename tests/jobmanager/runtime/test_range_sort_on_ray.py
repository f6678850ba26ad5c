"""A global ORDER BY cut into key ranges on a real local Ray cluster with real PySpark, through
``Client.sql``: over about ten tasks' worth of data it runs as several sort tasks whose input
bytes are within 2x of each other, and the result, read in its part files' order, is DuckDB's
answer, ties and nulls included, ascending and descending, on two keys. Ordered by its group
keys, an aggregate sorts in its own tasks, each aggregating one key range of its groups."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from examples.compare import sql_difference
from examples.tpch_dbgen import duckdb_answer_over
from jobmanager import Client
from jobmanager.messages import events as ev
from jobmanager.model.config import (
    AVG_DATA_VOLUME_PER_TASK,
    MAX_SLOTS,
    NUMBER_OF_TASK_SLOTS,
    RESTART_STRATEGY,
)
from tests.jobmanager.runtime.jobs import FAST

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

ROWS = 120_000
CONFIG = {
    **FAST,
    NUMBER_OF_TASK_SLOTS.key: 2,
    MAX_SLOTS.key: 2,
    AVG_DATA_VOLUME_PER_TASK.key: "64 kb",
    RESTART_STRATEGY.key: "none",
}
QUERIES = {
    "int desc, string asc": "SELECT a, b FROM t ORDER BY a DESC NULLS LAST, b ASC NULLS FIRST",
    "string desc, double asc": "SELECT b, c FROM t ORDER BY b DESC NULLS FIRST, c NULLS LAST",
}


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, str]:
    """``t``: an int with 500 values, a string with 40, a double with 300 (NaN among them):
    every key repeats, each has nulls; in four files of small row groups, so the scan runs as
    several tasks."""
    rng = np.random.default_rng(29)
    a = rng.integers(0, 500, ROWS)
    b = rng.integers(0, 40, ROWS)
    c = rng.integers(0, 300, ROWS) / 4.0
    c[c == 10.0] = np.nan
    table = pa.table(
        {
            "a": pa.array(a, pa.int64(), mask=rng.random(ROWS) < 0.02),
            "b": pa.array([f"word {v:02d}" for v in b], pa.string(), mask=rng.random(ROWS) < 0.02),
            "c": pa.array(c, pa.float64(), mask=rng.random(ROWS) < 0.02),
        }
    )
    root = tmp_path_factory.mktemp("range-sort") / "t"
    root.mkdir()
    for part in range(4):
        piece = table.slice(part * ROWS // 4, ROWS // 4)
        pq.write_table(piece, root / f"part-{part}.parquet", row_group_size=5_000)
    return {"t": str(root)}


@pytest.fixture(scope="module")
def client(ray_cluster):
    return Client()


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_a_global_order_by_runs_as_balanced_sort_tasks_with_duckdbs_answer(client, tables, name):
    query = QUERIES[name]
    handle = client.sql(query, tables=tables, config=CONFIG)
    result = handle.wait(timeout=300)
    assert result.succeeded, result.cause
    records = handle.events()
    sort = [e for e in records if type(e) is ev.VertexParallelismDecided and e.range_bounds]
    (decided,) = sort  # the sort task chained with the result's sink: "sort -> result"
    read = [
        e.metrics.bytes_in
        for e in records
        if type(e) is ev.TaskFinished and e.vertex == decided.vertex
    ]
    assert decided.parallelism >= 4 and len(decided.range_bounds) == decided.parallelism - 1
    assert len(read) == decided.parallelism and max(read) <= 2 * min(read), (
        read,
        decided.explanation,
    )
    difference = sql_difference(result.to_arrow(), duckdb_answer_over(tables, query), ordered=True)
    assert difference is None, difference
    handle.release()


GROUPED = (
    "SELECT a, b, COUNT(*) AS n, SUM(c) AS total FROM t GROUP BY b, a "
    "ORDER BY a DESC NULLS LAST, b ASC NULLS FIRST"
)


def test_an_aggregate_ordered_by_its_group_keys_sorts_its_key_ranges_with_duckdbs_answer(
    client, tables
):
    """No sort vertex: the partial aggregates are cut by the ORDER BY's ranges, so a group
    (which agrees on them) is whole in one task, and the aggregate's tasks, each sorting its
    groups, write the result in order; over several tasks, DuckDB's answer, nulls included."""
    handle = client.sql(GROUPED, tables=tables, config=CONFIG)
    result = handle.wait(timeout=300)
    assert result.succeeded, result.cause
    records = handle.events()
    (decided,) = [e for e in records if type(e) is ev.VertexParallelismDecided and e.range_bounds]
    assert decided.vertex.startswith("aggregate") and decided.parallelism >= 2
    assert not [
        e for e in records if type(e) is ev.VertexParallelismDecided and e.vertex.startswith("sort")
    ]
    expected = duckdb_answer_over(tables, GROUPED)
    difference = sql_difference(result.to_arrow(), expected, ordered=True)
    assert difference is None, difference
    handle.release()
