"""Chaos: TPC-H queries through ``Client.sql`` on the dbgen tables, each with its JobManager or
one of its TaskManagers SIGKILLed at a random point of its run, and each answer still DuckDB's.

The draw is seeded (``SEED``), so a failure is replayed by running the test again: the message
names the seed, the query and the kill. Points are drawn as fractions of the tasks finished, not
as times, so a fast run is never over before its kill (``benchmarks/kills.py``). A kill can
still land just after a job's last task (the look and the kill are two steps); the answer is
checked all the same, and at least half of the kills must have landed.

The queries each cross several exchanges at this scale with the suite's small tasks (256 KiB of
input each): q3 and q18 join three tables, q10 four, q9 six.
"""

from __future__ import annotations

import random
import time

import pytest

from benchmarks.kills import JOB_MANAGER, TASK_MANAGER, after_fraction_of_tasks, kill_when, outcome
from examples.compare import query_is_ordered, sql_difference
from examples.tpch_dbgen import duckdb_answer, queries
from jobmanager.model.config import AVG_DATA_VOLUME_PER_TASK, MAX_SLOTS, NUMBER_OF_TASK_SLOTS

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

SEED = 20261207
QUERIES = (3, 9, 18, 10)
# test_tpch_sql's sizes (one TaskManager of two slots, small tasks), with the default restart
# strategy: a lost TaskManager fails its tasks, and they must be allowed to run again
CONFIG = {
    NUMBER_OF_TASK_SLOTS.key: 2,
    MAX_SLOTS.key: 2,
    AVG_DATA_VOLUME_PER_TASK.key: "256 kb",
}
JOB_TIMEOUT_S = 180


def draw(seed: int, numbers=QUERIES) -> list[tuple[int, str, float]]:
    """Each query's kill and point: the kinds half and half in a seeded order, the points
    uniform over the run's tasks (not at its very end, where a kill can miss)."""
    rng = random.Random(seed)
    kinds = [(JOB_MANAGER, TASK_MANAGER)[n % 2] for n in range(len(numbers))]
    rng.shuffle(kinds)
    return [(number, kind, round(rng.uniform(0.1, 0.8), 2)) for number, kind in zip(numbers, kinds)]


def test_the_draw_is_the_seeds_and_kills_both_kinds():
    assert draw(SEED) == draw(SEED)
    assert {kind for _, kind, _ in draw(SEED)} == {JOB_MANAGER, TASK_MANAGER}
    assert all(0.1 <= point <= 0.8 for _, _, point in draw(SEED))


def test_tpch_answers_survive_a_killed_jobmanager_or_taskmanager(
    ray_cluster, tpch_dbgen_data, tpch_dbgen_tables
):
    from jobmanager import Client

    client, landed = Client(), []
    for number, kind, point in draw(SEED):
        what = f"seed {SEED}, q{number}, {kind} killed at {point:.0%} of the tasks finished"
        text = queries()[number]
        started = time.perf_counter()
        handle = client.sql(text, tables=tpch_dbgen_tables, config=CONFIG)
        kill = kill_when(
            handle, kind, after_fraction_of_tasks(point), started, timeout=JOB_TIMEOUT_S
        )
        result = handle.wait(timeout=JOB_TIMEOUT_S)
        assert result.status == "FINISHED", f"{what}: {result.status} {result.cause}"
        expected = duckdb_answer(tpch_dbgen_data, text)
        difference = sql_difference(result.to_arrow(), expected, query_is_ordered(text))
        assert difference is None, f"{what}: {difference}"
        figures = outcome(handle, kill) if kill is not None else {"landed": False}
        landed.append(figures["landed"])
        print(f"{what}: {time.perf_counter() - started:.1f} s, {figures}")
        handle.release()
    assert sum(landed) * 2 >= len(landed), f"seed {SEED}: kills that landed: {landed}"
