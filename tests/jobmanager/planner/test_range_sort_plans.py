"""The query's final ORDER BY (no LIMIT) is a range exchange into a sort stage whose parallelism
the JobManager decides, or, ordered by an aggregate's group keys, the aggregate's own input cut
by ranges; an ORDER BY with LIMIT, or one whose order something reads after, stays in one
task."""

from jobmanager.model.chaining import decide_chains
from jobmanager.model.jobgraph import PartitionerKind, SortKey
from tests.jobmanager.planner.test_plans import HASH_EVERYTHING, edges, plan, sql_of


def range_edge(planned):
    (edge,) = [e for e in planned.graph.edges if e.partitioner.kind is PartitionerKind.RANGE]
    return edge


def test_directions_and_nulls_orders_become_the_range_edges_sort_keys(catalog):
    planned = plan(
        catalog, "SELECT k, s, d FROM facts ORDER BY k DESC, s NULLS LAST, d DESC NULLS FIRST"
    )
    edge = range_edge(planned)
    assert edge.partitioner.order == (
        SortKey("k", True, False),
        SortKey("s", False, False),
        SortKey("d", True, True),
    )
    assert (edge.source.name, edge.target.name) == ("scan facts", "sort")
    assert planned.graph.vertex("sort").parallelism is None
    assert edges(planned)[("sort", "result")] == "forward"  # each task's part file, in order
    assert "ORDER BY" in sql_of(planned, "sort")  # and each task sorts its own range


def test_an_order_by_a_column_not_selected_ranges_on_the_hidden_column(catalog):
    planned = plan(catalog, "SELECT s FROM facts ORDER BY k + 1 DESC")
    (key,) = range_edge(planned).partitioner.order
    assert key.descending and not key.nulls_first and key.column != "s"
    assert f"AS `{key.column}`" in sql_of(planned, "scan facts")  # computed by the producer
    assert planned.columns == ("s",)


def test_an_aggregate_ordered_by_its_result_ranges_after_the_aggregation(catalog):
    planned = plan(catalog, "SELECT k, COUNT(*) AS c FROM facts GROUP BY k ORDER BY c DESC, k")
    edge = range_edge(planned)
    assert edge.source.name == "aggregate k" and len(edge.partitioner.order) == 2
    # the aggregate's groups, at most a row each of what it read: a scan of one task takes
    # the final aggregate and the sort after it too
    assert edge.pre_aggregated and "pre-aggregated" in planned.explain().split("\nsort")[1]
    assert decide_chains(planned.graph, one_task={"scan facts"}) == (
        ("scan facts", "partial aggregate", "aggregate k", "sort", "result"),
    )
    assert decide_chains(planned.graph) == (("scan facts", "partial aggregate"), ("sort", "result"))


def test_a_sort_of_rows_no_aggregate_bounds_is_decided_from_its_bytes(catalog):
    """Rows straight from a scan, or an aggregate over a join in the join's stage (a join may
    make more rows than its inputs sent): the sort's parallelism is decided from its bytes."""
    scanned = plan(catalog, "SELECT k, s FROM facts ORDER BY s")
    assert not range_edge(scanned).pre_aggregated
    joined = plan(
        catalog,
        "SELECT f.k, COUNT(*) AS c FROM facts f JOIN dims d ON f.k = d.k GROUP BY f.k ORDER BY c",
        HASH_EVERYTHING,
    )
    edge = range_edge(joined)
    assert edge.source.name.startswith("join") and not edge.pre_aggregated


def test_top_n_and_an_order_read_by_a_limit_after_it_stay_in_one_task(catalog):
    top = plan(catalog, "SELECT s FROM facts ORDER BY s LIMIT 5")
    assert not [e for e in top.graph.edges if e.partitioner.kind is PartitionerKind.RANGE]
    inner = plan(catalog, "SELECT * FROM (SELECT s FROM facts ORDER BY s) t LIMIT 3")
    assert not [e for e in inner.graph.edges if e.partitioner.kind is PartitionerKind.RANGE]


def test_an_aggregate_ordered_by_its_group_keys_takes_its_input_by_their_ranges(catalog):
    """No sort stage: the partial aggregates are cut by the ORDER BY's keys (the group keys,
    in another order, one renamed by the SELECT), and the aggregate's tasks sort what they
    aggregated."""
    planned = plan(
        catalog, "SELECT s AS name, k, COUNT(*) AS c FROM facts GROUP BY k, s ORDER BY name DESC, k"
    )
    edge = range_edge(planned)
    assert (edge.source.name, edge.target.name) == ("partial aggregate", "aggregate k, s")
    assert edge.partitioner.order == (SortKey("s", True, False), SortKey("k"))
    assert edges(planned)[("aggregate k, s", "result")] == "forward"
    assert "ORDER BY" in sql_of(planned, "aggregate k, s")
    assert not [v for v in planned.graph.vertices if v.name.startswith("sort")]


def test_an_order_other_than_the_group_keys_or_on_a_shared_aggregate_sorts_in_its_own_stage(
    catalog,
):
    by_value = plan(catalog, "SELECT k, COUNT(*) AS c FROM facts GROUP BY k ORDER BY k, c")
    assert range_edge(by_value).target.name == "sort"
    # ranges of k alone would send all of a k's groups, however many, to one task
    by_some = plan(catalog, "SELECT k, s, COUNT(*) AS c FROM facts GROUP BY k, s ORDER BY k")
    assert range_edge(by_some).target.name == "sort"
    shared = plan(
        catalog,
        "WITH g AS (SELECT k, COUNT(*) AS c FROM facts GROUP BY k) SELECT k, "
        "c FROM g WHERE c > (SELECT AVG(c) FROM g) ORDER BY k",
    )
    assert range_edge(shared).target.name == "sort"
