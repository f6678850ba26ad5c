"""FileSource over real Parquet and CSV files: discovery, splits, dynamic inference, reading."""

from __future__ import annotations

import pickle
import uuid
from collections import Counter
from pathlib import Path

import cloudpickle
import fsspec
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from jobmanager.errors import TidalError
from jobmanager.model.inference import (
    DynamicFilteringInfo,
    DynamicParallelismInference,
    InferenceContext,
)
from jobmanager.model.sources import FileSource, SourceError
from jobmanager.model.splits import assign_splits, read_splits
from tests.jobmanager.model.files import (  # noqa: F401  (quiet_logs: a fixture)
    BIG,
    csv_text,
    numbers,
    quiet_logs,
    read_all,
    write_csv,
    write_parquet,
)

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def context(upper_bound: int, per_task: int, *filters: DynamicFilteringInfo) -> InferenceContext:
    return InferenceContext(upper_bound, per_task, tuple(filters))


@pytest.fixture
def orders(tmp_path):
    """Hive-partitioned Parquet: two dates x two regions, 10 rows each, plus Hadoop litter."""
    root = tmp_path / "orders"
    for d, date in enumerate(["2026-11-20", "2026-11-21"]):
        for r, region in enumerate(["eu", "us"]):
            directory = root / f"date={date}" / f"region={region}"
            write_parquet(directory / "part-0.parquet", numbers(10, 100 * d + 10 * r))
            (directory / "_SUCCESS").write_bytes(b"")
            (directory / ".part-0.parquet.crc").write_bytes(b"crc")
    return root


# --- formats, paths and globs ------------------------------------------------------------


def test_a_parquet_file_reads_back_whole(tmp_path):
    path = write_parquet(tmp_path / "t.parquet", numbers(100), row_group_size=7)
    assert read_all(FileSource(path)).equals(numbers(100))


def test_csv_columns_are_strings_unless_typed(tmp_path):
    path = write_csv(tmp_path / "t.csv", ["id", "name"], [["1", "a"], ["2", "b"]])
    assert read_all(FileSource(path)).to_pydict() == {"id": ["1", "2"], "name": ["a", "b"]}
    typed = FileSource(path, csv_options={"column_types": {"id": pa.int64()}})
    assert read_all(typed).schema == pa.schema([("id", pa.int64()), ("name", pa.string())])


def test_headerless_csv_takes_column_names_from_options(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"1,a\n2,b\n")
    options = {"column_names": ["id", "name"], "delimiter": ","}
    splits = FileSource(path, csv_options=options).splits(3)
    assert read_splits(splits, csv_options=options).to_pydict() == {
        "id": ["1", "2"],
        "name": ["a", "b"],
    }


def test_a_directory_is_read_recursively_skipping_hidden_files(tmp_path):
    write_parquet(tmp_path / "d" / "a.parquet", numbers(3))
    write_parquet(tmp_path / "d" / "sub" / "b.parquet", numbers(2, 3))
    write_parquet(tmp_path / "d" / "_temporary" / "c.parquet", numbers(5, 50))
    write_parquet(tmp_path / "d" / ".staging" / "c.parquet", numbers(5, 60))
    (tmp_path / "d" / "_SUCCESS").write_bytes(b"")
    (tmp_path / "d" / ".a.parquet.crc").write_bytes(b"x")
    source = FileSource(tmp_path / "d")
    assert [Path(s.path).name for s in source.splits(BIG)] == ["a.parquet", "b.parquet"]
    assert read_all(source).equals(numbers(5))


def test_named_files_and_underscore_partition_directories_are_not_hidden(tmp_path):
    explicit = write_parquet(tmp_path / "_staged.parquet", numbers(2))
    assert read_all(FileSource(explicit)).equals(numbers(2))
    write_parquet(tmp_path / "t" / "_c=1" / "p.parquet", numbers(1))
    assert read_all(FileSource(tmp_path / "t", partitioning="hive"))["_c"].to_pylist() == ["1"]


def test_globs_match_files_and_double_star_recurses(tmp_path):
    write_parquet(tmp_path / "x" / "a.parquet", numbers(1))
    write_parquet(tmp_path / "x" / "y" / "b.parquet", numbers(1, 1))
    write_csv(tmp_path / "x" / "c.csv", ["id"], [["9"]])
    top = FileSource(str(tmp_path / "x" / "*.parquet"))
    deep = FileSource(str(tmp_path / "x" / "**" / "*.parquet"))
    assert [Path(s.path).name for s in top.splits(BIG)] == ["a.parquet"]
    assert [Path(s.path).name for s in deep.splits(BIG)] == ["a.parquet", "b.parquet"]


