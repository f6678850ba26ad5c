"""Committing sinks: a job's output appears whole when it finishes, or not at all, even if the
JobManager dies in the middle of committing it, on a local disk and on an object store.

Sink tasks write ``part-<subtask>-<attempt>.<ext>`` (Parquet or CSV) under a staging prefix
beside the target (``<target>.tidal-staging-<job>``), in ``<col>=<value>/`` directories for a
partitioned sink: each attempt its own files, so attempts never overwrite each other. A
partitioned attempt also writes ``_tidal-done-<subtask>-<attempt>`` when it has written all its
files (a subtask without rows writes no data file): the commit requires each subtask's final
attempt's marker, or, unpartitioned, its file (``jobmanager.model.sink_layout``). The commit
publishes exactly each subtask's final attempt, with a manifest: ``_SUCCESS``, a JSON object
naming the job and the result's files (relative paths, into partition directories), as Spark's
S3A committers write it (and a name every reader skips; Tidal's ``FileSource`` reads only what
the nearest manifest at or above a file names). Two protocols, by file system:

- **Local (POSIX) paths: rename.** The final attempts are renamed ``part-<subtask>.<ext>``
  inside the staging directory (in their partition directories; other attempts' files and the
  markers removed), the manifest is written there, and the staging directory becomes the target
  by one rename, or, over an old result (``overwrite``), by one atomic exchange of the two
  directories (Linux ``renameat2(RENAME_EXCHANGE)``), after which the old result, now at the
  staging path, is removed. Any reader sees the old result whole or the new one whole, never
  neither. Where the exchange is not available the old target is first set aside
  (``<target>.tidal-old-<job>``), leaving a moment with neither.
  **Appending** to an existing target is not one rename: the files are named
  ``part-<subtask>-<job>.<ext>`` (no other job's name), a target without a manifest first gets
  one naming what it holds, each file is moved into its directory of the target (one already
  moved is no longer in the staging, and is skipped), then the target's manifest is rewritten
  naming the old files and the new ones, which is the moment the append is published for a
  reader that follows it; one that only lists (Spark) may see part of the append before.
  Appending to a missing target is the rename above. Two jobs appending to one target at once
  are not supported: the later manifest may not name the other's files.
- **Object stores (any other fsspec URL): manifest.** Rename is a copy there, and a listing may
  lag, so files are never moved into place to be found by listing. A target without a manifest
  (or with a plain marker) first gets one naming what it holds (nothing, or an old result's
  files); the final attempts are copied to ``part-<subtask>-<job>.<ext>`` under the target
  (names no old result has), in their partition directories; then ``_SUCCESS`` is rewritten,
  in one PUT, naming them (and, appending, the files it named before), which is the moment the
  result is published; files of the target the manifest does not name (the old result) are
  removed after, unless appending. Readers that follow the manifest (Tidal's ``FileSource``)
  see the old result whole or the new one whole; a reader that only lists the prefix may see
  both sets of files until the old one is removed.

Write modes (``ParquetSink.mode``, Spark's): ``error`` refuses an existing target (at
submission, ``check_target``, and again at commit, for one that appeared meanwhile);
``overwrite`` replaces it; ``append`` adds to it; ``ignore`` commits nothing over an existing
target (the staging is dropped and the target stays as it is; a caller may rather not run the
job, asking ``target_exists`` first).

Every step can be done again, so a JobManager that takes the job over commits again and ends
the same: staging still there means "not published yet" (a manifest in it naming this job:
"the final attempts are chosen"); a manifest at the target naming this job means "published".
A failed or cancelled job removes its staging (on an object store also the copies it had not
published yet; on a local disk the files an unpublished append had moved already, and an old
target it had set aside goes back).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import posixpath
import re
import shutil

from jobmanager.errors import TidalError
from jobmanager.model import storage
from jobmanager.model.operators import ParquetSink, staging_dir
from jobmanager.model.sink_layout import final_name, parse_attempt, parse_done
from jobmanager.model.urls import redact

__all__ = [
    "MARKER",
    "SinkError",
    "abort",
    "check_target",
    "commit",
    "committed_by",
    "manifest",
    "target_exists",
]

MARKER = "_SUCCESS"


class SinkError(TidalError):
    pass


def target_exists(path: str) -> bool:
    """Whether ``path`` holds anything now (for ``mode="ignore"``: its caller need not run the
    job then)."""
    fs, root = storage.filesystem(path)
    fs.invalidate_cache(root)
    return fs.exists(root)


def check_target(sink: ParquetSink) -> None:
    """Refuse an existing target unless the sink's mode writes over it, beside it or not at
    all (``overwrite``, ``append``, ``ignore``)."""
    if sink.mode == "error" and target_exists(sink.path):
        raise SinkError(
            f"sink {redact(sink.path)}: the target already exists; remove it or write with "
            "mode 'overwrite' or 'append' (ParquetSink(path, overwrite=True))"
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
    """Drop what the job staged, and undo a commit it had begun but not published. Knows
    nothing of the sink but its path (a JobManager gone for good is cleaned up by its path)."""
    if storage.is_local(sink.path):
        _abort_local(sink, job_id)
        return
    fs, target = storage.filesystem(sink.path)
    _, staging = storage.filesystem(staging_dir(sink, job_id))
    if fs.exists(staging):
        fs.rm(staging, recursive=True)
    published = (manifest(sink.path) or {}).get("files") or ()
    for name in _tree(fs, target):
        if _ours(name, job_id) and name not in published:
            fs.rm(f"{target}/{name}")


def _abort_local(sink: ParquetSink, job_id: str) -> None:
    staging, target = _local(staging_dir(sink, job_id)), _local(sink.path)
    ready = manifest(staging) if os.path.isdir(staging) else None
    if ready and ready.get("job") == job_id and committed_by(target) != job_id:
        _take_back_moved(staging, target, ready.get("files") or (), job_id)
    shutil.rmtree(staging, ignore_errors=True)
    old = _set_aside(sink, job_id)
    if os.path.isdir(old) and not os.path.exists(target):
        os.replace(old, target)


def _take_back_moved(staging: str, target: str, files, job_id: str) -> None:
    """Remove from the target the job's files an append had moved there half way."""
    for name in files:
        moved = os.path.join(target, name)
        if (
            _ours(name, job_id)
            and not os.path.exists(os.path.join(staging, name))
            and os.path.exists(moved)
        ):
            os.remove(moved)


