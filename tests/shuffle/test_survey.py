"""The survey of a dead TaskManager's shuffle directory: every whole file with the size and
fingerprint its writer reported, nothing cut short, damaged or half written."""

from __future__ import annotations

import os

from shuffle import HashPartitioner, PartitionId
from shuffle.survey import fingerprint, survey


def write(directory, table, index: int, attempt: int = 0):
    partition_id = PartitionId("orders->join", index)
    with directory.writer(partition_id, 4, HashPartitioner(("key",)), attempt=attempt) as w:
        w.write(table)
        return w.finish()


def test_whole_files_are_found_as_their_writer_reported_them(shuffle_directory, mixed_table):
    written = [write(shuffle_directory, mixed_table(200, seed=k), k) for k in range(3)]
    rerun = write(shuffle_directory, mixed_table(50, seed=9), 1, attempt=1)
    found = survey(str(shuffle_directory.root))
    expected = sorted((w.path, w.file_size, w.checksum) for w in [*written, rerun])
    assert sorted(found) == expected
    assert all(size == os.path.getsize(path) for path, size, _ in found)
    assert len({checksum for _, _, checksum in found}) == 4  # each file told from the others


def test_cut_damaged_and_unfinished_files_are_left_out(shuffle_directory, mixed_table):
    whole, cut, damaged = (write(shuffle_directory, mixed_table(200, seed=k), k) for k in range(3))
    with open(cut.path, "r+b") as f:
        f.truncate(cut.file_size - 3)
    with open(damaged.path, "r+b") as f:  # a byte of the index: its crc32 no longer matches
        f.seek(damaged.file_size - 60)
        byte = f.read(1)
        f.seek(damaged.file_size - 60)
        f.write(bytes([byte[0] ^ 0xFF]))
    folder = os.path.dirname(whole.path)
    with open(os.path.join(folder, ".5-0.tpf.123-0.tmp"), "wb") as f:
        f.write(b"half a file")
    assert survey(str(shuffle_directory.root)) == ((whole.path, whole.file_size, whole.checksum),)
    assert fingerprint(cut.path) is None and fingerprint(damaged.path) is None
    assert fingerprint(os.path.join(folder, "missing.tpf")) is None
