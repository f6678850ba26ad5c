"""Result comparison (money to a relative tolerance, everything else exactly, order included)
and the ``-D key=value`` flag of the example and benchmark command lines."""

from __future__ import annotations

import argparse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from examples.compare import first_difference, read_result
from examples.options import add_option_flag, parse_options

EXPECTED = pa.table({"nation": ["PERU", "CHINA"], "revenue": [3.0, 1.0]})


def test_equal_tables_and_money_summed_in_another_order_match():
    summed = pa.table({"revenue": [0.1 + 0.2 + 2.7, 1.0], "nation": ["PERU", "CHINA"]})
    assert first_difference(summed, EXPECTED) is None


@pytest.mark.parametrize(
    "actual, message",
    [
        (pa.table({"nation": ["PERU", "CHINA"]}), "columns ['revenue'] missing"),
        (EXPECTED.slice(0, 1), "1 rows, expected 2"),
        (
            pa.table({"nation": ["CHINA", "PERU"], "revenue": [3.0, 1.0]}),
            "row 0, column 'nation': 'CHINA', expected 'PERU'",
        ),
        (
            pa.table({"nation": ["PERU", "CHINA"], "revenue": [3.0, 1.001]}),
            "row 1, column 'revenue': 1.001, expected 1.0",
        ),
    ],
)
def test_a_difference_is_named(actual, message):
    assert message in first_difference(actual, EXPECTED)


def test_a_result_directory_reads_in_part_order_without_hidden_files(tmp_path):
    pq.write_table(EXPECTED.slice(1), tmp_path / "part-00001.parquet")
    pq.write_table(EXPECTED.slice(0, 1), tmp_path / "part-00000.parquet")
    (tmp_path / "_SUCCESS").write_text("")
    assert read_result(tmp_path).equals(EXPECTED)
    with pytest.raises(FileNotFoundError, match="no Parquet part files"):
        read_result(tmp_path / "missing")


def test_options_come_from_repeated_d_flags():
    parser = argparse.ArgumentParser()
    add_option_flag(parser)
    args = parser.parse_args(["-D", "a.b=16 mb", "-D", "c = 2"])
    assert parse_options(args.options) == {"a.b": "16 mb", "c": "2"}
    with pytest.raises(SystemExit, match="expected KEY=VALUE"):
        parse_options(["no-value"])
