"""``tidal run JOB.py``: turning a job file into a JobGraph, and its mistakes into one line.

A job file defines ``build()`` returning a ``JobGraph`` (or a module-level ``job``). It runs as a
script does: its folder comes first on ``sys.path``, so it imports the modules next to it, and
those modules travel with the job's code to the JobManager and the TaskManagers (by value, as
Ray's ``working_dir`` ships a folder), so nothing has to be installed on the cluster. Relative
paths in it resolve from where the command runs.

``build()`` may take arguments: ``-a key=value`` passes ``key`` as a keyword, its value read as
a YAML scalar (``-a scale=2`` is the int 2, ``-a day=1994-01-01`` a date, ``-a name=x`` a
string).

Every mistake in the file is a ``JobFileError`` naming the file and the line: a missing file, an
exception while it runs or while ``build()`` runs, a ``build()`` that takes other arguments or
returns something else than a JobGraph. A Ctrl-C while it runs is no mistake: the
``KeyboardInterrupt`` goes through (``tidal run`` exits 130, as for any Ctrl-C).
"""

from __future__ import annotations

import inspect
import os
import runpy
import sys
import traceback
from typing import Any, Iterable

import yaml

from jobmanager.errors import JobFileError
from jobmanager.model.jobgraph import JobGraph
from jobmanager.model.usercode import ship_by_value

__all__ = ["build_arguments", "load_job"]


def build_arguments(pairs: Iterable[str]) -> dict[str, Any]:
    """``key=value`` pairs, each value a YAML scalar."""
    arguments = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip().isidentifier():
            raise JobFileError(f"-a {pair}: expected key=value, the key a Python name")
        try:
            value = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError:
            value = text
        arguments[key.strip()] = text if isinstance(value, (dict, list)) else value
    return arguments


def load_job(path: str, arguments: dict[str, Any] | None = None) -> JobGraph:
    """The JobGraph the job file at ``path`` builds with ``arguments``."""
    job_file = os.path.abspath(path)
    if not os.path.isfile(job_file):
        raise JobFileError(f"{path}: no such job file")
    folder = os.path.dirname(job_file)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        namespace = runpy.run_path(job_file, run_name="tidal_job")
    except KeyboardInterrupt:  # Ctrl-C is the user's, not a mistake in the file
        raise
    except BaseException as error:  # a job file may sys.exit() too
        raise JobFileError(_where(error, job_file, folder)) from None
    build = namespace.get("build")
    if callable(build):
        job = _call_build(build, arguments or {}, job_file, folder, path)
    elif arguments:
        raise JobFileError(f"{path}: arguments given (-a) but the file defines no build()")
    else:
        job = namespace.get("job")
    if job is None:
        raise JobFileError(f"{path}: defines neither build() nor job")
    if not isinstance(job, JobGraph):
        raise JobFileError(f"{path}: build() returned {type(job).__name__}, not a JobGraph")
    ship_by_value((), [folder])
    return job


def _call_build(build, arguments: dict[str, Any], job_file: str, folder: str, path: str):
    try:
        inspect.signature(build).bind(**arguments)
    except TypeError as error:
        raise JobFileError(f"{path}: build() does not take these arguments: {error}") from None
    try:
        return build(**arguments)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # sys.exit() in build() too
        raise JobFileError(_where(error, job_file, folder, "in build()")) from None


def _where(error: BaseException, job_file: str, folder: str, during: str = "") -> str:
    """``FILE:LINE: Type: message``, at the innermost frame in the job's folder."""
    if isinstance(error, SyntaxError) and error.filename:
        return f"{_short(error.filename)}:{error.lineno}: SyntaxError: {error.msg}"
    frame = _innermost_own_frame(error, folder)
    where = f"{_short(frame.filename)}:{frame.lineno}" if frame else _short(job_file)
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    what = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return f"{where}: {during + ': ' if during else ''}{what}"


def _innermost_own_frame(error: BaseException, folder: str):
    """The innermost frame of ``error`` in a file of ``folder``, else its innermost (None:
    no traceback)."""
    frames = traceback.extract_tb(error.__traceback__)
    own = [f for f in frames if os.path.abspath(f.filename).startswith(folder + os.sep)]
    return (own or frames or [None])[-1]


def _short(path: str) -> str:
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else path
