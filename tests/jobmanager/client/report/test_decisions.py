"""What ``tidal explain`` and the report say of each join and each global sort: the strategy,
when and on which bytes it was decided against which threshold, what moved for each side; a
sort's bounds read back as values and the bytes each range's task got. Pure core runs against
simulated TaskManagers, and one TPC-H query planned for real (no Ray, no Spark)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from jobmanager.client.report import explain_lines, facts_from_log, report_html
from jobmanager.model.config import AVG_DATA_VOLUME_PER_TASK, BROADCAST_THRESHOLD, Configuration
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.model.joins import JoinInput
from jobmanager.model.operators import ParquetSink
from shuffle.keyorder import SortKey, encode_key
from tests.jobmanager.client.report.recorded import record
from tests.jobmanager.client.report.test_join_facts import join_facts
from tests.jobmanager.core.adaptive.test_runtime_joins import MiB, sized

VOLUME = AVG_DATA_VOLUME_PER_TASK.key


def block(lines: list[str], name: str) -> list[str]:
    """The lines of explain's ``joins:`` or ``sorts:`` block."""
    start = lines.index(f"{name}:") + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return lines[start:end]


def test_a_join_broadcast_at_run_time_says_on_which_bytes_after_whom_and_what_moved():
    facts, _ = join_facts()
    (join,) = facts.joins
    assert (join.strategy, join.side, join.when, join.decided_after) == (
        "broadcast",
        "right",
        "run time",
        ("big", "small"),
    )
    assert block(explain_lines(facts), "joins") == [
        (
            "  j1 inner join in join: broadcast, the right side sent whole to every task; decided at "
            "run time once 'big' and 'small' finished, threshold 10.0 MiB"
        ),
        (
            "    left  big: 64.0 MiB written > threshold; read locally (whole outputs of consecutive "
            "producers)"
        ),
        "    right small: 2.0 MiB written <= threshold; broadcast (whole to every task)",
    ]


def test_a_join_the_user_sized_is_still_decided_at_run_time():
    facts, _ = join_facts(join_parallelism=3)
    (join,) = facts.joins
    assert (join.strategy, join.when, join.left.moved) == ("broadcast", "run time", "read locally")


def test_a_join_both_sides_too_big_stays_shuffled_on_the_smaller_side():
    g = JobGraph("join")
    left, right, join = g.add_vertex("left", 2), g.add_vertex("right", 2), g.add_vertex("join")
    g.connect(left, join, Partitioner.hash("k"), join=JoinInput("j1", "left", "left"))
    g.connect(right, join, Partitioner.hash("k"), join=JoinInput("j1", "left", "right"))
    submitted, records, _ = record(g, {}, byte_model=sized({"left": 8 * MiB, "right": 6 * MiB}))
    lines = block(explain_lines(facts_from_log(g, submitted, records, "job-2")), "joins")
    assert lines == [
        (
            "  j1 left outer join in join: shuffled, built on the right side; decided at run time "
            "once 'left' and 'right' finished, threshold 10.0 MiB"
        ),
        "    left  left: 16.0 MiB written > threshold; shuffled (by hash subpartition)",
        "    right right: 12.0 MiB written > threshold; shuffled (by hash subpartition)",
    ]


ORDER = (SortKey("name", sql_type="string"), SortKey("n", True, False, sql_type="bigint"))
LOWS = [("apple", 9), ("kiwi", 3), ("kiwi", 1), ("pear", 7)]


def sort_facts(order=ORDER):
    """scan (1 task, four 1 MiB chunks) --range--> sort (1 MiB per task) --> sink."""
    g = JobGraph("sort")
    scan, sort = g.add_vertex("scan", 1), g.add_vertex("sort", max_parallelism=8)
    g.connect(scan, sort, Partitioner.range(*order))
    g.connect(sort, g.add_vertex("sink"), Partitioner.FORWARD)

    def model(vertex, subtask, result, n):
        counts = np.zeros(n, dtype="<i8")
        counts[: 4 if vertex == "scan" else n] = MiB if vertex == "scan" else 1000
        return counts.tobytes()

    model.range_samples = lambda result, subtask, n: tuple(
        encode_key(values, order) for values in (*LOWS, ("zucchini", None))
    )
    submitted, records, _ = record(g, {VOLUME: "1 mb"}, byte_model=model)
    return facts_from_log(g, submitted, records, "job-3")


