"""``tidal run pipeline.py``: an unchanged PySpark script run with ``pyspark`` bound to Tidal.

A file that defines ``build()`` (or ``job``) is a job file (``jobmanager.client.jobfile``); any
other Python file is a script, run here as ``python pipeline.py ARGS`` would run it: as
``__main__``, its folder first on ``sys.path``, ``sys.argv`` its own, the environment as it is.
Its ``pyspark`` is Tidal's (``jobmanager.client.dataframe.binding``), so each action is one job
on the cluster; the TaskManagers keep the real PySpark. A Tidal error the script does not catch
(a call Tidal cannot run, a failed job) is its one line, ``error: FILE:LINE: ...``, and exit code
1; any other exception is the script's own traceback, as Python prints it.
"""

from __future__ import annotations

import ast
import os
import runpy
import sys
from collections.abc import Callable, Mapping
from typing import Any

from jobmanager.errors import TidalError

__all__ = ["is_job_file", "run_script", "script_command"]


def is_job_file(path: str) -> bool:
    """Whether ``path`` defines ``build()`` or ``job`` at its top level (a file that cannot be
    parsed is left to the job file loader, which says where)."""
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), path)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return True
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "build":
            return True
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else ([node.target] if isinstance(node, ast.AnnAssign) else [])
        )
        if any(isinstance(t, ast.Name) and t.id == "job" for t in targets):
            return True
    return False


def run_script(
    path: str, arguments: list[str], options: Mapping[str, Any], client_factory: Callable[[], Any]
) -> tuple[int, list[str]]:
    """Run the script; its exit code and the ids of the jobs its actions ran."""
    from jobmanager.client.dataframe.binding import bound_to_tidal
    from jobmanager.client.dataframe.jobs import QueryRunner

    script = os.path.abspath(path)
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [path, *arguments]
    sys.path.insert(0, os.path.dirname(script))
    code, jobs = 0, []
    try:
        with bound_to_tidal(options, client_factory), QueryRunner.recording() as jobs:
            runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not isinstance(stop.code, (int, type(None))):
            print(stop.code, file=sys.stderr)
    except TidalError as error:
        print(f"error: {error}", file=sys.stderr)
        code = 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return code, jobs


def script_command(
    script: str,
    arguments: list[str],
    config_file: str | None,
    properties: list[str],
    client_factory: Callable[[], Any],
    fail: Callable[[str], Any],
) -> int:
    """``tidal run SCRIPT.py ARGS``: the options read (a bad one is ``fail``'s one line), the
    script run, the ids of its jobs printed last on stderr; its exit code."""
    from jobmanager.model.config import Configuration

    try:
        settings = Configuration.from_yaml(config_file) if config_file else Configuration()
        options = settings.with_dynamic_properties(properties).to_dict()
    except TidalError as error:
        fail(str(error))
    code, jobs = run_script(script, arguments, options, client_factory)
    if jobs:
        print(
            f"tidal: {len(jobs)} job{'s' if len(jobs) != 1 else ''} ({', '.join(jobs)}); "
            "tidal list shows them",
            file=sys.stderr,
        )
    return code
