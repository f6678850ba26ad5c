"""The planner's join order from small SQL: joins start from the largest input and take the
connected ones, never a cross product where keys connect them; a small side that filters joins
first, before an exchange; a filtered table broadcast by what its filter keeps; a scan meets the
small inputs that filter it before those that only look up. Planning only."""

from __future__ import annotations

import pytest

from jobmanager.model.config import BROADCAST_THRESHOLD
from tests.jobmanager.planner.test_plans import (
    BROADCAST_EVERYTHING,
    OWN_VERTICES,
    all_sql,
    edges,
    plan,
    sql_of,
)


def test_a_query_with_join_keys_never_plans_a_cross_product(catalog):
    planned = plan(
        catalog, "SELECT f.s FROM dims d, others o, facts f WHERE f.k = d.k AND f.g = o.k"
    )
    assert "CROSS JOIN" not in all_sql(planned)
    without = plan(catalog, "SELECT d.name, o.w FROM dims d, others o")
    assert "CROSS JOIN" in all_sql(without)  # the query asked for one


def test_joins_start_from_the_largest_source_and_take_connected_ones(catalog):
    planned = plan(
        catalog,
        "SELECT d.name FROM dims d JOIN facts f ON f.k = d.k JOIN others o ON o.k = f.g",
        BROADCAST_EVERYTHING,
    )
    assert {(a, b) for (a, b), kind in edges(planned).items() if kind == "broadcast"} == {
        ("scan dims d", "scan facts f"),
        ("scan others o", "scan facts f"),
    }


def test_a_small_side_joins_the_large_input_it_filters_before_that_crosses_an_exchange(tmp_path):
    """TPC-H Q3's shape: the segment's customers filter the orders where orders are read, and
    only then do orders meet lineitem on a hashed join."""
    import pyarrow as pa

    from jobmanager.planner import Catalog
    from tests.jobmanager.planner.conftest import write_table

    tables = {
        "lines": write_table(tmp_path / "lines", pa.table({"k": list(range(4000)),
                                                           "v": list(range(4000))})),
        "orders": write_table(tmp_path / "orders", pa.table({"k": list(range(2000)),
                                                             "c": [i % 50 for i in range(2000)]})),
        "customers": write_table(tmp_path / "customers", pa.table({"c": list(range(50)),
                                                                   "seg": ["x"] * 50})),
    }  # fmt: skip
    catalog = Catalog.from_tables(tables)
    small = catalog.table("customers").listed_bytes(["c", "seg"])
    assert small < catalog.table("orders").listed_bytes(["k", "c"]) // 4
    planned = plan(
        catalog,
        "SELECT l.v FROM lines l, orders o, customers c "
        "WHERE l.k = o.k AND o.c = c.c AND c.seg = 'x'",
        {BROADCAST_THRESHOLD.key: small, **OWN_VERTICES},
    )
    assert edges(planned)[("scan customers c", "scan orders o")] == "broadcast"
    join = next(v for v in planned.graph.vertices if v.name.startswith("join"))
    assert sorted(e.source.name for e in join.inputs) == ["scan lines l", "scan orders o"]


def test_keys_that_repeat_on_both_sides_join_only_after_the_selective_ones(tmp_path):
    """TPC-H Q5's shape: customers connect to suppliers by nation (a handful of values on
    both sides, by the files' statistics) and to orders by their key; joined by nation first,
    each line would meet every customer of its supplier's nation."""
    import pyarrow as pa

    from jobmanager.planner import Catalog
    from tests.jobmanager.planner.conftest import write_table

    def table(name, **columns):
        return write_table(tmp_path / name, pa.table(columns))

    catalog = Catalog.from_tables(
        {
            "lines": table(
                "lines",
                o=[i % 2000 for i in range(40000)],
                s=[i % 100 for i in range(40000)],
                v=list(range(40000)),
            ),
            "orders": table("orders", o=list(range(2000)), c=[i % 500 for i in range(2000)]),
            "supp": table("supp", s=list(range(100)), n=[i % 5 for i in range(100)]),
            "cust": table("cust", c=list(range(500)), n=[i % 5 for i in range(500)]),
        }
    )
    planned = plan(
        catalog,
        "SELECT SUM(lines.v) AS n FROM cust, orders, lines, supp "
        "WHERE cust.c = orders.c AND lines.o = orders.o "
        "AND lines.s = supp.s AND cust.n = supp.n",
        BROADCAST_EVERYTHING,
    )
    scan = planned.graph.vertex("scan lines")
    assert [e.source.name for e in scan.inputs] == ["scan supp", "scan orders", "scan cust"], (
        planned.explain()
    )


