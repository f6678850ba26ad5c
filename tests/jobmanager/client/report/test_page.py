"""The HTML report as a page: self-contained, every picture drawn from the facts, and still
small and readable when a job has thousands of task attempts."""

import re

from jobmanager.client.report import facts_from_log, report_html
from jobmanager.client.report.layout import layered_layout
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.simulation.cluster import uniform_bytes
from tests.jobmanager.client.report.recorded import (
    SUMS_CONFIG,
    record,
    sql_job,
    sums_bytes,
    sums_job,
)


def sums_page() -> str:
    graph = sums_job()
    submitted, records, _ = record(
        graph, SUMS_CONFIG, byte_model=sums_bytes, faults=[("agg", 1, 0)]
    )
    return report_html(facts_from_log(graph, submitted, records, "job-1"))


def test_the_page_needs_nothing_from_the_network():
    page = sums_page()
    assert page.startswith("<!DOCTYPE html>")
    addresses = set(re.findall(r"https?://[^\s\"'<>)]+", page))
    assert addresses == {"http://www.w3.org/2000/svg"}  # the SVG namespace, never fetched
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page)


def test_the_page_draws_each_vertex_each_attempt_and_each_subpartition():
    page = sums_page()
    vertices = re.findall(
        r'<g class="vertex" data-vertex="(\w+)".*?vertex-parallelism">([^<]+)<', page
    )
    assert vertices == [
        ("src", "parallelism 2"),
        ("agg", "parallelism 2"),
        ("sink", "parallelism 2"),
    ]
    attempts = re.findall(r'<rect class="attempt outcome-(\w+)" data-vertex="(\w+)"', page)
    assert sorted(attempts) == sorted(
        [("finished", "src")] * 2
        + [("finished", "agg")] * 2
        + [("failed", "agg")]
        + [("finished", "sink")] * 2
    )
    assert len(re.findall(r'class="marker marker-failure"', page)) == 1
    bars = re.findall(
        r'<rect class="bar[^"]*"[^>]*><title>subpartition (\d+): ([\d,]+) bytes', page
    )
    assert bars == [("0", "200"), ("1", "400"), ("2", "600"), ("3", "800")]
    assert re.findall(r"<title>task (\d): subpartitions (\d)\.\.(\d)", page) == [
        ("0", "0", "2"),
        ("1", "3", "3"),
    ]
    assert "hash(key) · all-to-all" in page and "blocking · 2.0 KiB" in page


def test_thousands_of_attempts_are_drawn_as_one_row_per_vertex():
    g = JobGraph("wide")
    a = g.add_vertex("a", parallelism=1500)
    b = g.add_vertex("b", parallelism=1500)
    g.connect(a, b, Partitioner.REBALANCE)
    submitted, records, _ = record(g, {}, byte_model=uniform_bytes(1 << 20))
    facts = facts_from_log(g, submitted, records, "wide")
    assert len(facts.attempts) == 3000
    page = report_html(facts)
    assert len(page) < 1_500_000
    assert set(re.findall(r'<text [^>]*class="row-label">([^<]+)<', page)) == {"a", "b"}
    assert 'class="attempt' not in page and page.count('class="busy"') <= 2 * 320


def test_layers_follow_the_data_and_the_order_avoids_crossings():
    place = layered_layout(
        ["x", "y", "p", "q", "z"], [("x", "q"), ("y", "p"), ("p", "z"), ("q", "z")]
    )
    assert {n: layer for n, (layer, _) in place.items()} == {"x": 0, "y": 0, "p": 1, "q": 1, "z": 2}
    assert place["q"][1] < place["p"][1]  # x's target above y's: no crossing


def test_the_page_shows_the_sql_each_vertex_runs_and_where_it_came_from():
    graph = sql_job()
    submitted, records, _ = record(graph, SUMS_CONFIG, byte_model=sums_bytes)
    page = report_html(facts_from_log(graph, submitted, records, "job-5"))
    pieces = re.findall(
        r'<div data-vertex="(\w+)"><h3>\w+</h3><p class="origin">from the query: '
        r'<code>([^<]*)</code></p><pre class="sql">([^<]*)</pre></div>',
        page,
    )
    assert pieces == [
        (
            "src",
            "FROM range(100) WHERE id &lt; 50",
            "SELECT id % 4 AS key, id AS value\nFROM range(100)\nWHERE id &lt; 50",
        ),
        ("agg", "GROUP BY key", "SELECT key, SUM(value) AS total FROM in0 GROUP BY key"),
    ]
    assert "SQL" not in sums_page().split("<h2>Vertices</h2>")[1].split("<script>")[0]
