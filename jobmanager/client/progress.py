"""Showing a running job's progress: a live table on a terminal, log lines elsewhere.

Progress only reads the status snapshots the client polls; it never slows the job down.
"""

from __future__ import annotations

import sys
from typing import Protocol

import structlog
from rich.console import Console
from rich.live import Live
from rich.table import Table

__all__ = ["LogProgress", "NoProgress", "Progress", "RichProgress", "progress_for", "summary_table"]

TERMINAL = ("FINISHED", "FAILED", "CANCELED")


class Progress(Protocol):
    def update(self, status: dict) -> None: ...

    def close(self, status: dict) -> None: ...


class NoProgress:
    def update(self, status: dict) -> None:
        pass

    def close(self, status: dict) -> None:
        pass


class LogProgress:
    """One log line whenever a vertex's count of finished tasks or the job's status changes."""

    def __init__(self) -> None:
        self.log = structlog.get_logger("tidal.progress")
        self.seen: dict[str, tuple] = {}

    def update(self, status: dict) -> None:
        job = status["job_id"]
        if self.seen.get("") != (status["status"],):
            self.seen[""] = (status["status"],)
            self.log.info("job", job=job, status=status["status"])
        for v in status["vertices"]:
            key = (v["parallelism"], v["finished"], v["running"])
            if self.seen.get(v["name"]) != key:
                self.seen[v["name"]] = key
                self.log.info("vertex", job=job, vertex=v["name"], parallelism=v["parallelism"],
                              finished=v["finished"], running=v["running"])  # fmt: skip

    def close(self, status: dict) -> None:
        self.update(status)


def summary_table(status: dict, title: str | None = None, caption: str | None = None) -> Table:
    table = Table(title=title or f"{status['job_id']}: {status['status']}", caption=caption)
    for column in ("vertex", "parallelism", "tasks", "rows out", "bytes out", "why"):
        table.add_column(column, overflow="fold")
    for v in status["vertices"]:
        tasks = f"{v['finished']}/{v['tasks']}" + (f" ({v['running']} running)" if v["running"] else "")
        table.add_row(
            v["name"],
            "?" if v["parallelism"] is None else str(v["parallelism"]),
            tasks,
            f"{v['rows_out']:,}",
            _size(v["bytes_out"]),
            v["explanation"],
        )
    return table


class RichProgress:
    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console()
        self.live = Live(console=self.console, refresh_per_second=4, transient=True)
        self.live.start()

    def update(self, status: dict) -> None:
        self.live.update(summary_table(status, f"{status['job_id']}: {status['status']}"))

    def close(self, status: dict) -> None:
        self.live.stop()


def progress_for(show: bool) -> Progress:
    if not show:
        return NoProgress()
    return RichProgress() if sys.stdout.isatty() else LogProgress()


def _size(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"