def _manifest_text(job_id: str, files) -> str:
    return json.dumps({"committer": "tidal", "job": job_id, "files": sorted(files)})


def _ours(name: str, job_id: str) -> bool:
    """A committed file named for this job (appended, or on an object store)."""
    return posixpath.basename(name).startswith("part-") and posixpath.splitext(
        posixpath.basename(name)
    )[0].endswith(f"-{job_id}")


def _published_count(sink: ParquetSink, job_id: str, files) -> int:
    return sum(1 for name in files if sink.mode != "append" or _ours(name, job_id))


def _chosen(
    sink: ParquetSink, job_id: str, finals: dict[int, int], staged, with_job: bool
) -> tuple[dict[str, int], dict[str, str]]:
    """Of the staged files (relative paths), the final attempts' (path -> subtask) and those
    already given their final name (path -> path); every subtask's final attempt must have
    finished: its file, or, partitioned, its ``_tidal-done`` marker (no rows, no file)."""
    chosen, named, done = {}, {}, set()
    for path in staged:
        kind, subtask = _staged_kind(path, sink, finals, job_id if with_job else None)
        if kind == "named":
            named[path] = path
        elif kind == "chosen":
            chosen[path] = subtask
        if kind == "done" or (kind and not sink.partition_by):
            done.add(subtask)
    missing = sorted(set(finals) - done)
    if missing:
        raise SinkError(f"sink {redact(sink.path)}: no output from subtasks {missing[:5]}")
    return chosen, named


def _staged_kind(path: str, sink: ParquetSink, finals: dict[int, int], job_id: str | None):
    """What a staged file is, with its subtask: ``done`` (a final attempt's marker that it
    finished), ``named`` (given its final name already), ``chosen`` (a final attempt's file),
    or ("", None): none of these."""
    folder, name = posixpath.split(path)
    marker = parse_done(name)
    if marker and not folder and finals.get(marker[0]) == marker[1]:
        return "done", marker[0]
    final = _final_subtask(name, sink, job_id)
    if final is not None:
        return "named", final
    attempt = parse_attempt(name)
    if attempt and finals.get(attempt[0]) == attempt[1]:
        return "chosen", attempt[0]
    return "", None


def _final_subtask(name: str, sink: ParquetSink, job_id: str | None) -> int | None:
    found = re.match(rf"^part-(\d+)\.|^part-(\d+)-{re.escape(job_id or '')}\.", name)
    if found is None or name != final_name(
        int(found.group(1) or found.group(2)), sink.format, job_id
    ):
        return None
    return int(found.group(1) or found.group(2))