def test_a_sorts_bounds_read_back_as_values_with_each_ranges_bytes():
    facts = sort_facts()
    (sort,) = facts.sorts
    assert sort.bounds == ("('kiwi', 3)", "('kiwi', 1)", "('pear', 7)")
    assert block(explain_lines(facts), "sorts") == [
        "  sort (reading 'scan') sorted by name ASC NULLS FIRST, n DESC NULLS LAST: 4 ranges",
        "    task 0: from the first key below ('kiwi', 3): 1.0 MiB",
        "    task 1: from ('kiwi', 3) below ('kiwi', 1): 2.0 MiB",
        "    task 2: from ('kiwi', 1) below ('pear', 7): 2.0 MiB",
        "    task 3: from ('pear', 7) to the last: 2.0 MiB",
    ]


def test_a_sort_key_of_unknown_type_shows_its_bounds_as_hex():
    untyped = tuple(SortKey(k.column, k.descending, k.nulls_first) for k in ORDER)
    (sort,) = sort_facts(untyped).sorts
    assert sort.bounds[0] == "0x" + encode_key(("kiwi", 3), untyped).hex()


def test_the_report_page_shows_each_join_and_sort():
    page = report_html(sort_facts())
    assert (
        '<div class="sort" data-vertex="sort"><h3>sort (reading &#x27;scan&#x27;) sorted by' in page
    )
    joined = report_html(join_facts()[0])
    assert "<h2>Joins and sorts</h2>" in joined and 'class="join" data-vertex="join"' in joined
    assert "right small: 2.0 MiB written &lt;= threshold; broadcast" in joined


@pytest.fixture(scope="module")
def tpch(tmp_path_factory):
    from examples.tpch_dbgen import generate
    from jobmanager.planner import Catalog

    return Catalog.from_tables(generate(tmp_path_factory.mktemp("tpch-explain"), 0.01))


def test_a_planned_tpch_query_says_which_join_the_listing_decided_and_which_the_run_time(tpch):
    """Q3 with a 10 KiB threshold: customer (8.7 KiB listed, 1.3 KiB once its one-segment filter
    is guessed to keep 0.15) is broadcast into the orders scan by the planner, read by its
    tasks themselves (under the 1 MiB read-whole threshold); lineitem with orders (11.4 KiB,
    the orders of that segment) is marked, and the run time, seeing 1 MiB written on each
    side, keeps it shuffled."""
    from examples.tpch_dbgen import queries
    from jobmanager.planner import plan_sql

    logging.disable(logging.INFO)
    config = {BROADCAST_THRESHOLD.key: "10 kb"}
    planned = plan_sql(
        queries()[3], tpch, ParquetSink("/tmp/tidal-explain-q3"), Configuration(config)
    )
    submitted, records, _ = record(planned.graph, config, byte_model=sized({}))
    lines = block(explain_lines(facts_from_log(planned.graph, submitted, records, "q3")), "joins")
    logging.disable(logging.NOTSET)
    assert lines == [
        (
            "  j2 inner join in scan orders: broadcast, the right side sent whole to every task; "
            "planned from the listing, threshold 10.0 KiB"
        ),
        (
            "    left  (its own rows): 67.1 KiB estimated > threshold; chained (computed in the join's "
            "task, never written)"
        ),
        (
            "    right table customer (read by every task): 1.3 KiB estimated <= threshold; read "
            "whole in each task's Spark query, never written"
        ),
        (
            "  j1 inner join in join l_orderkey: shuffled, built on the left side; decided at run "
            "time once 'scan lineitem' and 'scan orders' finished, threshold 10.0 KiB"
        ),
        "    left  scan lineitem: 1.0 MiB written > threshold; shuffled (by hash subpartition)",
        "    right scan orders: 1.0 MiB written > threshold; shuffled (by hash subpartition)",
    ]


def test_a_join_chained_into_its_big_sides_scan_says_that_side_was_never_written():
    from tests.jobmanager.core.adaptive.test_join_chains import SLOTS, join_job

    g = join_job()
    submitted, records, _ = record(
        g, {SLOTS: 2}, byte_model=sized({"orders": MiB // 4, "lineitem": 16 * MiB})
    )
    assert block(explain_lines(facts_from_log(g, submitted, records, "job-4")), "joins") == [
        (
            "  j1 inner join in lineitem -> join: broadcast, the right side sent whole to every task; "
            "decided at run time once 'orders' finished, threshold 10.0 MiB"
        ),
        (
            "    left  lineitem: not written yet when decided; chained (computed in the join's task, "
            "never written)"
        ),
        "    right orders: 512.0 KiB written <= threshold; broadcast (whole to every task)",
    ]
