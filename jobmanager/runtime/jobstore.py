"""A job's durable store: everything a new JobManager needs to take the job over.

    <jobstore.dir>/<job id>/
        events/00000000.log ...    the event log (JobSubmitted first), in segments
        snapshots/<segment>.snap   the state as of the start of that segment (see below)
        blobs/                     the graph and each vertex's code, shuffle descriptors
        recovering                 how many recoveries in a row died before they finished
        status.msgpack             the job's final ``JobDetails``, written when it ended
        logs/<process>.log         its JobManager's log and each TaskManager's part for the job

``jobstore.dir`` is a local directory (default ``~/.tidal/jobs``, or ``$TIDAL_HOME/jobs``) or
any fsspec URL, so a JobManager restarted on another node finds the store. It outlives the
JobManager process, and is removed only when the job is cleaned up. Every failure to reach or
read it is a ``JobStoreError`` naming the store.

A snapshot file begins with its header, as an event-log segment does: ``TIDALSNP``, the
snapshot format version (little-endian u32) and the CRC-32 of those 12 bytes; then the
``StoredSnapshot``, msgpack-encoded (fields by name) and LZ4-compressed. Format 1 is the first
with a header; a file without one is format 0, the bare LZ4 frame (which begins with the LZ4
frame magic, never with ``TIDALSNP``). A snapshot of a version newer than
``SNAPSHOT_FORMAT_VERSION`` is refused with ``SnapshotVersionError``, and a snapshot that
cannot be read at all is a ``JobStoreError``: never passed over for the log alone, since the
segments before a snapshot need not be whole.
"""

from __future__ import annotations

import json
import os
import struct
import uuid
import zlib

import fsspec
import lz4.frame
from fsspec.implementations.local import LocalFileSystem

from blob import BlobKey, FileSystemBlobStore
from jobmanager.errors import SnapshotVersionError
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode, encode, message
from jobmanager.model.config import JOBSTORE_DIR, Configuration
from jobmanager.runtime.details import JobDetails, details_of_v0, read_details
from jobmanager.runtime.eventlog import EventLog, JobStoreError, read_log

__all__ = [
    "SNAPSHOT_FORMAT_VERSION",
    "STATUS_FILE",
    "JobStore",
    "SnapshotVersionError",
    "StoredSnapshot",
    "decode_snapshot",
    "encode_snapshot",
    "job_ids",
    "local_job_ids_oldest_first",
    "store_root",
]

_SNAPSHOT = ".snap"
SNAPSHOT_FORMAT_VERSION = 1
_SNAPSHOT_MAGIC = b"TIDALSNP"
_LZ4_MAGIC = b"\x04\x22\x4d\x18"  # how an LZ4 frame begins: a snapshot of format 0
_U32 = struct.Struct("<I")
_SNAPSHOT_HEADER = _SNAPSHOT_MAGIC + _U32.pack(SNAPSHOT_FORMAT_VERSION)
_SNAPSHOT_HEADER += _U32.pack(zlib.crc32(_SNAPSHOT_HEADER))
STATUS_FILE = "status.msgpack"  # the final JobDetails, msgpack-encoded
_STATUS_V0 = "status.json"  # what Tidal wrote before JobDetails


def store_root(config: Configuration) -> str:
    """Where job stores live: ``jobstore.dir``, else ``$TIDAL_HOME/jobs`` (``~/.tidal``), as an
    absolute path or a URL."""
    configured = config[JOBSTORE_DIR.key]
    if configured and "://" in configured:
        return configured.rstrip("/")
    home = os.environ.get("TIDAL_HOME") or os.path.join(os.path.expanduser("~"), ".tidal")
    return os.path.abspath(os.path.expanduser(configured or os.path.join(home, "jobs")))


def job_ids(root: str) -> list[str]:
    """The names of the folders under ``root`` (job stores or archives), none if it is not
    there; a ``JobStoreError`` naming ``root`` if it cannot be listed."""
    try:
        fs, path = fsspec.core.url_to_fs(root)
        if isinstance(fs, LocalFileSystem):  # fsspec's ls stats each entry: 9 ms for 700 archives
            names = os.listdir(path) if os.path.isdir(path) else []
        else:
            names = fs.ls(path, detail=False) if fs.exists(path) else []
    except Exception as error:
        raise JobStoreError(
            f"job stores {root}: cannot list them: {type(error).__name__}: {error}"
        ) from None
    return [name.rstrip("/").rsplit("/", 1)[-1] for name in names]


