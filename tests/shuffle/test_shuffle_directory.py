"""Released partitions' files are deleted; a closed shuffle directory is gone."""

from __future__ import annotations

import pyarrow as pa
import pytest

from shuffle import PartitionId, RebalancePartitioner, ShuffleDirectory


def _write(directory: ShuffleDirectory, partition_id: PartitionId) -> None:
    with directory.writer(partition_id, 2, RebalancePartitioner()) as writer:
        writer.write(pa.table({"v": [1, 2, 3]}))
        writer.finish()


def test_release_deletes_only_the_named_partitions(shuffle_directory):
    kept, dropped = PartitionId("a->b", 0), PartitionId("a->b", 1)
    _write(shuffle_directory, kept)
    _write(shuffle_directory, dropped)
    released = shuffle_directory.release([dropped, PartitionId("never", 9)])
    assert released == [dropped]
    assert not shuffle_directory.path_for(dropped).exists()
    assert shuffle_directory.contains(kept) and not shuffle_directory.contains(dropped)


def test_close_removes_the_whole_directory_with_unfinished_writes(tmp_path):
    directory = ShuffleDirectory(tmp_path / "tm-1")
    _write(directory, PartitionId("a->b", 0))
    unfinished = directory.writer(PartitionId("a->b", 1), 2, RebalancePartitioner())
    unfinished.write(pa.table({"v": [1]}))
    directory.close()
    directory.close()
    assert not (tmp_path / "tm-1").exists()
    with pytest.raises(RuntimeError, match="is closed"):
        directory.writer(PartitionId("a->b", 2), 2, RebalancePartitioner())


def test_a_temporary_directory_is_fresh_and_removed_on_exit(tmp_path):
    with ShuffleDirectory.temporary(tmp_path) as directory:
        root = directory.root
        assert root.parent == tmp_path and root.name.startswith("tidal-shuffle-")
        _write(directory, PartitionId("x", 0))
    assert not root.exists()


@pytest.mark.parametrize("result", ["a/b->../c", "", "ü ✓ space", "x" * 600, ".", ".."])
def test_every_result_id_maps_to_a_path_inside_the_directory(shuffle_directory, result):
    partition_id = PartitionId(result, 4)
    path = shuffle_directory.path_for(partition_id)
    assert path.parent.parent == shuffle_directory.root
    assert len(path.parent.name) <= 200
    _write(shuffle_directory, partition_id)
    assert shuffle_directory.contains(partition_id)


def test_distinct_long_result_ids_get_distinct_folders(shuffle_directory):
    first = shuffle_directory.path_for(PartitionId("x" * 600 + "1", 0))
    second = shuffle_directory.path_for(PartitionId("x" * 600 + "2", 0))
    assert first != second


def test_each_attempt_has_its_own_file_and_release_touches_only_the_one_named(tmp_path):
    from shuffle.paths import partition_path

    directory = ShuffleDirectory(tmp_path / "shuffle")
    pid = PartitionId("a->b", 4)
    for attempt in (0, 1):
        with directory.writer(pid, 2, RebalancePartitioner(), attempt=attempt) as writer:
            writer.write(pa.table({"x": [1, 2, 3]}))
            writer.finish()
    assert directory.path_for(pid, 1) != directory.path_for(pid, 0)
    assert str(directory.path_for(pid, 1)) == partition_path(str(directory.root), pid, 1)
    assert directory.release([pid], [0]) == [pid]  # a late release of the old attempt
    assert directory.path_for(pid, 1).exists() and not directory.path_for(pid, 0).exists()
