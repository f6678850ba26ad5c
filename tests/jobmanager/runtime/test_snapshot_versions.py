"""The snapshot file's format versions, as the event log's: a snapshot says its version in its
header; one without a header (what Tidal wrote before) is format 0 and still reads; a newer
version is refused by name, and no snapshot that cannot be read is passed over for the log."""

from __future__ import annotations

import shutil
import struct
import zlib
from pathlib import Path

import lz4.frame
import pytest

from jobmanager.errors import JobStoreError, SnapshotVersionError
from jobmanager.messages.codec import encode
from jobmanager.runtime.jobstore import (
    SNAPSHOT_FORMAT_VERSION,
    JobStore,
    StoredSnapshot,
    decode_snapshot,
)
from jobmanager.runtime.recovery import replay_store

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "logs"
_U32 = struct.Struct("<I")
SNAPSHOT = StoredSnapshot(3, ("a state", 1, None), (("a ledger entry",),))


def snapshot_header(version: int) -> bytes:
    """As the module docstring of ``jobstore`` draws it, written here again on purpose."""
    described = b"TIDALSNP" + _U32.pack(version)
    return described + _U32.pack(zlib.crc32(described))


def store_with_snapshot(tmp_path: Path, data: bytes, segment: int = 3) -> JobStore:
    store = JobStore(str(tmp_path), "job1")
    store.create()
    (tmp_path / "job1" / "snapshots").mkdir()
    (tmp_path / "job1" / "snapshots" / f"{segment}.snap").write_bytes(data)
    return store


def test_a_snapshot_is_written_with_todays_version_and_reads_back(tmp_path):
    store = JobStore(str(tmp_path), "job1")
    store.create()
    store.write_snapshot(SNAPSHOT)
    data = (tmp_path / "job1" / "snapshots" / "3.snap").read_bytes()
    assert data.startswith(snapshot_header(SNAPSHOT_FORMAT_VERSION))
    assert SNAPSHOT_FORMAT_VERSION >= 1
    assert decode_snapshot(data, "here") == (SNAPSHOT_FORMAT_VERSION, SNAPSHOT)
    assert store.latest_snapshot() == SNAPSHOT


def test_a_snapshot_without_a_header_is_format_0(tmp_path):
    legacy = lz4.frame.compress(encode(SNAPSHOT))  # what Tidal wrote before versions
    assert decode_snapshot(legacy, "here") == (0, SNAPSHOT)
    assert store_with_snapshot(tmp_path, legacy).latest_snapshot() == SNAPSHOT


@pytest.mark.parametrize("version", sorted(p.name for p in GOLDEN.iterdir()))
def test_the_golden_logs_snapshots_are_format_0(version, tmp_path):
    """Every golden store's snapshot was written before snapshots had a header."""
    (path,) = (GOLDEN / version / "snapshots").iterdir()
    read_version, snapshot = decode_snapshot(path.read_bytes(), str(path))
    assert read_version == 0 and isinstance(snapshot, StoredSnapshot)
    store = JobStore(str(tmp_path), version)
    shutil.copytree(GOLDEN / version, tmp_path / version)
    assert store.latest_snapshot() == snapshot


def test_a_newer_snapshot_is_refused_naming_both_versions(tmp_path):
    newer = SNAPSHOT_FORMAT_VERSION + 1
    store = store_with_snapshot(tmp_path, snapshot_header(newer) + b"whatever it holds")
    expected = (
        f"snapshot {tmp_path}/job1/snapshots/3.snap is in snapshot format {newer}, "
        f"written by a newer Tidal; this Tidal reads formats 0 to "
        f"{SNAPSHOT_FORMAT_VERSION}"
    )
    with pytest.raises(SnapshotVersionError, match=expected) as raised:
        store.latest_snapshot()
    assert isinstance(raised.value, JobStoreError)
    with pytest.raises(SnapshotVersionError, match=expected):  # not passed over for the log
        replay_store(store, "job1")


@pytest.mark.parametrize(
    "data, message",
    [
        (b"TIDALSNP\x01\x00\x00\x00\x00\x00\x00\x00" + b"x", "has a corrupt header"),
        (b"TIDALSNP\x01", "is not a snapshot"),
        (b"", "is not a snapshot"),
        (b"some other file", "is not a snapshot"),
        (lz4.frame.compress(encode(("not", "a", "snapshot"))), "holds a tuple"),
    ],
)
def test_a_snapshot_that_cannot_be_read_is_an_error_naming_it(tmp_path, data, message):
    store = store_with_snapshot(tmp_path, data)
    with pytest.raises(JobStoreError, match=f"snapshots/3.snap.* {message}"):
        store.latest_snapshot()
    with pytest.raises(JobStoreError, match=message):
        replay_store(store, "job1")


def test_only_the_latest_snapshot_is_read(tmp_path):
    store = store_with_snapshot(tmp_path, b"an older, broken snapshot", segment=2)
    (tmp_path / "job1" / "snapshots" / "3.snap").write_bytes(
        snapshot_header(SNAPSHOT_FORMAT_VERSION) + lz4.frame.compress(encode(SNAPSHOT))
    )
    assert store.latest_snapshot() == SNAPSHOT
