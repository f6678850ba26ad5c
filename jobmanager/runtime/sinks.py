"""Committing Parquet sinks: a job's output appears whole when it finishes, or not at all.

Sink tasks write ``part-<subtask>-<attempt>.parquet`` into a staging directory beside the
target. When the job finishes, the JobManager keeps each subtask's final attempt, drops the
files of attempts that failed or were restarted, and renames the staging directory onto the
target in one step. A failed or cancelled job removes its staging directory; the target is never
touched.
"""

from __future__ import annotations

import os
import re
import shutil

from jobmanager.errors import TidalError
from jobmanager.model.operators import ParquetSink, staging_dir

__all__ = ["SinkError", "abort", "check_target", "commit"]

_PART = re.compile(r"^part-(\d+)-(\d+)\.parquet$")


class SinkError(TidalError):
    pass


def check_target(sink: ParquetSink) -> None:
    if os.path.exists(sink.path) and not sink.overwrite:
        raise SinkError(
            f"sink {sink.path}: the target already exists; remove it or use "
            "ParquetSink(path, overwrite=True)"
        )


def commit(sink: ParquetSink, job_id: str, final_attempts: dict[int, int]) -> int:
    """Publish the final attempts' part files at the sink's path; return how many."""
    staging = staging_dir(sink, job_id)
    found: dict[int, str] = {}
    names = os.listdir(staging) if os.path.isdir(staging) else []
    for name in names:
        match = _PART.match(name)
        if not match:
            continue
        subtask, attempt = int(match.group(1)), int(match.group(2))
        if final_attempts.get(subtask) == attempt:
            found[subtask] = name
        else:
            os.remove(os.path.join(staging, name))
    missing = sorted(set(final_attempts) - set(found))
    if missing:
        raise SinkError(f"sink {sink.path}: no output from subtasks {missing[:5]}")
    for subtask, name in found.items():
        os.replace(os.path.join(staging, name), os.path.join(staging, f"part-{subtask:05d}.parquet"))
    if os.path.exists(sink.path):
        check_target(sink)
        shutil.rmtree(sink.path)
    os.makedirs(os.path.dirname(os.path.abspath(sink.path)), exist_ok=True)
    os.replace(staging, sink.path)
    return len(found)


def abort(sink: ParquetSink, job_id: str) -> None:
    shutil.rmtree(staging_dir(sink, job_id), ignore_errors=True)
