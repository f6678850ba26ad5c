"""The share of rows a scan's filters keep (``jobmanager/planner/rules/selectivity.py``): a range of
an integer or date column from its files' min and max, Calcite's guess for the rest."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlglot import parse_one

from jobmanager.planner import Catalog
from jobmanager.planner.rules.selectivity import guess_selectivity

DAY = datetime.date.toordinal
BOUNDS = {"d": (DAY(datetime.date(1992, 1, 1)), DAY(datetime.date(1998, 8, 2))), "q": (1, 50)}


def share(*conditions: str) -> float:
    return guess_selectivity([parse_one(c, read="spark") for c in conditions], BOUNDS)


def test_comparisons_of_one_column_keep_the_share_of_its_range_they_allow_together():
    """TPC-H q10's quarter: 92 of the 2,406 days the files span, not the guess's quarter."""
    quarter = share("d >= TRY_CAST('1993-10-01' AS DATE)", "d < CAST('1994-01-01' AS DATE)")
    assert quarter == pytest.approx(92 / 2406)
    assert share(
        "d BETWEEN CAST('1993-10-01' AS DATE) AND CAST('1993-12-31' AS DATE)"
    ) == pytest.approx(92 / 2406)
    assert share("q < 24") == share("24 > q") == pytest.approx(23 / 50)
    assert share("q <= 24", "q > 10") == pytest.approx(14 / 50)
    assert share("q < 24 OR q > 40") == pytest.approx(33 / 50)  # the branches add up
    assert share("q < 24", "s = 'x'") == pytest.approx(23 / 50 * 0.15)


def test_a_range_outside_the_bounds_keeps_one_value_and_one_beyond_them_keeps_all():
    assert share("q > 100") == pytest.approx(1 / 50)
    assert share("q > 10", "q < 5") == pytest.approx(1 / 50)
    assert share("q > -5") == 1.0


def test_a_column_without_bounds_or_a_comparison_with_no_constant_is_guessed():
    assert share("x > 1") == pytest.approx(0.5)
    assert share("q > x") == pytest.approx(0.5)
    assert share("x BETWEEN 1 AND 2") == pytest.approx(0.25)
    assert share("q > 'a word'") == pytest.approx(0.5)


def test_the_catalog_gives_integer_and_date_columns_their_bounds(tmp_path):
    days = [datetime.date(1995, 3, 1) + datetime.timedelta(days=i) for i in range(10)]
    table = pa.table(
        {"k": pa.array([7, -3, 12], pa.int64()), "day": days[:3], "word": ["a", "b", "c"]}
    )
    (tmp_path / "t").mkdir()
    pq.write_table(table, tmp_path / "t" / "part-0.parquet")
    pq.write_table(
        table.slice(0, 1).set_column(1, "day", pa.array([days[9]])),
        tmp_path / "t" / "part-1.parquet",
    )
    described = Catalog.from_tables({"t": str(tmp_path / "t")}).table("t")
    assert described.column("k").bounds == (-3, 12)
    assert described.column("day").bounds == (DAY(days[0]), DAY(days[9]))
    assert described.column("day").value_range == 10
    assert described.column("word").bounds is None