# -- local paths: rename --------------------------------------------------------------------------


def _local(path: str) -> str:
    return path[len("file://") :] if path.startswith("file://") else path


def _set_aside(sink: ParquetSink, job_id: str) -> str:
    return f"{_local(sink.path).rstrip(os.sep)}.tidal-old-{job_id}"


def _files_below(root: str) -> list[str]:
    """Every file under ``root``, as a relative '/'-separated path."""
    found = []
    for folder, _, names in os.walk(root):
        relative = os.path.relpath(folder, root)
        found += [
            name if relative == "." else f"{relative}/{name}".replace(os.sep, "/") for name in names
        ]
    return found


def _commit_by_rename(sink: ParquetSink, job_id: str, final_attempts: dict[int, int]) -> int:
    staging, target = _local(staging_dir(sink, job_id)), _local(sink.path).rstrip(os.sep)
    old = _set_aside(sink, job_id)
    if committed_by(target) == job_id:  # published before a JobManager died
        shutil.rmtree(staging, ignore_errors=True)  # an old result exchanged out, if anything
        shutil.rmtree(old, ignore_errors=True)
        return _published_count(sink, job_id, manifest(target).get("files") or ())
    if not os.path.isdir(staging):
        raise SinkError(f"sink {sink.path}: no output was staged for it")
    if sink.mode == "ignore" and os.path.exists(target) and not os.path.exists(old):
        shutil.rmtree(staging, ignore_errors=True)  # Spark's "ignore": the target stays as it is
        return 0
    appending = sink.mode == "append" and os.path.exists(target)
    files = _final_files(sink, job_id, staging, final_attempts)
    if appending:
        return _append_by_renames(job_id, staging, target, files)
    _replace_target(sink, staging, target, old)
    return len(files)


def _final_files(sink: ParquetSink, job_id: str, staging: str, final_attempts: dict) -> list:
    """The staged files the commit publishes, listed in the staging manifest (as chosen
    before a JobManager died, or chosen now); the markers of finished subtasks dropped."""
    ready = manifest(staging)
    if ready and ready.get("job") == job_id:  # chosen before a JobManager died
        files = ready["files"]
    else:
        files = _keep_final_attempts(sink, job_id, staging, final_attempts)
        _write_atomically(os.path.join(staging, MARKER), _manifest_text(job_id, files))
    for name in os.listdir(staging):
        if parse_done(name):
            os.remove(os.path.join(staging, name))
    return files


def _replace_target(sink: ParquetSink, staging: str, target: str, old: str) -> None:
    """Put the staging directory in the target's place: exchanged atomically where the
    platform can, else the old target set aside first, then removed."""
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if os.path.exists(target) and not os.path.exists(old):
        check_target(sink)
        if _exchange(staging, target):
            shutil.rmtree(staging, ignore_errors=True)
            return
        os.replace(target, old)
    os.replace(staging, target)
    shutil.rmtree(old, ignore_errors=True)


def _keep_final_attempts(
    sink: ParquetSink, job_id: str, staging: str, final_attempts: dict[int, int]
) -> list[str]:
    """Give the final attempts' files their final names, in their partition directories, and
    remove everything else staged but the markers (other attempts' files, temporary files of
    attempts that died writing, directories left empty)."""
    with_job = sink.mode == "append"
    staged = _files_below(staging)
    chosen, named = _chosen(sink, job_id, final_attempts, staged, with_job)
    kept = list(named)
    for path in staged:
        if path in named or parse_done(posixpath.basename(path)):
            continue
        if path in chosen:
            folder = posixpath.dirname(path)
            name = posixpath.join(
                folder, final_name(chosen[path], sink.format, job_id if with_job else None)
            )
            os.replace(os.path.join(staging, path), os.path.join(staging, name))
            kept.append(name)
        else:
            os.remove(os.path.join(staging, path))
    for folder, _, _ in sorted(os.walk(staging), reverse=True):
        if folder != staging and not os.listdir(folder):
            os.rmdir(folder)
    return sorted(kept)


