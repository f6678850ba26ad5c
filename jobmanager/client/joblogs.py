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
    match = _RAN.search(text)
    return {v.strip() for v in match.group(1).decode().split(",") if v.strip()} if match else set()


def render_logs(logs: dict[str, bytes], vertex: str | None = None) -> str:
    """The logs, each under a ``==> process <==`` line (as ``tail`` heads files)."""
    parts = []
    for process, text in logs.items():
        text = _ANSI.sub(b"", text)
        if vertex is not None:
            if process == "jobmanager":
                wanted = re.compile(rb"\bvertex=" + re.escape(vertex.encode()) + rb"\b")
                text = b"\n".join(line for line in text.splitlines() if wanted.search(line))
            elif vertex not in _ran(text):
                continue
        body = text.decode(errors="replace").rstrip("\n")
        parts.append(f"==> {process} <==\n{body}" if body else f"==> {process} <==\n(empty)")
    return "\n\n".join(parts) + "\n"
