"""A skewed join followed by a GROUP BY on its key (FLIP-475's ``auto`` and ``forced``) on a
real local Ray cluster with real PySpark, through ``Client.sql``: under ``forced`` the planner
puts the aggregate behind a hash exchange and the join's hot key is cut across tasks; under
``auto`` the aggregate stays in the join's task and the hot key is left whole, and the join's
explanation says so. Each answer is DuckDB's over the same files."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from examples.compare import sql_difference
from examples.tpch_dbgen import duckdb_answer_over
from jobmanager import Client
from jobmanager.messages import events as ev
from jobmanager.model.config import (
    AVG_DATA_VOLUME_PER_TASK,
    BROADCAST_THRESHOLD,
    MAX_PARALLELISM,
    MAX_SLOTS,
    NUMBER_OF_TASK_SLOTS,
    RESTART_STRATEGY,
    SKEWED_JOIN_STRATEGY,
    SKEWED_THRESHOLD,
)
from jobmanager.runtime.jobstore import JobStore
from tests.jobmanager.runtime.jobs import FAST

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

ROWS = 20_000
CONFIG = {
    **FAST,
    NUMBER_OF_TASK_SLOTS.key: 2,
    MAX_SLOTS.key: 2,
    BROADCAST_THRESHOLD.key: -1,  # shuffled, planned and at run time
    MAX_PARALLELISM.key: 4,  # few tasks: quick
    AVG_DATA_VOLUME_PER_TASK.key: "16 kb",
    SKEWED_THRESHOLD.key: "16 kb",
    RESTART_STRATEGY.key: "none",
}
STRATEGY = SKEWED_JOIN_STRATEGY.key
QUERY = """
SELECT f.f_key, COUNT(*) AS n, SUM(f.f_amount) AS total, MAX(d.d_name) AS name
FROM facts f JOIN dims d ON f.f_key = d.d_key
GROUP BY f.f_key
"""


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, str]:
    """Three rows in four of ``facts`` have key 0, the rest spread over 100 keys; each table
    in four files, so the hot key comes from several producers and can be cut between them."""
    root = tmp_path_factory.mktemp("skewed-join")
    keys = [0 if i % 4 else i % 101 for i in range(ROWS)]
    written = {
        "facts": pa.table(
            {"f_key": pa.array(keys, pa.int64()), "f_amount": pa.array(range(ROWS), pa.int64())}
        ),
        "dims": pa.table(
            {"d_key": pa.array(range(101), pa.int64()), "d_name": [f"name {i}" for i in range(101)]}
        ),
    }
    paths = {}
    for name, table in written.items():
        (root / name).mkdir()
        step = -(-table.num_rows // 4)
        for part in range(4):
            pq.write_table(table.slice(part * step, step), root / name / f"part-{part}.parquet")
        paths[name] = str(root / name)
    return paths


@pytest.fixture(scope="module")
def client(ray_cluster):
    return Client()


def run(client, tables, strategy: str) -> tuple[pa.Table, str]:
    """The answer and the explanation of the vertex that runs the join."""
    handle = client.sql(QUERY, tables=tables, config={**CONFIG, STRATEGY: strategy})
    result = handle.wait(timeout=240)
    assert result.succeeded, result.cause
    root, job_id = handle.event_log().rstrip("/").rsplit("/", 2)[:2]
    why = {
        event.vertex: event.explanation.text
        for _, event in JobStore(root, job_id).records(0)
        if type(event) is ev.VertexParallelismDecided
    }
    answer = result.to_arrow()
    handle.release()
    (join,) = [text for vertex, text in why.items() if vertex.startswith("join")]
    return answer, join


def test_forced_cuts_the_hot_key_and_auto_leaves_it_whole_both_with_duckdbs_answer(client, tables):
    expected = duckdb_answer_over(tables, QUERY)
    forced, why = run(client, tables, "forced")
    assert sql_difference(forced, expected, ordered=False) is None
    assert "of 'scan facts f->join f_key" in why and "cut into" in why, why
    auto, why = run(client, tables, "auto")
    assert sql_difference(auto, expected, ordered=False) is None
    assert "not cut: the join's task relies on its hash partitioning" in why, why