def _append_by_renames(job_id: str, staging: str, target: str, files: list[str]) -> int:
    """Move this job's files (named for it: no clash, and one moved already is seen as such)
    into the target's directories, then name them in the target's manifest. Readers that follow
    the manifest see the target before or after, whole; a target without one first gets one
    naming what it holds."""
    current = manifest(target)
    if current is None or current.get("files") is None:
        held = [p for p in _files_below(target) if _is_data_path(p)]
        _write_atomically(os.path.join(target, MARKER), _manifest_text("", held))
        current = {"files": held}
    for name in files:
        source = os.path.join(staging, name)
        if os.path.exists(source):
            os.makedirs(os.path.dirname(os.path.join(target, name)), exist_ok=True)
            os.replace(source, os.path.join(target, name))
    _write_atomically(
        os.path.join(target, MARKER), _manifest_text(job_id, set(current["files"]) | set(files))
    )
    shutil.rmtree(staging, ignore_errors=True)
    return len(files)


def _is_data_path(path: str) -> bool:
    """What Spark and Tidal read below a table's root: no hidden or ``_`` names (but partition
    directories such as ``_c=1``), no checksums."""
    return not path.endswith(".crc") and all(
        not (part.startswith(".") or (part.startswith("_") and "=" not in part))
        for part in path.split("/")
    )


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


def _tree(fs, prefix: str) -> list[str]:
    """The files under ``prefix`` (relative paths, partition directories included) as the
    store has them now (not as this process last listed them: fsspec caches listings, and
    another process wrote there meanwhile)."""
    fs.invalidate_cache(prefix)
    root = prefix.strip("/")
    try:
        found = fs.find(prefix)
    except FileNotFoundError:
        return []
    return [
        path.strip("/")[len(root) + 1 :] for path in found if path.strip("/").startswith(root + "/")
    ]


def _commit_by_manifest(sink: ParquetSink, job_id: str, final_attempts: dict[int, int]) -> int:
    fs, target = storage.filesystem(sink.path)
    _, staging = storage.filesystem(staging_dir(sink, job_id))
    published = manifest(sink.path)
    if published and published.get("job") == job_id:  # published before a JobManager died
        return _finish_published(sink, job_id, fs, target, staging, published["files"])
    staged = _tree(fs, staging)
    if not staged:
        raise SinkError(f"sink {redact(sink.path)}: no output was staged for it")
    held = _held_by_others(fs, target, job_id)
    if _target_stays(sink, job_id, held, published):
        return 0
    if published is None or published.get("files") is None:
        # say what the target holds now, before anything is copied next to it
        fs.pipe_file(f"{target}/{MARKER}", _manifest_text("", held).encode())
        published = {"files": held}
    chosen, _ = _chosen(sink, job_id, final_attempts, staged, with_job=False)
    files = _copy_final(sink, job_id, fs, target, staging, chosen)
    listed = set(files) | (set(published["files"]) if sink.mode == "append" else set())
    fs.pipe_file(f"{target}/{MARKER}", _manifest_text(job_id, listed).encode())
    if sink.mode != "append":
        _remove_unlisted(fs, target, files)
    fs.rm(staging, recursive=True)
    return len(files)


def _held_by_others(fs, target: str, job_id: str) -> list[str]:
    """The files in the target that are not this job's (its manifest aside)."""
    return [name for name in _tree(fs, target) if not _ours(name, job_id) and name != MARKER]


def _finish_published(sink: ParquetSink, job_id: str, fs, target: str, staging: str, files) -> int:
    """Finish a commit published before a JobManager died: files it replaced removed, the
    staging gone."""
    if sink.mode != "append":
        _remove_unlisted(fs, target, files)
    if fs.exists(staging):
        fs.rm(staging, recursive=True)
    return _published_count(sink, job_id, files)


def _target_stays(sink: ParquetSink, job_id: str, held: list, published) -> bool:
    """For a target that appeared after the job was submitted: True (the job aborted) where
    Spark's "ignore" leaves it as it is; refused where the mode is "error"."""
    if not (held or (published or {}).get("job")) or sink.mode not in ("error", "ignore"):
        return False
    if sink.mode == "ignore":
        abort(sink, job_id)
        return True
    check_target(sink)
    return False


def _copy_final(
    sink: ParquetSink, job_id: str, fs, target: str, staging: str, chosen: dict
) -> list[str]:
    """Copy each chosen file to the target under its final name; the names."""
    files = []
    for path, subtask in sorted(chosen.items()):
        name = posixpath.join(posixpath.dirname(path), final_name(subtask, sink.format, job_id))
        fs.copy(f"{staging}/{path}", f"{target}/{name}")
        files.append(name)
    return files


def _remove_unlisted(fs, target: str, files: list[str]) -> None:
    keep = set(files) | {MARKER}
    for name in _tree(fs, target):
        if name not in keep:
            fs.rm(f"{target}/{name}")