def test_a_list_of_paths_is_read_once_each_in_path_order(tmp_path):
    b = write_parquet(tmp_path / "b.parquet", numbers(2, 2))
    a = write_parquet(tmp_path / "a.parquet", numbers(2))
    source = FileSource([b, str(tmp_path / "*.parquet"), a])
    assert [s.path for s in source.splits(BIG)] == [str(a), str(b)]
    assert read_all(source).equals(numbers(4))


def test_fsspec_urls_file_and_memory(tmp_path):
    write_parquet(tmp_path / "a.parquet", numbers(4))
    assert read_all(FileSource(f"file://{tmp_path}/a.parquet")).equals(numbers(4))
    root = f"memory://tidal-tests/{uuid.uuid4().hex}"
    with fsspec.open(f"{root}/t/part.csv", "wb") as handle:
        handle.write(csv_text(["id"], [["1"], ["2"], ["3"]]))
    source = FileSource(root)
    splits = source.splits(4)
    assert len(splits) > 1 and all(s.path.startswith("memory://") for s in splits)
    assert read_all(source, target=4).to_pydict() == {"id": ["1", "2", "3"]}
    assert source.read(assign_splits(splits, 2)[1]).num_rows >= 1


def test_an_explicit_format_reads_files_without_extensions(tmp_path):
    write_parquet(tmp_path / "d" / "part-00000", numbers(3))
    assert read_all(FileSource(tmp_path / "d", format="parquet")).equals(numbers(3))


def test_columns_project_file_and_partition_columns(orders):
    source = FileSource(orders, partitioning="hive", columns=["region", "id"])
    table = read_all(source)
    assert table.column_names == ["region", "id"] and table.num_rows == 40
    assert read_splits(source.splits(BIG), columns=["name"]).column_names == ["name"]


# --- hive partitioning and dynamic filtering ---------------------------------------------


def test_hive_partition_values_become_string_columns(orders):
    table = read_all(FileSource(orders, partitioning="hive"))
    assert table.column_names == ["id", "name", "date", "region"]
    assert table.schema.field("date").type == pa.string()
    assert Counter(zip(table["date"].to_pylist(), table["region"].to_pylist())) == {
        ("2026-11-20", "eu"): 10,
        ("2026-11-20", "us"): 10,
        ("2026-11-21", "eu"): 10,
        ("2026-11-21", "us"): 10,
    }


def test_a_glob_over_partition_directories_reads_values_below_its_fixed_prefix(orders):
    table = read_all(FileSource(str(orders / "date=*" / "region=eu"), partitioning="hive"))
    assert table.column_names == ["id", "name", "date", "region"] and table.num_rows == 20
    assert set(table["region"].to_pylist()) == {"eu"}


def test_without_hive_partitioning_directories_are_just_directories(orders):
    assert read_all(FileSource(orders)).column_names == ["id", "name"]


def test_partition_values_are_unescaped(tmp_path):
    write_parquet(tmp_path / "t" / "at=2026-11-21 10%3A00" / "p.parquet", numbers(1))
    table = read_all(FileSource(tmp_path / "t", partitioning="hive"))
    assert table["at"].to_pylist() == ["2026-11-21 10:00"]


def test_dynamic_filtering_drops_partitions(orders):
    source = FileSource(orders, partitioning="hive")
    kept = source.splits(BIG, DynamicFilteringInfo("date", ("2026-11-21", "2027-01-01")))
    assert {dict(s.partition_values)["date"] for s in kept} == {"2026-11-21"}
    both = [DynamicFilteringInfo("date", ("2026-11-21",)), DynamicFilteringInfo("region", ("eu",))]
    table = read_all(source, filtering=both)
    assert set(table["id"].to_pylist()) == set(range(100, 110))
    assert source.splits(BIG, DynamicFilteringInfo("region", ())) == []


def test_a_filter_on_an_unknown_column_is_ignored_with_a_warning(orders):
    source = FileSource(orders, partitioning="hive")
    with capture_logs() as logs:
        splits = source.splits(BIG, DynamicFilteringInfo("customer", ("42",)))
    assert len(splits) == 4
    warnings = [e for e in logs if e["log_level"] == "warning"]
    assert warnings and warnings[0]["column"] == "customer" and "orders" in warnings[0]["source"]


def test_without_hive_partitioning_filters_are_ignored(orders):
    assert len(FileSource(orders).splits(BIG, DynamicFilteringInfo("date", ()))) == 4


# --- dynamic parallelism inference (FLIP-379) --------------------------------------------


def test_a_file_source_infers_its_parallelism_dynamically(orders):
    assert isinstance(FileSource(orders), DynamicParallelismInference)


def test_inference_is_capped_by_the_upper_bound(tmp_path):
    write_parquet(tmp_path / "t.parquet", numbers(1000), row_group_size=50)
    source = FileSource(tmp_path / "t.parquet")
    assert source.infer_parallelism(context(100, 1)) == 20
    assert source.infer_parallelism(context(8, 1)) == 8


