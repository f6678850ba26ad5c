"""FileSource over real Parquet and CSV files: discovery, splits, dynamic inference, reading."""

from __future__ import annotations

import csv
import dataclasses
import io
import logging
import pickle
import uuid
from collections import Counter
from pathlib import Path

import cloudpickle
import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import structlog
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from jobmanager.errors import TidalError
from jobmanager.messages.codec import decode, encode
from jobmanager.model.inference import (
    DynamicFilteringInfo,
    DynamicParallelismInference,
    InferenceContext,
)
from jobmanager.model.sources import (
    FileSource,
    FileSplit,
    SourceError,
    assign_splits,
    in_whole_waves,
    read_splits,
)

BIG = 1 << 40
PROPERTY = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def numbers(n: int, start: int = 0) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "name": [f"row-{i}" for i in range(start, start + n)]})


def write_parquet(path: Path, table: pa.Table, row_group_size: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


def csv_text(header: list[str], rows: list[list[str]], eol: str = "\n",
             trailing_newline: bool = True) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator=eol).writerows([header, *rows])
    text = buffer.getvalue()
    return (text if trailing_newline else text[: -len(eol)]).encode()


def write_csv(path: Path, header: list[str], rows: list[list[str]], **kwargs) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(csv_text(header, rows, **kwargs))
    return path


def read_all(source: FileSource, target: int = BIG, filtering=None) -> pa.Table:
    return source.read(source.splits(target, filtering))


def context(upper_bound: int, per_task: int, *filters: DynamicFilteringInfo) -> InferenceContext:
    return InferenceContext(upper_bound, per_task, tuple(filters))


@pytest.fixture(autouse=True)
def quiet_logs():
    """Debug lines from every enumeration would bury a failure; warnings still show."""
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    yield
    structlog.reset_defaults()


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
        "id": ["1", "2"], "name": ["a", "b"]}


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
        ("2026-11-20", "eu"): 10, ("2026-11-20", "us"): 10,
        ("2026-11-21", "eu"): 10, ("2026-11-21", "us"): 10}


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


# --- splits ------------------------------------------------------------------------------


def test_parquet_splits_group_whole_row_groups_up_to_the_target(tmp_path):
    path = write_parquet(tmp_path / "t.parquet", numbers(1000), row_group_size=100)
    metadata = pq.read_metadata(path)
    one_group = max(sum(metadata.row_group(g).column(c).total_compressed_size
                        for c in range(metadata.num_columns)) for g in range(10))
    splits = FileSource(path).splits(3 * one_group)
    assert [g for s in splits for g in s.row_groups] == list(range(10))
    assert all(s.length <= 3 * one_group for s in splits) and len(splits) in (4, 5)
    assert all(s.row_groups == tuple(range(s.row_groups[0], s.row_groups[-1] + 1))
               for s in splits)
    assert [len(s.row_groups) for s in FileSource(path).splits(1)] == [1] * 10


def test_a_split_is_frozen_slotted_and_travels_as_a_message():
    split = FileSplit("/d/a.parquet", "parquet", 4, 100, (0, 1), (("date", "2026-11-21"),))
    with pytest.raises(dataclasses.FrozenInstanceError):
        split.start = 0
    assert not hasattr(split, "__dict__")
    assert decode(encode(split)) == split


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
@pytest.mark.parametrize("trailing_newline", [True, False])
def test_csv_lines_longer_than_a_split_are_read_once(tmp_path, eol, trailing_newline):
    rows = [["a" * 50, "1"], ["b", "2"], ["c" * 120, "3"], ["", "4"], ["d", "5"]]
    path = write_csv(tmp_path / "t.csv", ["a_long_column_name", "n"], rows, eol=eol,
                     trailing_newline=trailing_newline)
    source = FileSource(path)
    for target in (1, 7, 33, 64, BIG):
        assert read_all(source, target).to_pydict() == {
            "a_long_column_name": [r[0] for r in rows], "n": [r[1] for r in rows]}


def test_csv_byte_ranges_cover_the_file_exactly(tmp_path):
    path = write_csv(tmp_path / "t.csv", ["x"], [[str(i)] for i in range(1000)])
    splits = FileSource(path).splits(500)
    assert splits[0].start == 0 and all(s.row_groups == () for s in splits)
    assert all(a.start + a.length == b.start for a, b in zip(splits, splits[1:]))
    assert splits[-1].start + splits[-1].length == path.stat().st_size
    assert all(s.length <= 500 for s in splits)


