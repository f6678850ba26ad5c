"""What a TaskManager's shuffle directory holds after the TaskManager died, file by file.

A TaskManager that dies leaves its finished partition files on its node's disk. Before the
JobManager keeps them, instead of running their producers again, the node surveys the dead
TaskManager's directory: each finished file's path, size and fingerprint (the crc32 of its
footer, which holds the crc32 of its index, which holds every subpartition's crc32), read and
checked as a reader checks a file's tail. The JobManager compares each with what the producer
reported when it finished (``ShuffleDescriptor.size`` and ``checksum``). The subpartitions'
bytes are not read here: every reader checks their crc32 end to end, and a damaged one is a
lost input whose producer then runs again.
"""

from __future__ import annotations

import os
from pathlib import Path

from shuffle.errors import PartitionError
from shuffle.ids import PartitionId
from shuffle.partition_file import FOOTER, footer_checksum
from shuffle.reader import read_index

__all__ = ["SurveyedFile", "fingerprint", "survey"]

SurveyedFile = tuple[str, int, int]
"""(path, size, fingerprint) of one whole partition file."""


def fingerprint(path: str) -> tuple[int, int] | None:
    """The file's size and fingerprint, or None if it is missing, cut short or corrupt."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size

        def read_at(offset: int, length: int) -> bytes:
            data = os.pread(fd, length, offset)
            if len(data) != length:
                raise OSError(f"{path}: read {len(data)} of {length} bytes at {offset}")
            return data

        read_index(size, read_at, PartitionId(path, 0), path)
        return size, footer_checksum(read_at(size - FOOTER.size, FOOTER.size))
    except (OSError, PartitionError):
        return None
    finally:
        os.close(fd)


def survey(root: str) -> tuple[SurveyedFile, ...]:
    """Every whole partition file under ``root`` (one TaskManager's shuffle directory: a
    folder per result, a file per producer attempt); unfinished writes' temporary files and
    damaged files are left out."""
    found = []
    for path in sorted(Path(root).glob("*/*.tpf")):
        if path.name.startswith("."):
            continue
        checked = fingerprint(str(path))
        if checked is not None:
            found.append((str(path), *checked))
    return tuple(found)
