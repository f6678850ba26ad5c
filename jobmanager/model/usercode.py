"""How a job's user code travels to the JobManager and the TaskManagers: cloudpickle, as in Ray.

Functions and modules of the user's own files go by value, since a Ray worker may not be able
to import them: the modules of the job's functions and sources, and every module loaded from
the job file's folder (``ship_by_value``), so a job file can import a module next to it, as
Ray's ``working_dir`` allows.

cloudpickle (3.1.3 on) names the code it ships by value ``<dynamic-code>`` to make its bytes
independent of where a function was defined; a traceback from the user's function on a
TaskManager would then no longer say which file raised. ``dumps`` keeps the real file name:
what the user reads in a failed job's cause matters more here than identical bytes.
"""

from __future__ import annotations

import io
import os
import sys
import types
from collections import ChainMap
from collections.abc import Iterable
from typing import Any

import cloudpickle
from cloudpickle import cloudpickle as _internals

__all__ = ["dumps", "ship_by_value"]

_DYNAMIC_FILE_NAME = "<dynamic-code>"
_OWN = {"jobmanager", "taskmanager", "shuffle", "blob", "pyspark", "pyarrow", "builtins"}


def _code_reduce(code: types.CodeType):
    constructor, args = _internals._code_reduce(code)
    return constructor, tuple(
        code.co_filename if arg == _DYNAMIC_FILE_NAME else arg for arg in args
    )


class _Pickler(cloudpickle.Pickler):
    dispatch_table = ChainMap({types.CodeType: _code_reduce}, cloudpickle.Pickler.dispatch_table)


def dumps(obj: Any) -> bytes:
    """``cloudpickle.dumps``, with the file names of functions shipped by value kept."""
    with io.BytesIO() as file:
        _Pickler(file, protocol=cloudpickle.DEFAULT_PROTOCOL).dump(obj)
        return file.getvalue()


def ship_by_value(things: Iterable[Any], folders: Iterable[str] = ()) -> None:
    """Make the modules of ``things`` (functions, sources) that live outside installed
    packages, and every loaded module whose file is under one of ``folders``, travel by value."""
    installed = tuple(p for p in sys.path if "site-packages" in p or "dist-packages" in p)
    for module in {*_modules_of(things, installed), *_modules_under(folders, installed)}:
        cloudpickle.register_pickle_by_value(module)


def _is_users(name: str, path: str, installed: tuple[str, ...]) -> bool:
    """A module of the user's own files: it has a file, outside installed packages, and is
    none of Tidal's or of the libraries every worker has."""
    return bool(path) and not path.startswith(installed) and name.split(".")[0] not in _OWN


def _modules_of(things: Iterable[Any], installed: tuple[str, ...]) -> list[types.ModuleType]:
    found = []
    for thing in things:
        name = getattr(thing, "__module__", None) or type(thing).__module__
        module = sys.modules.get(name)
        if (
            module is not None
            and name != "__main__"
            and _is_users(name, getattr(module, "__file__", None) or "", installed)
        ):
            found.append(module)
    return found


def _modules_under(folders: Iterable[str], installed: tuple[str, ...]) -> list[types.ModuleType]:
    """Top-level modules loaded from under ``folders`` (a job file's folder)."""
    roots = tuple(os.path.join(os.path.abspath(folder), "") for folder in folders)
    found = []
    for name, module in list(sys.modules.items()) if roots else ():
        path = getattr(module, "__file__", None) or ""
        if (
            "." not in name
            and _is_users(name, path, installed)
            and os.path.abspath(path).startswith(roots)
        ):
            found.append(module)
    return found