def test_header_only_and_empty_csv_files_have_no_rows(tmp_path):
    write_csv(tmp_path / "d" / "a.csv", ["x", "y"], [])
    (tmp_path / "d" / "b.csv").write_bytes(b"")
    table = read_all(FileSource(tmp_path / "d"), target=2)
    assert table.num_rows == 0 and table.column_names == ["x", "y"]


def test_newlines_in_values_keep_each_csv_file_whole(tmp_path):
    path = write_csv(tmp_path / "t.csv", ["x"], [["multi\nline"], ["b"]])
    source = FileSource(path, csv_options={"newlines_in_values": True})
    assert len(source.splits(1)) == 1
    assert read_all(source, 1).to_pydict() == {"x": ["multi\nline", "b"]}


cells = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=40)


@st.composite
def csv_sources(draw):
    """A header, then one to three files of rows under it, each with its own line ends."""
    header = draw(st.lists(st.text("abcdefghij_", min_size=1, max_size=30), min_size=1,
                           max_size=4, unique=True))
    row = st.lists(cells, min_size=len(header), max_size=len(header))
    files = draw(st.lists(st.tuples(st.lists(row, max_size=30), st.sampled_from(["\n", "\r\n"]),
                                    st.booleans()), min_size=1, max_size=3))
    return header, files


@PROPERTY
@given(csv_source=csv_sources(), target=st.integers(1, 300), parallelism=st.integers(1, 5))
def test_every_csv_row_is_read_exactly_once_at_any_split_size(tmp_path_factory, csv_source,
                                                               target, parallelism):
    header, files = csv_source
    root = tmp_path_factory.mktemp("csv")
    for index, (rows, eol, trailing) in enumerate(files):
        write_csv(root / f"part-{index}.csv", header, rows, eol=eol, trailing_newline=trailing)
    expected = {name: [r[c] for rows, _, _ in files for r in rows]
                for c, name in enumerate(header)}
    source = FileSource(root)
    splits = source.splits(target)
    assert read_all(source, target).to_pydict() == expected == read_all(source).to_pydict()
    per_subtask = [source.read(part).to_pylist() for part in assign_splits(splits, parallelism)]
    assert Counter(repr(row) for rows in per_subtask for row in rows) == Counter(
        repr(row) for row in read_all(source).to_pylist())


@PROPERTY
@given(num_rows=st.integers(0, 300), row_group_size=st.integers(1, 60),
       target=st.integers(1, 20_000), seed=st.integers(0, 1000))
def test_every_parquet_row_is_read_exactly_once_at_any_split_size(
        tmp_path_factory, num_rows, row_group_size, target, seed):
    root = tmp_path_factory.mktemp("parquet")
    table = numbers(num_rows, seed)
    write_parquet(root / "t.parquet", table, row_group_size=row_group_size)
    splits = FileSource(root).splits(target)
    num_groups = pq.read_metadata(root / "t.parquet").num_row_groups
    assert [g for s in splits for g in s.row_groups] == list(range(num_groups))
    result = read_splits(splits)
    assert result.equals(table) if num_rows else result.num_rows == 0


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
    assert plan.description.endswith("; 2 more files in partitions pruned by dynamic filtering on region")
    assert "pruned" not in source.plan(context(100, 1)).description


def test_an_empty_source_after_filtering_infers_one(orders):
    source = FileSource(orders, partitioning="hive")
    assert source.infer_parallelism(context(100, 1, DynamicFilteringInfo("date", ()))) == 1


