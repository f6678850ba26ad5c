"""In-task hash builds held to the task's share of its Spark JVM (``taskmanager.join_memory``):
a hinted side over the budget is sort-merge joined instead, by Spark itself (the plan it ran,
read from its SQL status store), the rows unchanged."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import taskmanager.join_memory as join_memory
from jobmanager.model.operators import SqlOperator
from taskmanager.cancellation import CancelToken
from taskmanager.inputs import ParquetFiles
from taskmanager.join_memory import build_budget, in_memory_bytes, within_budget
from taskmanager.spark import SparkTask
from taskmanager.sql import run_query

NESTED = (
    "SELECT /*+ BROADCAST(t7) */ a FROM (SELECT /*+ BROADCAST(t6) */ a FROM in0 AS t5 "
    "LEFT SEMI JOIN in1 AS t6 ON x = y) AS t4 LEFT ANTI JOIN (SELECT * FROM in2 JOIN in3 "
    "ON p = q) AS t7 ON z = w"
)


def test_only_a_hinted_side_over_the_budget_is_sort_merge_joined():
    big_subquery = within_budget(NESTED, {"in0": 100, "in1": 5, "in2": 50, "in3": 60}, 100)
    assert "/*+ MERGE(t7) */" in big_subquery and "/*+ BROADCAST(t6) */" in big_subquery
    big_view = within_budget(NESTED, {"in0": 100, "in1": 500, "in2": 5, "in3": 6}, 100)
    assert "/*+ BROADCAST(t7) */" in big_view and "/*+ MERGE(t6) */" in big_view
    # the probe side may be as big as it likes
    assert within_budget(NESTED, {"in0": 10**9, "in1": 5, "in2": 5, "in3": 5}, 100) == NESTED
    assert within_budget(NESTED, {"in0": 1, "in1": 1, "in2": 1, "in3": 1}, 100) == NESTED


def test_a_full_outer_join_s_shuffle_hash_build_is_held_too():
    sql = "SELECT /*+ SHUFFLE_HASH(t2) */ * FROM in0 AS t1 FULL OUTER JOIN in1 AS t2 ON a = b"
    assert within_budget(sql, {"in0": 1, "in1": 1_000}, 100) == sql.replace(
        "SHUFFLE_HASH(t2)", "MERGE(t2)"
    )


def test_the_budget_is_a_slot_s_share_of_the_heap():
    assert build_budget(1 << 30, 2) == (1 << 30) // 2 // join_memory.BUILD_SHARE
    assert build_budget(4 << 30, 2) == 4 * build_budget(1 << 30, 2)
    assert build_budget(1 << 30, 1) == 2 * build_budget(1 << 30, 2)


def test_in_memory_bytes_counts_parquet_uncompressed_and_only_the_columns_read(tmp_path: Path):
    table = pa.table({"k": [7] * 100_000, "v": list(range(100_000))})
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    every = in_memory_bytes(ParquetFiles((str(path),), None, table.num_rows))
    keys = in_memory_bytes(ParquetFiles((str(path),), ("k",), table.num_rows))
    assert every > path.stat().st_size  # a constant column compresses to nearly nothing
    assert 0 < keys < every
    assert in_memory_bytes(table) == table.nbytes


def _last_plan(session) -> str:
    executions = session._jsparkSession.sharedState().statusStore().executionsList()
    last, iterator = None, executions.iterator()
    while iterator.hasNext():
        execution = iterator.next()
        if last is None or execution.executionId() > last.executionId():
            last = execution
    return last.physicalPlanDescription()


@pytest.mark.spark
@pytest.mark.parametrize("share, join", [(16, "BroadcastHashJoin"), (1 << 40, "SortMergeJoin")])
def test_spark_runs_the_join_the_budget_allows(spark_provider, tmp_path, monkeypatch, share, join):
    monkeypatch.setattr(join_memory, "BUILD_SHARE", share)
    facts = pa.table({"k": [i % 10 for i in range(1_000)], "x": list(range(1_000))})
    names = pa.table({"k": list(range(5)), "name": [f"n{i}" for i in range(5)]})
    operator = SqlOperator(
        "SELECT /*+ BROADCAST(t2) */ t1.k, x, name FROM in0 AS t1 JOIN in1 AS t2 ON t1.k = t2.k",
        ("in0", "in1"),
    )
    result = run_query(
        (("join", operator),),
        (facts, names),
        SparkTask(spark_provider, tmp_path, "join-memory", CancelToken()),
    )
    assert result.num_rows == 500
    plan = _last_plan(spark_provider.session())
    other = ({"BroadcastHashJoin", "SortMergeJoin"} - {join}).pop()
    assert join in plan and other not in plan, plan