def test_inference_follows_the_data_volume_per_task(tmp_path):
    path = write_csv(tmp_path / "t.csv", ["x"], [[str(i)] for i in range(10_000)])
    source = FileSource(path)
    size = path.stat().st_size
    assert source.infer_parallelism(context(1000, size)) == 1
    assert source.infer_parallelism(context(1000, size // 4)) in (4, 5)
    assert source.infer_parallelism(context(1000, BIG)) == 1


def test_inference_counts_only_partitions_that_survive_filtering(orders):
    source = FileSource(orders, partitioning="hive")
    assert source.infer_parallelism(context(100, 1)) == 4
    eu = DynamicFilteringInfo("region", ("eu",))
    assert source.infer_parallelism(context(100, 1, eu)) == 2
    one = DynamicFilteringInfo("date", ("2026-11-20",))
    assert source.infer_parallelism(context(100, 1, eu, one)) == 1


def test_the_plan_says_how_many_files_dynamic_filtering_pruned(orders):
    source = FileSource(orders, partitioning="hive")
    eu = DynamicFilteringInfo("region", ("eu",))
    plan = source.plan(context(100, 1, eu))
    assert plan.description.startswith("2 files, ")
    assert plan.description.endswith(
        "; 2 more files in partitions pruned by dynamic filtering on region"
    )
    assert "pruned" not in source.plan(context(100, 1)).description


def test_an_empty_source_after_filtering_infers_one(orders):
    source = FileSource(orders, partitioning="hive")
    assert source.infer_parallelism(context(100, 1, DynamicFilteringInfo("date", ()))) == 1


@settings(
    PROPERTY, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    upper_bound=st.integers(1, 50),
    per_task=st.integers(1, 5000),
    regions=st.sets(st.sampled_from(["eu", "us", "apac"])),
)
def test_inference_is_the_bytes_read_over_the_volume_per_task_capped_by_splits_and_bound(
    orders, upper_bound, per_task, regions
):
    source = FileSource(orders, partitioning="hive")
    only = DynamicFilteringInfo("region", tuple(sorted(regions)))
    splits = source.splits(per_task, only)
    by_bytes = -(-sum(s.length for s in splits) // per_task)
    assert source.infer_parallelism(context(upper_bound, per_task, only)) == max(
        1, min(by_bytes, len(splits), upper_bound)
    )


def test_tasks_past_the_jobs_slots_are_rounded_down_to_whole_waves(tmp_path):
    """Three files on two slots: two tasks of whole files, which Spark reads itself."""
    for n in range(3):
        write_parquet(tmp_path / f"part-{n}.parquet", numbers(100))
    source = FileSource(tmp_path)
    plan = source.plan(InferenceContext(100, 1, (), slots=2))
    assert plan.parallelism == 2 and len(plan.splits) == 3
    assert plan.description.endswith("; 3 tasks -> 2, whole waves of 2 slots")
    assert sorted(len(mine) for mine in assign_splits(list(plan.splits), 2)) == [1, 2]
    assert source.plan(InferenceContext(100, 1, (), slots=3)).parallelism == 3
    assert source.plan(InferenceContext(100, 1, (), slots=8)).parallelism == 3
    assert "waves" not in source.plan(InferenceContext(100, 1)).description  # no slot limit


# --- errors ------------------------------------------------------------------------------


def test_construction_never_touches_the_file_system(tmp_path):
    source = FileSource(tmp_path / "missing" / "*.parquet")
    with pytest.raises(SourceError):
        source.splits(BIG)


@pytest.mark.parametrize(
    "layout, name, problem",
    [
        ({}, "missing", "does not exist"),
        ({}, "*.parquet", "glob matches nothing"),
        ({"d/_SUCCESS": b"", "d/.x.crc": b""}, "d", "no data files"),
        ({"d/notes.txt": b"hi"}, "d", "unknown file format"),
        ({"d/a.csv": b"x\n1\n", "d/b.parquet": None}, "d", "mixed file formats"),
        ({"d/a.parquet": b"not parquet at all"}, "d", "unreadable file"),
        ({"d/k=1/a.csv": b"x\n", "d/b.csv": b"x\n"}, "d", "partition directories differ"),
    ],
)
def test_each_error_names_the_source_and_the_path(tmp_path, layout, name, problem):
    for relative, content in layout.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        if content is None:
            write_parquet(tmp_path / relative, numbers(1))
        else:
            (tmp_path / relative).write_bytes(content)
    source = FileSource(str(tmp_path / name), partitioning="hive")
    with pytest.raises(SourceError, match=problem) as raised:
        source.infer_parallelism(context(4, 1))
    assert isinstance(raised.value, TidalError) and str(tmp_path) in raised.value.path
    assert "FileSource(" in str(raised.value) and raised.value.path in str(raised.value)


def test_files_that_disagree_on_a_columns_type_are_refused_naming_both(tmp_path):
    write_parquet(tmp_path / "d" / "a.parquet", numbers(3))
    write_parquet(tmp_path / "d" / "b.parquet", pa.table({"id": ["x"], "extra": [1.5]}))
    with pytest.raises(SourceError, match="column 'id' is string here but int64 in .*a.parquet"):
        FileSource(str(tmp_path / "d")).infer_parallelism(context(4, 1))
    write_parquet(tmp_path / "e" / "a.parquet", numbers(3))
    write_parquet(tmp_path / "e" / "b.parquet", pa.table({"id": [7], "extra": [1.5]}))
    assert (
        FileSource(str(tmp_path / "e")).read(FileSource(str(tmp_path / "e")).splits(BIG)).num_rows
        == 4
    )


def test_a_file_that_vanishes_before_reading_names_its_path(tmp_path):
    path = write_parquet(tmp_path / "t.parquet", numbers(3))
    source = FileSource(path)
    splits = source.splits(BIG)
    path.unlink()
    with pytest.raises(SourceError, match="cannot read") as raised:
        source.read(splits)
    assert raised.value.path == str(path)


@pytest.mark.parametrize(
    "arguments",
    [
        {"paths": []},
        {"paths": "x", "format": "orc"},
        {"paths": "x", "partitioning": "range"},
        {"paths": "x", "csv_options": {"delimter": ";"}},
    ],
)
def test_bad_arguments_fail_at_construction(arguments):
    with pytest.raises(SourceError):
        FileSource(**arguments)


# --- shipping the source -----------------------------------------------------------------


def test_a_source_pickles_and_reads_the_same_elsewhere(orders):
    source = FileSource(str(orders), partitioning="hive", columns=["id", "date"])
    copy = pickle.loads(cloudpickle.dumps(source))
    assert copy == source and repr(copy) == repr(source)
    assert read_all(copy).equals(read_all(source))


def test_the_repr_says_what_is_read(tmp_path):
    source = FileSource(str(tmp_path / "*.csv"), format="csv", csv_options={"delimiter": ";"})
    assert repr(source) == (
        f"FileSource(['{tmp_path}/*.csv'], format='csv', csv_options={{'delimiter': ';'}})"
    )


def test_relative_paths_become_absolute_at_construction(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert FileSource("data/*.parquet").paths == (f"{tmp_path}/data/*.parquet",)


def test_a_directory_with_a_result_manifest_reads_exactly_the_files_it_names(tmp_path):
    write_parquet(tmp_path / "out" / "part-00000-new.parquet", numbers(3))
    write_parquet(tmp_path / "out" / "part-00001-new.parquet", numbers(2, start=3))
    write_parquet(tmp_path / "out" / "part-00000.parquet", numbers(100))  # an old result's
    (tmp_path / "out" / "_SUCCESS").write_text(
        '{"committer": "tidal", "job": "j", "files": ["part-00000-new.parquet", "part-00001-new.parquet"]}'
    )
    source = FileSource(str(tmp_path / "out"))
    assert sorted(source.read(source.splits(BIG)).column("id").to_pylist()) == [0, 1, 2, 3, 4]
    (tmp_path / "out" / "_SUCCESS").write_text("")  # Spark's empty marker: every file
    assert source.read(source.splits(BIG)).num_rows == 105


def test_credentials_in_a_url_never_show(tmp_path):
    source = FileSource("s3://AKIAXXXX:topsecret@bucket/data?X-Amz-Signature=abc123")
    assert "topsecret" not in repr(source) and "abc123" not in repr(source)
    assert "bucket/data" in repr(source)
    assert source != FileSource("s3://other:secret@bucket/data")  # still told apart


def test_thousands_of_files_are_listed_many_at_a_time(tmp_path, monkeypatch):
    """Each footer read is a round trip on an object store: they overlap, not queue."""
    import threading
    import time as clock

    import jobmanager.model.sources as sources

    for n in range(64):
        write_parquet(tmp_path / "d" / f"f{n:03d}.parquet", numbers(2, start=2 * n))
    inside, most, lock = [0], [0], threading.Lock()
    real = sources.parquet_splits

    def slow_round_trip(file, target, columns):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        clock.sleep(0.02)
        try:
            return real(file, target, columns)
        finally:
            with lock:
                inside[0] -= 1

    monkeypatch.setattr(sources, "parquet_splits", slow_round_trip)
    plan = FileSource(str(tmp_path / "d")).plan(context(1000, 1))
    assert most[0] >= 8  # round trips overlapped, eight or more at once
    assert plan.parallelism == 64 and len(plan.splits) == 64
    assert plan.description.startswith("64 files, ") and "64 splits, listed in " in plan.description