def local_job_ids_oldest_first(root: str) -> list[str] | None:
    """The names of the folders under ``root`` by modification time, oldest first, where
    ``root`` is a local folder (an archive's is when it was written); None on another file
    system, whose folders (an object store's prefixes) have no such time."""
    fs, path = fsspec.core.url_to_fs(root)
    if not isinstance(fs, LocalFileSystem):
        return None
    dated = []
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    dated.append((entry.stat().st_mtime_ns, entry.name))
                except FileNotFoundError:  # removed since the listing
                    continue
    except FileNotFoundError:
        return []
    except OSError as error:
        raise JobStoreError(
            f"job stores {root}: cannot list them: {type(error).__name__}: {error}"
        ) from None
    return [name for _, name in sorted(dated)]


@message
class StoredSnapshot:
    """The JobManager state (``jobmanager.core.snapshot``) and the shell's task ledger as of the
    start of log segment ``next_segment``."""

    next_segment: int
    state: object
    ledger: tuple


def encode_snapshot(snapshot: StoredSnapshot) -> bytes:
    """A snapshot file's bytes: the header of today's format, then the snapshot."""
    return _SNAPSHOT_HEADER + lz4.frame.compress(encode(snapshot))


def decode_snapshot(data: bytes, where: str) -> tuple[int, StoredSnapshot]:
    """The format version of a snapshot file's bytes (0 for one without a header) and the
    snapshot; ``where`` names the file in errors. A newer version is a ``SnapshotVersionError``,
    bytes that are no snapshot a ``JobStoreError``."""
    if data.startswith(_LZ4_MAGIC):
        version, start = 0, 0
    elif data.startswith(_SNAPSHOT_MAGIC) and len(data) >= len(_SNAPSHOT_HEADER):
        (version,) = _U32.unpack_from(data, len(_SNAPSHOT_MAGIC))
        (checksum,) = _U32.unpack_from(data, len(_SNAPSHOT_MAGIC) + _U32.size)
        if zlib.crc32(data[: len(_SNAPSHOT_MAGIC) + _U32.size]) != checksum:
            raise JobStoreError(f"snapshot {where} has a corrupt header")
        start = len(_SNAPSHOT_HEADER)
    else:
        raise JobStoreError(
            f"snapshot {where} is not a snapshot: it begins with neither "
            f"{_SNAPSHOT_MAGIC.decode()} nor an LZ4 frame"
        )
    if version > SNAPSHOT_FORMAT_VERSION:
        raise SnapshotVersionError(
            f"snapshot {where} is in snapshot format {version}, written by a newer Tidal; this "
            f"Tidal reads formats 0 to {SNAPSHOT_FORMAT_VERSION}: take the job over with the "
            "Tidal that wrote it, or a later one"
        )
    snapshot = decode(lz4.frame.decompress(data[start:]))
    if not isinstance(snapshot, StoredSnapshot):
        raise JobStoreError(f"snapshot {where} holds a {type(snapshot).__name__}, not a snapshot")
    return version, snapshot


