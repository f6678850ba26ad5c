"""Comparing SQL answers (``examples.compare.sql_difference``): by column position, rows in
order or as multisets, and each value rule, each with the cases it must refuse."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pyarrow as pa
import pytest

from examples.compare import query_is_ordered, same_value, sql_difference


def table(*columns: tuple[str, list, pa.DataType]) -> pa.Table:
    return pa.table({name: pa.array(values, kind) for name, values, kind in columns})


NATIONS = table(
    ("n_name", ["PERU", "CHINA", "FRANCE"], pa.string()),
    ("revenue", [Decimal("3.00"), Decimal("1.50"), Decimal("2.25")], pa.decimal128(38, 2)),
)


# --- shape: columns by position, rows, order ---------------------------------------------------


def test_the_same_table_matches_in_either_mode():
    assert sql_difference(NATIONS, NATIONS, ordered=True) is None
    assert sql_difference(NATIONS, NATIONS, ordered=False) is None


def test_columns_match_by_position_and_other_names_are_only_mentioned():
    renamed = NATIONS.rename_columns(["nation", "sum(revenue)"])
    assert sql_difference(renamed, NATIONS, ordered=True) is None
    changed = renamed.set_column(
        1,
        "sum(revenue)",
        pa.array([Decimal("3.00"), Decimal("1.50"), Decimal("2.26")], pa.decimal128(38, 2)),
    )
    difference = sql_difference(changed, NATIONS, ordered=True)
    assert difference.startswith(
        "row 2, column 1 ('revenue'): Decimal('2.26'), expected Decimal('2.25')"
    )
    assert "column names differ" in difference
    assert "0: 'nation' against 'n_name'; 1: 'sum(revenue)' against 'revenue'" in difference


def test_columns_in_another_order_differ():
    swapped = NATIONS.select(["revenue", "n_name"])
    assert sql_difference(swapped, NATIONS, ordered=False).startswith(
        "row 0 (both sorted by all columns), column 0 ('n_name'): Decimal('1.50'), expected 'CHINA'"
    )


def test_the_column_count_must_agree():
    assert sql_difference(NATIONS.select(["n_name"]), NATIONS, ordered=False) == (
        "1 columns ['n_name'], expected 2 ['n_name', 'revenue']"
    )


def test_the_row_count_must_agree():
    assert sql_difference(NATIONS.slice(0, 2), NATIONS, ordered=False) == "2 rows, expected 3"
    assert sql_difference(NATIONS, NATIONS.slice(0, 0), ordered=True) == "3 rows, expected 0"
    empty = NATIONS.slice(0, 0)
    assert sql_difference(empty, empty, ordered=True) is None


def test_rows_in_another_order_differ_only_when_the_query_orders_them():
    reversed_rows = NATIONS.take([2, 1, 0])
    assert sql_difference(reversed_rows, NATIONS, ordered=False) is None
    assert sql_difference(reversed_rows, NATIONS, ordered=True) == (
        "row 0, column 0 ('n_name'): 'FRANCE', expected 'PERU'"
    )


def test_rows_are_a_multiset_duplicates_counted():
    once = table(("k", [1, 1, 2], pa.int64()))
    other = table(("k", [1, 2, 2], pa.int64()))
    assert sql_difference(once, once.take([2, 0, 1]), ordered=False) is None
    assert sql_difference(once, other, ordered=False) == (
        "row 1 (both sorted by all columns), column 0 ('k'): 1, expected 2"
    )


def test_unordered_rows_sort_nulls_last_and_by_every_column():
    expected = table(("k", [None, 1, 1], pa.int64()), ("v", ["x", "b", "a"], pa.string()))
    actual = table(("k", [1, 1, None], pa.int64()), ("v", ["a", "b", "x"], pa.string()))
    assert sql_difference(actual, expected, ordered=False) is None
    wrong = table(("k", [1, 1, None], pa.int64()), ("v", ["a", "c", "x"], pa.string()))
    assert sql_difference(wrong, expected, ordered=False) == (
        "row 1 (both sorted by all columns), column 1 ('v'): 'c', expected 'b'"
    )


def test_unordered_rows_sort_by_exact_columns_first_so_a_doubles_last_bits_reorder_nothing():
    # Sorted by the double first, the two sides would pair 'a' with 'b'.
    actual = table(("avg", [1.0 + 1e-13, 1.0], pa.float64()), ("k", ["b", "a"], pa.string()))
    expected = table(("avg", [1.0, 1.0 + 1e-13], pa.float64()), ("k", ["b", "a"], pa.string()))
    assert sql_difference(actual, expected, ordered=False) is None


def test_unordered_doubles_and_decimals_in_one_column_sort_alike():
    spark = table(
        ("g", ["x", "x"], pa.string()),
        ("avg", [Decimal("2.000000"), Decimal("1.000000")], pa.decimal128(19, 6)),
    )
    duckdb = table(("g", ["x", "x"], pa.string()), ("avg", [1.0, 2.0], pa.float64()))
    assert sql_difference(spark, duckdb, ordered=False) is None
    assert sql_difference(spark, duckdb, ordered=True) is not None


def test_a_table_without_columns_compares_its_row_count():
    assert sql_difference(pa.table({}), pa.table({}), ordered=False) is None


# --- values -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b",
    [
        (None, None),
        (Decimal("1.10"), Decimal("1.1")),  # one number, whatever the scale
        (Decimal("25.522006"), 25.522005853257337),  # Spark's AVG of a decimal, DuckDB's double
        (25.522005853257337, Decimal("25.522006")),
        (Decimal("-0.050000"), -0.05),
        # a tie: the exact quotient 0.0000125 rounds HALF_UP to 0.000013, but its double is
        # 1.2499999999999999e-05, which rounds to 0.000012: one unit off, accepted
        (Decimal("0.000013"), 0.0000125),
        # more digits than a double holds: within the double's own last place
        (Decimal("12345678901234567890.12"), 12345678901234567890.12),
        (Decimal("42"), 42),  # DuckDB's HUGEINT sum against Spark's bigint
        (42, 42),
        (1.0, 1.0 + 1e-10),  # doubles summed in another order
        (123456789.0, 123456789.1),  # 1e-9 relative
        (0.0, 1e-10),  # 1e-9 absolute near zero
        (float("nan"), float("nan")),
        ("BUILDING", "BUILDING"),
        (datetime.date(1995, 3, 15), datetime.date(1995, 3, 15)),
        (True, True),
    ],
    ids=repr,
)
def test_equal_values(a, b):
    assert same_value(a, b)


@pytest.mark.parametrize(
    "a, b",
    [
        (None, 0),
        (0, None),
        (None, ""),
        (None, float("nan")),
        (Decimal("0.00"), None),
        (Decimal("1.10"), Decimal("1.11")),  # decimals are exact
        (Decimal("1.000000000000000001"), Decimal("1")),
        (Decimal("25.522006"), 25.522003853257337),  # three units off once rounded
        (Decimal("25.522006"), 25.5220),
        (Decimal("0.000013"), 0.000011),  # two units: no tie explains it
        (Decimal("12345678901234567890.12"), 12345678901234571264.0),  # two doubles away
        (Decimal("1.00"), float("nan")),
        (Decimal("1.00"), float("inf")),
        (Decimal("42.5"), 42),
        (41, 42),  # integers are exact
        (42, 42.0),  # an integer never equals a double
        (1, True),  # nor a boolean
        (1.0, 1.0 + 1e-8),
        (0.0, 1e-8),
        (1.0, float("nan")),
        ("BUILDING", "BUILDING "),  # strings are exact: no padding forgiven
        ("1", 1),
        (datetime.date(1995, 3, 15), datetime.date(1995, 3, 16)),
        (datetime.date(1995, 3, 15), datetime.datetime(1995, 3, 15)),
        (datetime.date(1995, 3, 15), "1995-03-15"),
    ],
    ids=repr,
)
def test_different_values(a, b):
    assert not same_value(a, b)
    assert not same_value(b, a)


def test_a_value_difference_names_the_row_the_column_and_both_values():
    actual = table(
        ("o_orderdate", [datetime.date(1995, 3, 15), datetime.date(1995, 3, 1)], pa.date32()),
        ("avg_qty", [Decimal("25.500000"), None], pa.decimal128(19, 6)),
    )
    expected = table(
        ("o_orderdate", [datetime.date(1995, 3, 15), datetime.date(1995, 3, 1)], pa.date32()),
        ("avg_qty", [25.5, 1.0], pa.float64()),
    )
    assert sql_difference(actual, expected, ordered=True) == (
        "row 1, column 1 ('avg_qty'): None, expected 1.0"
    )


# --- which queries are ordered ----------------------------------------------------------------


@pytest.mark.parametrize(
    "query, ordered",
    [
        ("SELECT a FROM t ORDER BY a;", True),
        ("SELECT a FROM t ORDER BY a DESC LIMIT 10", True),
        ("WITH r AS (SELECT a FROM t) SELECT a FROM r ORDER BY a", True),
        ("SELECT a FROM t UNION ALL SELECT b FROM u ORDER BY 1", True),
        ("SELECT sum(a) FROM t", False),
        ("SELECT a FROM t LIMIT 10", False),
        ("SELECT a FROM (SELECT a FROM t ORDER BY a) AS s", False),  # orders nothing the user sees
        ("SELECT a FROM t WHERE a IN (SELECT b FROM u ORDER BY b)", False),
    ],
)
def test_a_query_is_ordered_by_an_order_by_at_its_top(query, ordered):
    assert query_is_ordered(query) is ordered
