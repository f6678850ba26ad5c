"""What Tidal's DataFrame API cannot run, said at the call in the user's script, in one line.

A PySpark program bound to Tidal (``tidal run``) builds its queries in this process and runs
each action as a Tidal job. Some of PySpark cannot become a query: an RDD, a Python UDF,
``foreach``, streaming. Those calls raise ``UnsupportedCallError`` at once, before anything runs
or is written, naming the method and the line of the user's script that called it, and the
alternative where one exists.
"""

from __future__ import annotations

import os
import sys
import sysconfig

from jobmanager.errors import TidalError

__all__ = ["UnsupportedCallError", "caller_line", "unsupported"]

_ARROW_VERTEX = "for arbitrary Python, write an arrow(fn) vertex of a JobGraph (tidal run JOB.py)"

ALTERNATIVES = {
    "rdd": "use the DataFrame API; " + _ARROW_VERTEX,
    "udf": "use the built-in functions (pyspark.sql.functions); " + _ARROW_VERTEX,
    "foreach": "collect() the rows, or write the DataFrame; " + _ARROW_VERTEX,
    "streaming": "Tidal runs batch jobs: read the files with spark.read",
}


class UnsupportedCallError(TidalError, NotImplementedError):
    """A PySpark call Tidal cannot run, raised where the user's script made it."""


def _library_roots() -> tuple[str, ...]:
    """Folders whose frames are never the user's: this package's, sqlframe's and sqlglot's,
    the standard library's and the installed packages'."""
    import sqlframe
    import sqlglot

    here = os.path.abspath(__file__)
    roots = {os.path.dirname(os.path.dirname(os.path.dirname(here))),
             os.path.dirname(os.path.abspath(sqlframe.__file__)),
             os.path.dirname(os.path.abspath(sqlglot.__file__))}  # fmt: skip
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(os.path.abspath(path))
    return tuple(root + os.sep for root in roots)


def caller_line() -> tuple[str, int] | None:
    """The file and line of the innermost frame outside Tidal and the libraries it builds on:
    the line of the user's script that made the call."""
    roots = _library_roots()
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(roots) and not frame.f_code.co_filename.startswith("<"):
            return _short(path), frame.f_lineno
        frame = frame.f_back
    return None


def where() -> str:
    found = caller_line()
    return f"{found[0]}:{found[1]}" if found else "<unknown>"


def unsupported(method: str, why: str, alternative: str | None = None) -> UnsupportedCallError:
    """The error for ``method`` called from the user's script: ``FILE:LINE: METHOD is not
    supported on Tidal: WHY; ALTERNATIVE``."""
    tail = f"; {ALTERNATIVES.get(alternative, alternative)}" if alternative else ""
    return UnsupportedCallError(f"{where()}: {method} is not supported on Tidal: {why}{tail}")


def _short(path: str) -> str:
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else path
