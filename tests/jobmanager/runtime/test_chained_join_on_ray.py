"""A join chained into its big side's scan at run time, on a real local Ray cluster with real
PySpark, through ``Client.sql``: both tables are listed well over the broadcast threshold, the
smaller listing (orders) runs first while the bigger one's scan waits (two slots cannot run
both), a filter leaves 20 orders, and the join then runs in the facts scan's tasks. The facts
rows are never written: the job writes fewer bytes than with ``strategy: NONE``, and both
answers are DuckDB's."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from examples.compare import sql_difference
from examples.tpch_dbgen import duckdb_answer_over
from jobmanager import Client
from jobmanager.messages import events as ev
from tests.jobmanager.runtime.test_adaptive_joins_on_ray import CONFIG, ROWS, STRATEGY

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

QUERY = """
SELECT o.o_region, SUM(f.f_amount) AS total, SUM(f.f_extra) AS extra, COUNT(*) AS n
FROM facts f JOIN orders o ON f.f_order = o.o_id
WHERE o.o_note = 'rare'
GROUP BY o.o_region
"""


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, str]:
    """The columns the query reads: facts about 660 KiB as listed, orders about 470 KiB; 20
    orders are ``rare``."""
    root = tmp_path_factory.mktemp("chained")
    ids = np.arange(ROWS, dtype=np.int64)
    written = {
        "facts": pa.table(
            {"f_order": ids * 7 % ROWS, "f_amount": ids, "f_extra": ids * 2_654_435_761 % 1_000_003}
        ),
        "orders": pa.table(
            {
                "o_id": ids,
                "o_region": ids % 5,
                "o_note": ["rare" if i % 2000 == 0 else f"note {i}" for i in range(ROWS)],
            }
        ),
    }
    paths = {}
    for name, table in written.items():
        (root / name).mkdir()
        for part in range(2):
            half = table.slice(part * ROWS // 2, ROWS // 2)
            pq.write_table(half, root / name / f"part-{part}.parquet", row_group_size=4000)
        paths[name] = str(root / name)
    return paths


def run(tables, strategy: str) -> tuple[pa.Table, list, int]:
    """The answer, the job's events, and the bytes its tasks wrote for other tasks to read."""
    handle = Client().sql(QUERY, tables=tables, config={**CONFIG, STRATEGY: strategy})
    result = handle.wait(timeout=240)
    assert result.succeeded, result.cause
    events = list(handle.events())
    answer = result.to_arrow()
    handle.release()
    return (
        answer,
        events,
        sum(_written(p) for e in events if type(e) is ev.TaskFinished for p in e.produced),
    )


def _written(partition: ev.ProducedPartition) -> int:
    if partition.total_bytes is not None:
        return partition.total_bytes
    return int(np.frombuffer(partition.subpartition_bytes, "<i8").sum())


def test_a_filtered_side_run_first_chains_the_join_into_the_other_sides_scan(ray_cluster, tables):
    expected = duckdb_answer_over(tables, QUERY)
    answer, events, written = run(tables, "AUTO")
    assert sql_difference(answer, expected, ordered=False) is None
    (chained,) = [e for e in events if type(e) is ev.JoinChained]
    assert chained.vertex.startswith(chained.producer) and chained.decision.other_read == "chained"
    assert chained.decision.is_broadcast and chained.decision.side == "right"  # the orders
    listed = {e.vertex: e.read_bytes for e in events if type(e) is ev.SourceParallelismInferred}
    assert listed[chained.producer] > max(v for k, v in listed.items() if k != chained.producer)
    # the facts scan's tasks started only after every orders task finished
    started = [e.vertex for e in events if type(e) is ev.TaskRunning]
    finished = [e.vertex for e in events if type(e) is ev.TaskFinished]
    orders = {e.decision.decided_after[0] for e in events if type(e) is ev.JoinChained}
    first_chained = next(
        i for i, e in enumerate(events) if type(e) is ev.TaskRunning and e.vertex == chained.vertex
    )
    last_orders = max(
        i for i, e in enumerate(events) if type(e) is ev.TaskFinished and e.vertex in orders
    )
    assert last_orders < first_chained, (started, finished)
    static, none_events, none_written = run(tables, "NONE")
    assert sql_difference(static, expected, ordered=False) is None
    assert not any(type(e) is ev.JoinChained for e in none_events)
    # the facts rows, hashed and written under NONE, never left their scan's tasks here
    assert written * 4 < none_written, (written, none_written)
