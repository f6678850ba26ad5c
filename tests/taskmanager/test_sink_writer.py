"""A sink task's files, as Spark's ``df.write`` lays them out: partition directories named and
escaped as Spark names them, NULL in Hive's default partition, the partition columns out of
the files, a marker per partitioned attempt, CSV with or without a header. No Spark, no Ray."""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from jobmanager.errors import JobGraphError
from jobmanager.model.operators import ParquetSink, ResultSink, staging_dir
from jobmanager.model.sink_layout import escape_path_name, partition_text
from taskmanager.sink_writer import write_sink

JOB = "job1"
ROWS = pa.table(
    {
        "d": [
            datetime.date(2024, 1, 2),
            datetime.date(2024, 1, 2),
            None,
            datetime.date(2024, 1, 3),
        ],
        "s": ["a/b=c%", "a/b=c%", "x", ""],
        "v": [1, 2, 3, 4],
    }
)


def files_under(root) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(folder, name), root)
        for folder, _, names in os.walk(root)
        for name in names
    )


def test_partitioned_rows_go_to_spark_named_directories_without_their_columns(tmp_path):
    sink = ParquetSink(str(tmp_path / "out"), partition_by=("d", "s"))
    assert write_sink(ROWS, sink, JOB, 3, 1) == 3
    staging = staging_dir(sink, JOB)
    assert files_under(staging) == [
        "_tidal-done-00003-1",
        "d=2024-01-02/s=a%2Fb%3Dc%25/part-00003-1.parquet",
        "d=2024-01-03/s=__HIVE_DEFAULT_PARTITION__/part-00003-1.parquet",
        "d=__HIVE_DEFAULT_PARTITION__/s=x/part-00003-1.parquet",
    ]
    first = pq.read_table(os.path.join(staging, "d=2024-01-02/s=a%2Fb%3Dc%25/part-00003-1.parquet"))
    assert first.column_names == ["v"] and first.column("v").to_pylist() == [1, 2]
    marker = json.loads(Path(staging, "_tidal-done-00003-1").read_text())
    assert sorted(marker) == files_under(staging)[1:]


def test_a_partitioned_attempt_with_no_rows_writes_only_its_marker(tmp_path):
    sink = ParquetSink(str(tmp_path / "out"), partition_by=("d",))
    assert write_sink(ROWS.slice(0, 0), sink, JOB, 0, 0) == 0
    assert files_under(staging_dir(sink, JOB)) == ["_tidal-done-00000-0"]


def test_partition_columns_are_matched_without_case_and_cannot_be_all_of_them(tmp_path):
    sink = ParquetSink(str(tmp_path / "out"), partition_by=("D",))
    write_sink(ROWS, sink, JOB, 0, 0)
    assert "d=2024-01-03/part-00000-0.parquet" in files_under(staging_dir(sink, JOB))
    with pytest.raises(ValueError, match="every column"):
        write_sink(
            ROWS.select(["d"]), ParquetSink(str(tmp_path / "o2"), partition_by=("d",)), JOB, 0, 0
        )
    with pytest.raises(ValueError, match="not among"):
        write_sink(ROWS, ParquetSink(str(tmp_path / "o3"), partition_by=("nope",)), JOB, 0, 0)


@pytest.mark.parametrize(
    "value, text",
    [
        (None, "__HIVE_DEFAULT_PARTITION__"),
        ("", "__HIVE_DEFAULT_PARTITION__"),
        ("a b", "a b"),
        ("x:y?#", "x%3Ay%3F%23"),
        ("\x01", "%01"),
        (True, "true"),
        (7, "7"),
        (1.0, "1.0"),
        (1e20, "1.0E20"),
        (datetime.date(2024, 1, 2), "2024-01-02"),
        (datetime.datetime(2024, 1, 2, 3, 4, 5, 500000), "2024-01-02 03%3A04%3A05.5"),
    ],
)
def test_partition_values_read_as_spark_writes_them(value, text):
    assert escape_path_name(partition_text(value)) == text


def test_csv_has_a_header_only_if_asked_and_iso_timestamps(tmp_path):
    table = pa.table(
        {
            "s": ["a,b", None],
            "t": pa.array(
                [datetime.datetime(2024, 1, 2, 3, 4, 5, 120000), None], pa.timestamp("us")
            ),
        }
    )
    plain = ParquetSink(str(tmp_path / "plain"), format="csv")
    headed = ParquetSink(str(tmp_path / "headed"), format="csv", csv_header=True)
    write_sink(table, plain, JOB, 0, 0)
    write_sink(table, headed, JOB, 0, 0)
    assert files_under(staging_dir(plain, JOB)) == ["part-00000-0.csv"]
    assert (
        Path(os.path.join(staging_dir(plain, JOB), "part-00000-0.csv")).read_text()
        == '"a,b","2024-01-02T03:04:05.120"\n,\n'
    )
    written = os.path.join(staging_dir(headed, JOB), "part-00000-0.csv")
    assert Path(written).read_text().splitlines()[0] == '"s","t"'
    back = pacsv.read_csv(
        written, convert_options=pacsv.ConvertOptions(column_types={"t": pa.timestamp("us")})
    )
    assert back.column("t").equals(table.column("t")) and back.column("s")[0].as_py() == "a,b"


def test_an_empty_unpartitioned_csv_is_its_header_or_nothing(tmp_path):
    for header, expected in ((True, '"v"\n'), (False, "")):
        sink = ParquetSink(str(tmp_path / f"out{header}"), format="csv", csv_header=header)
        write_sink(pa.table({"v": pa.array([], pa.int64())}), sink, JOB, 0, 0)
        assert (
            Path(os.path.join(staging_dir(sink, JOB), "part-00000-0.csv")).read_text() == expected
        )


def test_a_sink_says_what_it_cannot_write(tmp_path):
    with pytest.raises(JobGraphError, match="unknown format 'orc'"):
        ParquetSink(str(tmp_path), format="orc")
    with pytest.raises(JobGraphError, match="mode 'sometimes'"):
        ParquetSink(str(tmp_path), mode="sometimes")
    with pytest.raises(JobGraphError, match="unpartitioned Parquet"):
        ResultSink(str(tmp_path), partition_by=("d",))
    assert ParquetSink(str(tmp_path), overwrite=True).mode == "overwrite"
    assert ParquetSink(str(tmp_path), mode="errorifexists").mode == "error"
    assert ParquetSink(str(tmp_path), mode="overwrite").overwrite
