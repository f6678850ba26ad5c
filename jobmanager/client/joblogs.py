"""``tidal logs``: a job's logs as one text, from ``JobHandle.logs()``.

The JobManager's log is the job's own; a TaskManager's part is what its process wrote while it
served the job (Tidal's log, the tasks' output, Spark's), and starts with a line naming the
vertices it ran tasks of. Asked for one vertex, the JobManager's lines about it are kept, and
the parts of the TaskManagers that ran its tasks: a Spark or ``print`` line does not say which
task wrote it, so a TaskManager's part is shown whole.
"""

from __future__ import annotations

import re

__all__ = ["render_logs"]

_RAN = re.compile(rb"^# .* ran tasks of: (.*)$", re.MULTILINE)
_ANSI = re.compile(rb"\x1b\[[0-9;]*m")


def _ran(text: bytes) -> set[str]:
    """The vertices a TaskManager ran tasks of, chained ones (``a -> b``) by each member."""
    match = _RAN.search(text)
    if not match:
        return set()
    return {
        member.strip()
        for v in match.group(1).decode().split(",")
        for member in v.split(" -> ")
        if member.strip()
    }


_VERTEX_FIELD = re.compile(rb"\bvertex=(?:'([^']*)'|(\S+))")


def _mentions(line: bytes, vertex: str) -> bool:
    """Whether a log line is about ``vertex``, or a chain it is in."""
    for quoted, bare in _VERTEX_FIELD.findall(line):
        if vertex in (quoted or bare).decode(errors="replace").split(" -> "):
            return True
    return False


def render_logs(logs: dict[str, bytes], vertex: str | None = None) -> str:
    """The logs, each under a ``==> process <==`` line (as ``tail`` heads files)."""
    parts = []
    for process, text in logs.items():
        text = _ANSI.sub(b"", text)
        if vertex is not None:
            if process == "jobmanager":
                text = b"\n".join(line for line in text.splitlines() if _mentions(line, vertex))
            elif vertex not in _ran(text):
                continue
        body = text.decode(errors="replace").rstrip("\n")
        parts.append(f"==> {process} <==\n{body}" if body else f"==> {process} <==\n(empty)")
    return "\n\n".join(parts) + "\n"
