"""The planner's join-key filters (``jobmanager/planner/rules/joinfilters.py``): where a small
filtered input of a join cuts what the other side reads, and where it must not. Planning only:
``test_answers.py`` runs such queries against DuckDB's answers."""

from __future__ import annotations

import pytest

from jobmanager.model.config import BROADCAST_THRESHOLD
from tests.jobmanager.planner.test_plans import (
    BROADCAST_EVERYTHING,
    HASH_EVERYTHING,
    OWN_VERTICES,
    all_sql,
    edges,
    plan,
    sql_of,
)


GROUPS = (
    "SELECT a.k, a.t FROM (SELECT k, SUM(v) AS t FROM facts GROUP BY k) a JOIN dims d ON a.k = d.k"
)


def test_an_aggregate_joined_on_its_keys_with_a_small_filtered_side_reads_only_its_groups(catalog):
    """TPC-H q20: the filtered side, broadcast to the join anyway, is broadcast into the scan
    the aggregate reads too, one vertex for both, so only the groups the join keeps are summed
    and exchanged."""
    planned = plan(catalog, GROUPS + " WHERE d.name = 'n3'", BROADCAST_EVERYTHING)
    got = edges(planned)
    assert got[("scan dims d", "scan facts")] == "broadcast", planned.explain()
    assert got[("scan dims d", "aggregate k")] == "broadcast"
    assert [v.name for v in planned.graph.vertices].count("scan dims d") == 1
    assert "LEFT SEMI JOIN in0" in sql_of(planned, "scan facts")


@pytest.mark.parametrize(
    "query, config",
    [
        (GROUPS, BROADCAST_EVERYTHING),  # an unfiltered side keeps every group
        (GROUPS.replace("JOIN", "LEFT JOIN") + " AND d.name = 'n3'", BROADCAST_EVERYTHING),
        (GROUPS + " WHERE d.name = 'n3'", HASH_EVERYTHING),  # too big to broadcast
        (
            "WITH a AS (SELECT k, SUM(v) AS t FROM facts GROUP BY k) SELECT a.k, a.t, b.t AS u "
            "FROM a JOIN dims d ON a.k = d.k JOIN a b ON b.k = a.k WHERE d.name = 'n3'",
            BROADCAST_EVERYTHING,
        ),  # read twice: both readers must see every group
    ],
)
def test_an_aggregate_reads_every_group_where_a_filter_would_not_pay_or_not_hold(
    catalog, query, config
):
    planned = plan(catalog, query, config)
    assert "SEMI JOIN" not in all_sql(planned), planned.explain()


def test_the_filtered_input_of_a_join_that_gives_the_keys_filters_the_groups(catalog):
    """TPC-H q17: the aggregate's keys come from a join of a big scan with a small filtered
    one; the small one alone filters the groups (its keys are a superset of the join's)."""
    planned = plan(
        catalog,
        "SELECT SUM(f.v) AS t FROM facts f JOIN dims d ON f.k = d.k "
        "WHERE d.name = 'n3' AND f.v < (SELECT 0.2 * AVG(g.v) FROM facts g "
        "WHERE g.k = d.k)",
        BROADCAST_EVERYTHING,
    )
    got = edges(planned)
    assert got[("scan dims d", "scan facts g")] == "broadcast", planned.explain()
    assert "LEFT SEMI JOIN in0" in sql_of(planned, "scan facts g")


def test_a_broadcast_table_is_filtered_where_it_is_read_by_a_smaller_filtered_side(catalog):
    """TPC-H q02 and q10: a side broadcast into the join's stage is first semi-joined with a
    smaller filtered input that the same join meets on its key, so fewer of its rows cross
    the exchange; a side small enough to be read whole by the join's tasks stays so."""
    query = (
        "SELECT f.s, o.w FROM facts f JOIN dims d ON f.k = d.k JOIN others o "
        "ON o.k = d.k WHERE d.name = 'n3'"
    )
    planned = plan(catalog, query, BROADCAST_EVERYTHING)
    assert edges(planned)[("scan dims d", "scan others o")] == "broadcast", planned.explain()
    assert "LEFT SEMI JOIN in0" in sql_of(planned, "scan others o")
    whole = plan(catalog, query, {BROADCAST_THRESHOLD.key: "1 gb"})
    assert "SEMI JOIN" not in all_sql(whole), whole.explain()


@pytest.mark.parametrize("test", ["EXISTS", "NOT EXISTS"])
@pytest.mark.parametrize("filtered", [True, False])
def test_the_table_a_semi_join_looks_up_is_filtered_in_its_scan_by_the_small_kept_side(
    catalog, filtered, test
):
    """TPC-H q04 (EXISTS) and q22 (NOT EXISTS): ``lineitem``, far over the threshold, is
    semi-joined in its scan with the quarter's orders (broadcast into it), so only their lines
    cross to the join; an unfiltered kept side would keep every row, so the scan stays as it
    was. A row the scan drops has a key no kept row has: it would meet none, semi or anti."""
    condition = "d.name = 'n3' AND " if filtered else ""
    small = catalog.table("dims").listed_bytes(["k", "name"])
    planned = plan(
        catalog,
        f"SELECT d.name FROM dims d WHERE {condition}{test} "
        "(SELECT 1 FROM facts f WHERE f.k = d.k)",
        {BROADCAST_THRESHOLD.key: small, **OWN_VERTICES},
    )
    assert (("scan dims d", "scan facts f") in edges(planned)) is filtered, planned.explain()
    assert ("LEFT SEMI JOIN in0" in sql_of(planned, "scan facts f")) is filtered


def test_not_in_keeps_every_row_of_the_table_it_looks_up(catalog):
    """NOT IN is null-aware: a NULL anywhere in the looked-up column keeps every row out, so
    the scan must not drop the rows whose key the kept side lacks (a NULL among them)."""
    small = catalog.table("dims").listed_bytes(["k", "name"])
    planned = plan(
        catalog,
        "SELECT d.name FROM dims d WHERE d.name = 'n3' AND d.k NOT IN (SELECT f.k FROM facts f)",
        {BROADCAST_THRESHOLD.key: small, **OWN_VERTICES},
    )
    assert "SEMI JOIN" not in sql_of(planned, "scan facts f"), planned.explain()


def test_a_side_kept_by_a_semi_join_is_guessed_a_tenth_of_its_rows(catalog):
    """TPC-H q20 at scale 10: the ``partsupp`` rows of the 'forest%' parts list 51 MiB, over
    the broadcast threshold, but a semi join keeps a tenth of its input by Calcite's guess
    (the kept rows are 92 KiB), so they still filter the aggregate of ``lineitem``."""
    listed = catalog.table("dims").listed_bytes(["k"])
    planned = plan(
        catalog,
        GROUPS + " WHERE d.k IN (SELECT o.k FROM others o WHERE o.w > 3)",
        {BROADCAST_THRESHOLD.key: listed // 2, **OWN_VERTICES},
    )
    into_scan = [s for (s, t), how in edges(planned).items() if t == "scan facts"]
    assert into_scan == ["join k_2"], planned.explain()  # dims semi-joined with others
    assert "LEFT SEMI JOIN in0" in sql_of(planned, "scan facts")