def test_a_filtered_table_listed_over_the_threshold_is_broadcast_when_its_filter_keeps_little(
    tmp_path,
):
    """TPC-H q08 at scale 10: ``part`` lists 11.8 MiB, over the 10 MiB threshold, but one
    ``p_type`` of 150 keeps 111 KiB; it is broadcast into the ``lineitem`` scan, not hashed
    with it."""
    import pyarrow as pa

    from jobmanager.planner import Catalog
    from tests.jobmanager.planner.conftest import write_table

    catalog = Catalog.from_tables(
        {
            "lines": write_table(
                tmp_path / "lines",
                pa.table({"p": [i % 500 for i in range(20000)], "v": list(range(20000))}),
            ),
            "parts": write_table(
                tmp_path / "parts",
                pa.table({"p": list(range(500)), "t": [f"t{i % 150}" for i in range(500)]}),
            ),
        }
    )
    listed = catalog.table("parts").listed_bytes(["p", "t"])
    query = "SELECT SUM(l.v) AS s FROM lines l, parts p WHERE l.p = p.p AND {}"
    threshold = {BROADCAST_THRESHOLD.key: listed // 5, **OWN_VERTICES}
    filtered = plan(catalog, query.format("p.t = 't7'"), threshold)  # guessed to keep 0.15
    assert edges(filtered)[("scan parts p", "scan lines l")] == "broadcast"
    kept_more = plan(catalog, query.format("p.t <> ''"), threshold)  # guessed to keep 0.25
    assert ("scan parts p", "scan lines l") not in edges(kept_more)


EXISTS_OVER_A_JOIN = (
    "SELECT f.s, d.name FROM facts f, dims d WHERE f.k = d.k{} AND EXISTS (SELECT * FROM "
    "facts f2 WHERE f2.g = f.g AND f2.s <> f.s)"
)


@pytest.mark.parametrize("filtered", [True, False])
def test_a_semi_join_filters_what_its_small_filtered_joins_kept_in_the_scan(catalog, filtered):
    """TPC-H q21 at scale 10: the subquery's semi join sits over the scan's broadcast joins
    where one of them filters (the one nation's suppliers), so only their rows are hashed for
    it; where none filters, it sits on the scan and the broadcast joins follow it. (The
    threshold takes the filtered ``dims``, not the ``facts`` they keep.)"""
    condition = " AND d.name = 'n3'" if filtered else ""
    small = catalog.table("dims").listed_bytes(["k", "name"])
    planned = plan(
        catalog,
        EXISTS_OVER_A_JOIN.format(condition),
        {BROADCAST_THRESHOLD.key: small // 3 if filtered else small, **OWN_VERTICES},
    )
    join = next(v for v in planned.graph.vertices if v.name.startswith("join"))
    assert sorted(e.source.name for e in join.inputs) == (
        ["scan facts f", "scan facts f2"]
        if filtered
        else ["scan dims d", "scan facts f", "scan facts f2"]
    ), planned.explain()
    assert ("INNER JOIN" in sql_of(planned, "scan facts f")) is filtered
    assert ("INNER JOIN" in join.operator.sql) is not filtered


def test_what_a_scan_s_filtered_joins_keep_filters_the_scan_its_semi_join_looks_up(catalog):
    """TPC-H q21 at scale 1: ``dims``' keys may be unique, so each fact meets at most one and
    the facts the one name keeps are estimated under the threshold: they are broadcast into
    the subquery's scan, which writes only the rows of their keys, and nothing is hashed."""
    small = catalog.table("dims").listed_bytes(["k", "name"])
    planned = plan(
        catalog,
        EXISTS_OVER_A_JOIN.format(" AND d.name = 'n3'"),
        {BROADCAST_THRESHOLD.key: small, **OWN_VERTICES},
    )
    found = edges(planned)
    assert found[("scan facts f", "scan facts f2")] == "broadcast", planned.explain()
    assert "LEFT SEMI JOIN" in sql_of(planned, "scan facts f2")
    assert not [kind for kind in found.values() if kind.startswith("hash")]


def test_a_scan_meets_the_small_inputs_that_filter_it_before_those_that_only_look_up(tmp_path):
    """TPC-H q08 and q21: ``lineitem`` meets the one type's parts before every supplier (the
    smaller input, unfiltered), and the suppliers before the finished orders when they are
    the way to the one nation."""
    import pyarrow as pa

    from jobmanager.planner import Catalog
    from tests.jobmanager.planner.conftest import write_table

    def table(table_name, **columns):
        return write_table(tmp_path / table_name, pa.table(columns))

    catalog = Catalog.from_tables(
        {
            "lines": table(
                "lines",
                p=[i % 4000 for i in range(8000)],
                s=[i % 50 for i in range(8000)],
                o=[i % 2000 for i in range(8000)],
                v=list(range(8000)),
            ),
            "parts": table("parts", p=list(range(4000)), kind=[f"t{i % 9}" for i in range(4000)]),
            "orders": table("orders", o=list(range(2000)), status=["F", "O"] * 1000),
            "supp": table("supp", s=list(range(50)), n=[i % 5 for i in range(50)]),
            "nation": table("nation", n=list(range(5)), name=[f"n{i}" for i in range(5)]),
        }
    )

    assert (
        catalog.table("supp").listed_bytes(["s"])
        < catalog.table("parts").listed_bytes(["p", "kind"]) * 0.15
    )  # as the planner guesses

    def joined(query: str) -> list[str]:
        planned = plan(catalog, query, BROADCAST_EVERYTHING)
        return [e.source.name for e in planned.graph.vertex("scan lines l").inputs]

    assert joined(
        "SELECT SUM(l.v) AS t FROM lines l, supp s, parts p WHERE l.s = s.s "
        "AND l.p = p.p AND p.kind = 't3'"
    ) == ["scan parts p", "scan supp s"]
    assert joined(
        "SELECT SUM(l.v) AS t FROM lines l, orders o, supp s, nation n "
        "WHERE l.o = o.o AND o.status = 'F' AND l.s = s.s AND s.n = n.n "
        "AND n.name = 'n1'"
    ) == ["scan supp s", "scan nation n", "scan orders o"]
