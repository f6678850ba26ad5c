"""Committing Parquet sinks: a job's output appears whole when it finishes, or not at all, even
if the JobManager dies in the middle of committing it.

Sink tasks write ``part-<subtask>-<attempt>.parquet`` into a staging directory beside the target
(same file system, so publishing is a rename). When the job finishes, the JobManager keeps each
subtask's final attempt as ``part-<subtask>.parquet`` and drops the files of attempts that
failed or were restarted, marks the staging directory with ``_SUCCESS`` holding the job's id
(Spark's marker; readers skip files starting with ``_``), moves an old target aside (with
``overwrite``), renames the staging directory onto the target, and removes the old one.

Every step can be done again, so a JobManager that takes the job over commits again: a staging
directory still there means "not published yet", a target whose ``_SUCCESS`` names this job
means "published". The target is always the old result whole, nothing, or the new result whole;
never half of one, never the new result twice. A failed or cancelled job removes its staging
directory and puts back an old target a broken commit had moved aside.
"""

from __future__ import annotations

import os
import re
import shutil

from jobmanager.errors import TidalError
from jobmanager.model.operators import ParquetSink, staging_dir

__all__ = ["MARKER", "SinkError", "abort", "check_target", "commit", "committed_by"]

MARKER = "_SUCCESS"
_ATTEMPT = re.compile(r"^part-(\d+)-(\d+)\.parquet$")
_FINAL = re.compile(r"^part-(\d+)\.parquet$")


class SinkError(TidalError):
    pass


def check_target(sink: ParquetSink) -> None:
    if os.path.exists(sink.path) and not sink.overwrite:
        raise SinkError(
            f"sink {sink.path}: the target already exists; remove it or use "
            "ParquetSink(path, overwrite=True)"
        )


def _target(sink: ParquetSink) -> str:
    return os.path.abspath(sink.path).rstrip(os.sep)


def _set_aside(sink: ParquetSink, job_id: str) -> str:
    return f"{_target(sink)}.tidal-old-{job_id}"


def committed_by(path: str) -> str | None:
    """The id of the job whose commit published ``path``, if any."""
    try:
        with open(os.path.join(path, MARKER), encoding="utf-8") as marker:
            return marker.read().strip()
    except OSError:
        return None


def commit(sink: ParquetSink, job_id: str, final_attempts: dict[int, int]) -> int:
    """Publish the final attempts' part files at the sink's path; return how many."""
    staging, target, old = staging_dir(sink, job_id), _target(sink), _set_aside(sink, job_id)
    if not os.path.isdir(staging):
        if committed_by(target) == job_id:  # published before a JobManager died
            shutil.rmtree(old, ignore_errors=True)
            return sum(1 for name in os.listdir(target) if _FINAL.match(name))
        raise SinkError(f"sink {sink.path}: no output was staged for it")
    count = _keep_final_attempts(sink, staging, final_attempts)
    with open(os.path.join(staging, MARKER), "w", encoding="utf-8") as marker:
        marker.write(job_id)
    if os.path.exists(target) and not os.path.exists(old):
        check_target(sink)
        os.replace(target, old)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    os.replace(staging, target)
    shutil.rmtree(old, ignore_errors=True)
    return count


def _keep_final_attempts(sink: ParquetSink, staging: str, final_attempts: dict[int, int]) -> int:
    kept: set[int] = set()
    for name in os.listdir(staging):
        attempt = _ATTEMPT.match(name)
        final = _FINAL.match(name)
        if final:
            kept.add(int(final.group(1)))
        elif attempt:
            subtask = int(attempt.group(1))
            if final_attempts.get(subtask) == int(attempt.group(2)):
                os.replace(os.path.join(staging, name),
                           os.path.join(staging, f"part-{subtask:05d}.parquet"))  # fmt: skip
                kept.add(subtask)
            else:
                os.remove(os.path.join(staging, name))
    missing = sorted(set(final_attempts) - kept)
    if missing:
        raise SinkError(f"sink {sink.path}: no output from subtasks {missing[:5]}")
    return len(kept)


def abort(sink: ParquetSink, job_id: str) -> None:
    shutil.rmtree(staging_dir(sink, job_id), ignore_errors=True)
    old, target = _set_aside(sink, job_id), _target(sink)
    if os.path.isdir(old) and not os.path.exists(target):
        os.replace(old, target)