class JobStore:
    def __init__(self, root: str, job_id: str) -> None:
        self.url = f"{root.rstrip('/')}/{job_id}"
        try:
            self.fs, self.path = fsspec.core.url_to_fs(self.url)
        except Exception as error:
            raise JobStoreError(
                f"job store {self.url}: cannot reach it: {type(error).__name__}: {error}"
            ) from None

    @property
    def events_url(self) -> str:
        return f"{self.url}/events"

    def _call(self, what: str, fn, *args):
        try:
            return fn(*args)
        except JobStoreError:
            raise
        except Exception as error:
            raise JobStoreError(
                f"job store {self.url}: cannot {what}: {type(error).__name__}: {error}"
            ) from error

    def exists(self) -> bool:
        return self._call("look for the event log", self.fs.exists, f"{self.path}/events")

    def create(self) -> None:
        """An empty store (a store left by a JobManager that died before its job started is
        not a job: it goes)."""

        def fresh() -> None:
            if self.fs.exists(self.path):
                self.fs.rm(self.path, recursive=True)
            self.fs.makedirs(f"{self.path}/events", exist_ok=True)

        self._call("create it", fresh)

    def open_log(self, flush_bytes: int) -> EventLog:
        return self._call("open the event log", EventLog, self.events_url, flush_bytes)

    def blobs(self) -> FileSystemBlobStore:
        return self._call("open the blob store", FileSystemBlobStore, f"{self.url}/blobs")

    def blob(self, digest: str) -> bytes:
        """The stored blob named by ``digest`` (the graph's is ``JobSubmitted.graph_key``)."""
        return self._call("read a blob", lambda: self.blobs().get(BlobKey(digest)))

    def submitted(self, records: list | None = None) -> ev.JobSubmitted:
        """The job as it was submitted: the first record of the log, or of ``records`` when
        they were read from its start."""

        def first():
            for _, event in read_log(self.events_url):
                return event
            return None

        if records is None:
            event = self._call("read the event log", first)
        else:
            event = records[0][1] if records else None
        if not isinstance(event, ev.JobSubmitted):
            raise JobStoreError(f"job store {self.url}: the event log does not start with the job")
        return event

    def records(self, first_segment: int):
        """``(time_ms, event)`` from ``first_segment`` on, the torn tail cut off."""
        return self._call(
            "read the event log",
            lambda: list(read_log(self.events_url, first_segment, repair=True)),
        )

    def latest_snapshot(self) -> StoredSnapshot | None:
        def latest():
            try:
                names = self.fs.ls(f"{self.path}/snapshots", detail=False)
            except FileNotFoundError:
                return None
            numbers = sorted(
                int(n.rsplit("/", 1)[-1][: -len(_SNAPSHOT)]) for n in names if n.endswith(_SNAPSHOT)
            )
            if not numbers:
                return None
            name = f"snapshots/{numbers[-1]}{_SNAPSHOT}"
            return decode_snapshot(self.fs.cat_file(f"{self.path}/{name}"), f"{self.url}/{name}")[1]

        return self._call("read its snapshot", latest)

    def write_snapshot(self, snapshot: StoredSnapshot) -> None:
        """Written whole under a temporary name, then moved into place: never half a snapshot."""

        def write() -> None:
            folder = f"{self.path}/snapshots"
            self.fs.makedirs(folder, exist_ok=True)
            temporary = f"{folder}/.{uuid.uuid4().hex}"
            self.fs.pipe_file(temporary, encode_snapshot(snapshot))
            self.fs.mv(temporary, f"{folder}/{snapshot.next_segment}{_SNAPSHOT}")
            for old in self.fs.ls(folder, detail=False):
                name = old.rsplit("/", 1)[-1]
                if (
                    name.endswith(_SNAPSHOT)
                    and int(name[: -len(_SNAPSHOT)]) < snapshot.next_segment
                ):
                    self.fs.rm_file(old)

        self._call("write a snapshot", write)

    def recovery_attempt(self) -> int:
        """Count one more recovery begun; return how many began in a row without finishing."""

        def count() -> int:
            path = f"{self.path}/recovering"
            attempts = int(self.fs.cat_file(path)) + 1 if self.fs.exists(path) else 1
            self.fs.pipe_file(path, str(attempts).encode())
            return attempts

        return self._call("count recoveries", count)

    def recovered(self) -> None:
        path = f"{self.path}/recovering"
        self._call("count recoveries", lambda: self.fs.exists(path) and self.fs.rm_file(path))

    def write_final_status(self, details: JobDetails) -> None:
        """The details a client reads once the JobManager has left."""
        self._call(
            "write the final status",
            self.fs.pipe_file,
            f"{self.path}/{STATUS_FILE}",
            details.encode(),
        )

    def final_status(self) -> JobDetails | None:
        """The final details, or None while the job has not ended; a store or archive an
        older Tidal wrote has them as ``status.json``."""

        def read():
            try:
                return read_details(self.fs.cat_file(f"{self.path}/{STATUS_FILE}"))
            except FileNotFoundError:
                pass
            try:
                return details_of_v0(json.loads(self.fs.cat_file(f"{self.path}/{_STATUS_V0}")))
            except FileNotFoundError:
                return None

        return self._call("read the final status", read)

    def write_log(self, process: str, text: bytes) -> None:
        def write() -> None:
            self.fs.makedirs(f"{self.path}/logs", exist_ok=True)
            self.fs.pipe_file(f"{self.path}/logs/{process}.log", text)

        self._call("write a log", write)

    def logs(self) -> dict[str, bytes]:
        """Every stored log of the job, by process (``jobmanager`` first)."""

        def read() -> dict[str, bytes]:
            try:
                names = sorted(self.fs.ls(f"{self.path}/logs", detail=False))
            except FileNotFoundError:
                return {}
            logs = {
                n.rsplit("/", 1)[-1][: -len(".log")]: self.fs.cat_file(n)
                for n in names
                if n.endswith(".log")
            }
            return dict(sorted(logs.items(), key=lambda item: item[0] != "jobmanager"))

        return self._call("read its logs", read)

    def remove(self) -> None:
        def remove() -> None:
            if self.fs.exists(self.path):
                self.fs.rm(self.path, recursive=True)

        self._call("remove it", remove)
