"""Committing Parquet sinks: a job's output appears whole when it finishes, or not at all, even
if the JobManager dies in the middle of committing it, on a local disk and on an object store.

Sink tasks write ``part-<subtask>-<attempt>.parquet`` under a staging prefix beside the target
(``<target>.tidal-staging-<job>``): each attempt its own file, so attempts never overwrite each
other. The commit publishes exactly each subtask's final attempt, with a manifest: ``_SUCCESS``,
a JSON object naming the job and the result's files, as Spark's S3A committers write it (and a
name every reader skips). Two protocols, by file system:

- **Local (POSIX) paths: rename.** The final attempts are renamed ``part-<subtask>.parquet``
  inside the staging directory, the manifest is written there, and the staging directory
  becomes the target by one rename, or, over an old result (``overwrite``), by one atomic
  exchange of the two directories (Linux ``renameat2(RENAME_EXCHANGE)``), after which the old
  result, now at the staging path, is removed. Any reader sees the old result whole or the new
  one whole, never neither. Where the exchange is not available the old target is first set
  aside (``<target>.tidal-old-<job>``), leaving a moment with neither.
- **Object stores (any other fsspec URL): manifest.** Rename is a copy there, and a listing may
  lag, so files are never moved into place to be found by listing. A target without a manifest
  first gets one naming what it holds (nothing, or an old result's files); the final attempts
  are copied to ``part-<subtask>-<job>.parquet`` under the target (names no old result has);
  then ``_SUCCESS`` is rewritten, in one PUT, which is the moment the result is published;
  files of the target the manifest does not name (the old result) are removed after. Readers that follow
  the manifest (Tidal's ``FileSource``) see the old result whole or the new one whole; a reader
  that only lists the prefix may see both sets of files until the old one is removed.

Every step can be done again, so a JobManager that takes the job over commits again and ends
the same: staging still there means "not published yet"; a manifest at the target naming this
job means "published". A failed or cancelled job removes its staging (and on an object store
the copies it had not published yet; on a local disk an old target it had set aside goes back).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import re
import shutil

from jobmanager.errors import TidalError
from jobmanager.model import storage
from jobmanager.model.operators import ParquetSink, staging_dir
from jobmanager.model.urls import redact

__all__ = ["MARKER", "SinkError", "abort", "check_target", "commit", "committed_by", "manifest"]

MARKER = "_SUCCESS"
_ATTEMPT = re.compile(r"^part-(\d+)-(\d+)\.parquet$")
_FINAL = re.compile(r"^part-(\d+)\.parquet$")


class SinkError(TidalError):
    pass


def check_target(sink: ParquetSink) -> None:
    fs, path = storage.filesystem(sink.path)
    fs.invalidate_cache(path)
    if not sink.overwrite and fs.exists(path):
        raise SinkError(
            f"sink {redact(sink.path)}: the target already exists; remove it or use "
            "ParquetSink(path, overwrite=True)"
        )


def manifest(path: str) -> dict | None:
    """The manifest of the result at ``path``: ``{"job": ..., "files": [...]}``, or None."""
    fs, root = storage.filesystem(path)
    try:
        text = fs.cat_file(f"{root.rstrip('/')}/{MARKER}").decode()
    except (OSError, ValueError):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return {"job": text.strip(), "files": None}  # a plain marker: Spark's, or an old one
    return data if isinstance(data, dict) else None


def committed_by(path: str) -> str | None:
    """The id of the job whose commit published ``path``, if any."""
    found = manifest(path)
    return found.get("job") if found else None


def commit(sink: ParquetSink, job_id: str, final_attempts: dict[int, int]) -> int:
    """Publish the final attempts' part files at the sink's path; return how many."""
    if storage.is_local(sink.path):
        return _commit_by_rename(sink, job_id, final_attempts)
    return _commit_by_manifest(sink, job_id, final_attempts)


def abort(sink: ParquetSink, job_id: str) -> None:
    if storage.is_local(sink.path):
        shutil.rmtree(_local(staging_dir(sink, job_id)), ignore_errors=True)
        old, target = _set_aside(sink, job_id), _local(sink.path)
        if os.path.isdir(old) and not os.path.exists(target):
            os.replace(old, target)
        return
    fs, target = storage.filesystem(sink.path)
    _, staging = storage.filesystem(staging_dir(sink, job_id))
    if fs.exists(staging):
        fs.rm(staging, recursive=True)
    published = (manifest(sink.path) or {}).get("files") or ()
    for name in _names(fs, target):
        if name.endswith(f"-{job_id}.parquet") and name not in published:
            fs.rm(f"{target}/{name}")


def _manifest_text(job_id: str, files: list[str]) -> str:
    return json.dumps({"committer": "tidal", "job": job_id, "files": sorted(files)})


# -- local paths: rename --------------------------------------------------------------------------


def _local(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def _set_aside(sink: ParquetSink, job_id: str) -> str:
    return f"{_local(sink.path).rstrip(os.sep)}.tidal-old-{job_id}"


def _commit_by_rename(sink: ParquetSink, job_id: str, final_attempts: dict[int, int]) -> int:
    staging, target = _local(staging_dir(sink, job_id)), _local(sink.path).rstrip(os.sep)
    old = _set_aside(sink, job_id)
    if committed_by(target) == job_id:  # published before a JobManager died
        shutil.rmtree(staging, ignore_errors=True)  # an old result exchanged out, if anything
        shutil.rmtree(old, ignore_errors=True)
        return sum(1 for name in os.listdir(target) if _FINAL.match(name))
    if not os.path.isdir(staging):
        raise SinkError(f"sink {sink.path}: no output was staged for it")
    files = _keep_final_attempts(sink, staging, final_attempts)
    _write_atomically(os.path.join(staging, MARKER), _manifest_text(job_id, files))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if os.path.exists(target) and not os.path.exists(old):
        check_target(sink)
        if _exchange(staging, target):
            shutil.rmtree(staging, ignore_errors=True)
            return len(files)
        os.replace(target, old)
    os.replace(staging, target)
    shutil.rmtree(old, ignore_errors=True)
    return len(files)


def _keep_final_attempts(sink: ParquetSink, staging: str, final_attempts: dict[int, int]) -> list[str]:
    kept: dict[int, str] = {}
    for name in os.listdir(staging):
        attempt = _ATTEMPT.match(name)
        final = _FINAL.match(name)
        if final:
            kept[int(final.group(1))] = name
        elif attempt:
            subtask = int(attempt.group(1))
            if final_attempts.get(subtask) == int(attempt.group(2)):
                kept[subtask] = f"part-{subtask:05d}.parquet"
                os.replace(os.path.join(staging, name), os.path.join(staging, kept[subtask]))
            else:
                os.remove(os.path.join(staging, name))
    _check_complete(sink, final_attempts, kept)
    return list(kept.values())


def _write_atomically(path: str, text: str) -> None:
    temporary = f"{path}.tmp"
    with open(temporary, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(temporary, path)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: str, b: str) -> bool:
    """Swap two paths atomically (Linux's renameat2 with RENAME_EXCHANGE); False where the
    system cannot."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    done = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return done == 0


# -- object stores: manifest ----------------------------------------------------------------------


def _names(fs, prefix: str) -> list[str]:
    """The names under ``prefix`` as the store has them now (not as this process last listed
    them: fsspec caches listings, and another process wrote there meanwhile)."""
    fs.invalidate_cache(prefix)
    try:
        return [entry.rstrip("/").rsplit("/", 1)[-1] for entry in fs.ls(prefix, detail=False)]
    except FileNotFoundError:
        return []


def _commit_by_manifest(sink: ParquetSink, job_id: str, final_attempts: dict[int, int]) -> int:
    fs, target = storage.filesystem(sink.path)
    _, staging = storage.filesystem(staging_dir(sink, job_id))
    published = manifest(sink.path)
    if published and published.get("job") == job_id:  # published before a JobManager died
        _remove_unlisted(fs, target, published["files"])
        if fs.exists(staging):
            fs.rm(staging, recursive=True)
        return len(published["files"])
    staged = _names(fs, staging)
    if not staged:
        raise SinkError(f"sink {redact(sink.path)}: no output was staged for it")
    foreign = [name for name in _names(fs, target) if not name.endswith(f"-{job_id}.parquet")]
    if foreign and not sink.overwrite:  # a target that appeared after the job was submitted
        check_target(sink)
    if published is None:  # say what the target holds now, before anything is copied next to it
        fs.pipe_file(f"{target}/{MARKER}", _manifest_text("", [n for n in foreign if n != MARKER]).encode())
    chosen: dict[int, str] = {}
    for name in staged:
        attempt = _ATTEMPT.match(name)
        if attempt and final_attempts.get(int(attempt.group(1))) == int(attempt.group(2)):
            chosen[int(attempt.group(1))] = name
    _check_complete(sink, final_attempts, chosen)
    files = []
    for subtask, name in sorted(chosen.items()):
        published_name = f"part-{subtask:05d}-{job_id}.parquet"
        fs.copy(f"{staging}/{name}", f"{target}/{published_name}")
        files.append(published_name)
    fs.pipe_file(f"{target}/{MARKER}", _manifest_text(job_id, files).encode())
    _remove_unlisted(fs, target, files)
    fs.rm(staging, recursive=True)
    return len(files)


def _remove_unlisted(fs, target: str, files: list[str]) -> None:
    keep = set(files) | {MARKER}
    for name in _names(fs, target):
        if name not in keep:
            fs.rm(f"{target}/{name}", recursive=True)


def _check_complete(sink: ParquetSink, final_attempts: dict[int, int], kept: dict) -> None:
    missing = sorted(set(final_attempts) - set(kept))
    if missing:
        raise SinkError(f"sink {redact(sink.path)}: no output from subtasks {missing[:5]}")
