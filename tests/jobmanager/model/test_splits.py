"""A file source's splits (``jobmanager.model.splits``): cut at row groups or lines so every
row is read once, shared among subtasks balanced by bytes, and no more tasks than whole waves
of the job's slots allow."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobmanager.messages.codec import decode, encode
from jobmanager.model.sources import FileSource
from jobmanager.model.splits import (
    WHOLE_FILES_SLACK,
    FileSplit,
    assign_splits,
    in_whole_waves,
    read_splits,
    whole_file_parallelism,
    whole_files_fit,
)
from tests.jobmanager.model.files import (  # noqa: F401  (quiet_logs: a fixture)
    BIG,
    numbers,
    quiet_logs,
    read_all,
    write_csv,
    write_parquet,
)

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(tasks=st.integers(1, 10_000), slots=st.one_of(st.none(), st.integers(1, 500)))
def test_whole_waves_never_add_tasks_and_never_double_a_tasks_share(tasks, slots):
    rounded = in_whole_waves(tasks, slots)
    assert 1 <= rounded <= tasks and rounded * 2 > tasks
    if slots and tasks > slots:
        assert rounded % slots == 0
    else:
        assert rounded == tasks


# --- splits ------------------------------------------------------------------------------


def test_parquet_splits_group_whole_row_groups_up_to_the_target(tmp_path):
    path = write_parquet(tmp_path / "t.parquet", numbers(1000), row_group_size=100)
    metadata = pq.read_metadata(path)
    one_group = max(
        sum(
            metadata.row_group(g).column(c).total_compressed_size
            for c in range(metadata.num_columns)
        )
        for g in range(10)
    )
    splits = FileSource(path).splits(3 * one_group)
    assert [g for s in splits for g in s.row_groups] == list(range(10))
    assert all(s.length <= 3 * one_group for s in splits) and len(splits) in (4, 5)
    assert all(s.row_groups == tuple(range(s.row_groups[0], s.row_groups[-1] + 1)) for s in splits)
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
    path = write_csv(
        tmp_path / "t.csv",
        ["a_long_column_name", "n"],
        rows,
        eol=eol,
        trailing_newline=trailing_newline,
    )
    source = FileSource(path)
    for target in (1, 7, 33, 64, BIG):
        assert read_all(source, target).to_pydict() == {
            "a_long_column_name": [r[0] for r in rows],
            "n": [r[1] for r in rows],
        }


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
    header = draw(
        st.lists(
            st.text("abcdefghij_", min_size=1, max_size=30), min_size=1, max_size=4, unique=True
        )
    )
    row = st.lists(cells, min_size=len(header), max_size=len(header))
    files = draw(
        st.lists(
            st.tuples(st.lists(row, max_size=30), st.sampled_from(["\n", "\r\n"]), st.booleans()),
            min_size=1,
            max_size=3,
        )
    )
    return header, files


@PROPERTY
@given(csv_source=csv_sources(), target=st.integers(1, 300), parallelism=st.integers(1, 5))
def test_every_csv_row_is_read_exactly_once_at_any_split_size(
    tmp_path_factory, csv_source, target, parallelism
):
    header, files = csv_source
    root = tmp_path_factory.mktemp("csv")
    for index, (rows, eol, trailing) in enumerate(files):
        write_csv(root / f"part-{index}.csv", header, rows, eol=eol, trailing_newline=trailing)
    expected = {name: [r[c] for rows, _, _ in files for r in rows] for c, name in enumerate(header)}
    source = FileSource(root)
    splits = source.splits(target)
    assert read_all(source, target).to_pydict() == expected == read_all(source).to_pydict()
    per_subtask = [source.read(part).to_pylist() for part in assign_splits(splits, parallelism)]
    assert Counter(repr(row) for rows in per_subtask for row in rows) == Counter(
        repr(row) for row in read_all(source).to_pylist()
    )


@PROPERTY
@given(
    num_rows=st.integers(0, 300),
    row_group_size=st.integers(1, 60),
    target=st.integers(1, 20_000),
    seed=st.integers(0, 1000),
)
def test_every_parquet_row_is_read_exactly_once_at_any_split_size(
    tmp_path_factory, num_rows, row_group_size, target, seed
):
    root = tmp_path_factory.mktemp("parquet")
    table = numbers(num_rows, seed)
    write_parquet(root / "t.parquet", table, row_group_size=row_group_size)
    splits = FileSource(root).splits(target)
    num_groups = pq.read_metadata(root / "t.parquet").num_row_groups
    assert [g for s in splits for g in s.row_groups] == list(range(num_groups))
    result = read_splits(splits)
    assert result.equals(table) if num_rows else result.num_rows == 0


# --- assigning splits to subtasks ---------------------------------------------------------


split_lists = st.lists(
    st.integers(0, 10_000).map(lambda n: FileSplit("/f.csv", "csv", 0, n)), max_size=60
).map(lambda splits: [dataclasses.replace(s, start=i) for i, s in enumerate(splits)])


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


def _parquet_splits(sizes: list[list[int]], root: str = "/data") -> list[FileSplit]:
    """Row-group splits of local Parquet files: ``sizes[f]`` are file f's splits' bytes."""
    return [
        FileSplit(f"{root}/part-{f}.parquet", "parquet", 0, n, (g,))
        for f, groups in enumerate(sizes)
        for g, n in enumerate(groups)
    ]


parquet_split_lists = st.lists(
    st.lists(st.integers(1, 1_000), min_size=1, max_size=4), min_size=1, max_size=30
).map(_parquet_splits)


@PROPERTY
@given(splits=parquet_split_lists, parallelism=st.integers(1, 12))
def test_files_spark_reads_go_whole_only_where_that_stays_near_an_even_share(splits, parallelism):
    assigned = assign_splits(splits, parallelism)
    assert Counter(s for part in assigned for s in part) == Counter(splits)
    owners = {}
    for subtask, part in enumerate(assigned):
        for split in part:
            owners.setdefault(split.path, set()).add(subtask)
    loads = [sum(s.length for s in part) for part in assigned]
    total = sum(s.length for s in splits)
    if whole_files_fit(splits, parallelism):
        assert all(len(subtasks) == 1 for subtasks in owners.values())  # each file whole
        assert max(loads) * parallelism <= WHOLE_FILES_SLACK * total and min(loads) > 0
    else:
        assert max(loads) - min(loads) <= max(s.length for s in splits)  # by split, as before


def test_39_files_for_40_tasks_on_2_slots_become_39_tasks_of_one_file_each():
    """TPC-H lineitem at scale 10: 39 files read by 40 tasks of 16 MiB would share files, each
    share read through Arrow and written again for Spark."""
    splits = _parquet_splits([[8, 8]] * 38 + [[6]])
    assert not whole_files_fit(splits, 40) and whole_file_parallelism(splits, 40, 2) == 39
    assert whole_file_parallelism(splits, 72, 2) == 39  # q08's scan: one file a task
    assert whole_file_parallelism(splits, 80, 2) == 80  # under half: shares of files it is
    owners = [{s.path for s in part} for part in assign_splits(splits, 39)]
    assert sum(len(paths) for paths in owners) == 39  # every file read whole by one task
    assert whole_file_parallelism(splits, 40, None) == 39  # no slots to fill: one file a task


def test_files_spark_cannot_read_itself_are_balanced_by_split():
    remote = [dataclasses.replace(s, path="s3://b" + s.path) for s in _parquet_splits([[5, 5]] * 3)]
    partitioned = [
        dataclasses.replace(s, partition_values=(("y", "1"),))
        for s in _parquet_splits([[5, 5]] * 3)
    ]
    for splits in (remote, partitioned):
        assert whole_file_parallelism(splits, 6, 2) == 6
        assert [len(part) for part in assign_splits(splits, 3)] == [2, 2, 2]
        assert any(len({s.path for s in part}) == 2 for part in assign_splits(splits, 3))


@PROPERTY
@given(
    splits=parquet_split_lists,
    parallelism=st.integers(1, 40),
    slots=st.one_of(st.none(), st.integers(1, 8)),
)
def test_fewer_tasks_for_whole_files_are_never_under_half_and_always_whole(
    splits, parallelism, slots
):
    fewer = whole_file_parallelism(splits, parallelism, slots)
    assert fewer == parallelism or (parallelism + 1) // 2 <= fewer < parallelism
    if fewer < parallelism:
        files = len({s.path for s in splits})
        assert whole_files_fit(splits, fewer)
        assert in_whole_waves(fewer, slots) == fewer or fewer == files