@settings(PROPERTY, suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
@given(upper_bound=st.integers(1, 50), per_task=st.integers(1, 5000),
       regions=st.sets(st.sampled_from(["eu", "us", "apac"])))
def test_inference_is_min_of_splits_and_upper_bound(orders, upper_bound, per_task, regions):
    source = FileSource(orders, partitioning="hive")
    only = DynamicFilteringInfo("region", tuple(sorted(regions)))
    splits = source.splits(per_task, only)
    assert source.infer_parallelism(context(upper_bound, per_task, only)) == max(
        1, min(len(splits), upper_bound))


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


@PROPERTY
@given(tasks=st.integers(1, 10_000), slots=st.one_of(st.none(), st.integers(1, 500)))
def test_whole_waves_never_add_tasks_and_never_double_a_tasks_share(tasks, slots):
    rounded = in_whole_waves(tasks, slots)
    assert 1 <= rounded <= tasks and rounded * 2 > tasks
    if slots and tasks > slots:
        assert rounded % slots == 0
    else:
        assert rounded == tasks


# --- assigning splits to subtasks ---------------------------------------------------------


split_lists = st.lists(st.integers(0, 10_000).map(lambda n: FileSplit("/f.csv", "csv", 0, n)),
                       max_size=60).map(lambda splits: [dataclasses.replace(s, start=i)
                                                        for i, s in enumerate(splits)])


@PROPERTY
@given(splits=split_lists, parallelism=st.integers(1, 12))
def test_assignment_places_every_split_once_and_balances_bytes(splits, parallelism):
    assigned = assign_splits(splits, parallelism)
    assert len(assigned) == parallelism
    assert Counter(s for part in assigned for s in part) == Counter(splits)
    loads = [sum(s.length for s in part) for part in assigned]
    assert max(loads) - min(loads) <= max((s.length for s in splits), default=0)
    assert assigned == assign_splits(list(splits), parallelism)


def test_more_subtasks_than_splits_leaves_some_empty():
    splits = [FileSplit("/f.csv", "csv", i * 10, 10) for i in range(3)]
    assert assign_splits(splits, 5) == [[splits[0]], [splits[1]], [splits[2]], [], []]
    with pytest.raises(ValueError):
        assign_splits(splits, 0)


def test_biggest_splits_go_first_to_the_least_loaded_subtask():
    sizes = [5, 9, 4, 7, 3]
    splits = [FileSplit("/f.csv", "csv", i, n) for i, n in enumerate(sizes)]
    assigned = assign_splits(splits, 2)
    assert [[s.length for s in part] for part in assigned] == [[9, 4], [5, 7, 3]]


# --- errors ------------------------------------------------------------------------------


def test_construction_never_touches_the_file_system(tmp_path):
    source = FileSource(tmp_path / "missing" / "*.parquet")
    with pytest.raises(SourceError):
        source.splits(BIG)


@pytest.mark.parametrize("layout, name, problem", [
    ({}, "missing", "does not exist"),
    ({}, "*.parquet", "glob matches nothing"),
    ({"d/_SUCCESS": b"", "d/.x.crc": b""}, "d", "no data files"),
    ({"d/notes.txt": b"hi"}, "d", "unknown file format"),
    ({"d/a.csv": b"x\n1\n", "d/b.parquet": None}, "d", "mixed file formats"),
    ({"d/a.parquet": b"not parquet at all"}, "d", "unreadable file"),
    ({"d/k=1/a.csv": b"x\n", "d/b.csv": b"x\n"}, "d", "partition directories differ"),
])
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
    assert FileSource(str(tmp_path / "e")).read(FileSource(str(tmp_path / "e")).splits(BIG)).num_rows == 4


def test_a_file_that_vanishes_before_reading_names_its_path(tmp_path):
    path = write_parquet(tmp_path / "t.parquet", numbers(3))
    source = FileSource(path)
    splits = source.splits(BIG)
    path.unlink()
    with pytest.raises(SourceError, match="cannot read") as raised:
        source.read(splits)
    assert raised.value.path == str(path)


@pytest.mark.parametrize("arguments", [
    {"paths": []}, {"paths": "x", "format": "orc"}, {"paths": "x", "partitioning": "range"},
    {"paths": "x", "csv_options": {"delimter": ";"}},
])
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
    assert repr(source) == (f"FileSource(['{tmp_path}/*.csv'], format='csv', "
                            "csv_options={'delimiter': ';'})")


def test_relative_paths_become_absolute_at_construction(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert FileSource("data/*.parquet").paths == (f"{tmp_path}/data/*.parquet",)


def test_a_directory_with_a_result_manifest_reads_exactly_the_files_it_names(tmp_path):
    write_parquet(tmp_path / "out" / "part-00000-new.parquet", numbers(3))
    write_parquet(tmp_path / "out" / "part-00001-new.parquet", numbers(2, start=3))
    write_parquet(tmp_path / "out" / "part-00000.parquet", numbers(100))  # an old result's
    (tmp_path / "out" / "_SUCCESS").write_text(
        '{"committer": "tidal", "job": "j", "files": ["part-00000-new.parquet", "part-00001-new.parquet"]}')
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
    real = sources._parquet_splits

    def slow_round_trip(file, target):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        clock.sleep(0.02)
        try:
            return real(file, target)
        finally:
            with lock:
                inside[0] -= 1

    monkeypatch.setattr(sources, "_parquet_splits", slow_round_trip)
    began = clock.perf_counter()
    plan = FileSource(str(tmp_path / "d")).plan(context(1000, 1))
    assert clock.perf_counter() - began < 64 * 0.02 / 4  # one after the other: 1.28 s
    assert most[0] >= 8 and plan.parallelism == 64 and len(plan.splits) == 64
    assert plan.description.startswith("64 files, ") and "64 splits, listed in " in plan.description
