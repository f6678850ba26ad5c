"""Showing a running job's progress: rich bars on a terminal, log lines elsewhere.

Both displays only read the ``JobDetails`` the client polls (``JobHandle.wait`` hands each one to
``update`` and the last to ``close``); they never ask the JobManager anything, so they cannot
slow the job down.

Per vertex they show its finished tasks of its total, and the rows and bytes it read and wrote
so far. A vertex's total is unknown until the adaptive scheduler decides its parallelism at run
time: until then its bar pulses and its count reads ``0/?``; once decided the bar shows
``finished/total``, starting from the tasks already finished, so no bar ever jumps backwards
because its total became known. A restart of a failed region may lower a vertex's finished
count; the display shows what the status says.

The overall line gives the job's status, its elapsed time, the vertices done of all vertices,
and the tasks done. Its bar measures vertices done of all vertices: a job's vertices are all
known when it is submitted, so that total never changes, whereas the total of tasks grows each
time a vertex is decided, and a percentage over it would drop while nothing went wrong. Tasks
are therefore shown as a count done, with the total so far marked ``+`` while some vertices are
undecided (``7 of 12+ tasks done``), never as a fraction of a total still growing.
"""

from __future__ import annotations

import atexit
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

import structlog
from rich.console import Console, Group, RenderableType
from rich.progress import BarColumn, ProgressColumn, Task, TaskID
from rich.progress import Progress as Bars
from rich.progress_bar import ProgressBar
from rich.table import Column, Table
from rich.text import Text

from jobmanager.messages.jobstatus import JobStatus
from jobmanager.runtime.details import JobDetails, VertexDetails

__all__ = [
    "LogProgress",
    "NoProgress",
    "Overall",
    "Progress",
    "RichProgress",
    "progress_for",
    "summary_table",
]

STATUS_STYLES = {
    JobStatus.STANDBY: "dim",
    JobStatus.CREATED: "dim",
    JobStatus.RECONCILING: "yellow",
    JobStatus.RUNNING: "cyan",
    JobStatus.FAILING: "red",
    JobStatus.CANCELLING: "yellow",
    JobStatus.FINISHING: "cyan",
    JobStatus.FINISHED: "green",
    JobStatus.FAILED: "bold red",
    JobStatus.CANCELED: "yellow",
}


class Progress(Protocol):
    def update(self, status: JobDetails) -> None: ...

    def close(self, status: JobDetails) -> None: ...


class NoProgress:
    def update(self, status: JobDetails) -> None:
        pass

    def close(self, status: JobDetails) -> None:
        pass


def count_text(vertex: VertexDetails) -> str:
    total = vertex.total
    return f"{vertex.finished if total is not None else 0}/{'?' if total is None else total}"


@dataclass(frozen=True)
class Overall:
    """The job as a whole: see the module's docstring for why vertices, not tasks, make its bar."""

    status: JobStatus
    elapsed_s: float | None
    vertices_done: int
    vertices: int
    tasks_done: int
    tasks_running: int
    tasks_known: int  # the totals of the decided vertices
    undecided: int  # vertices whose total is not known yet

    @staticmethod
    def of(status: JobDetails, now: float) -> Overall:
        vertices = status.vertices
        decided = [v for v in vertices if v.total is not None]
        submitted, ended = status.submitted_at, status.ended_at
        return Overall(
            status=status.status,
            elapsed_s=max(0.0, (ended or now) - submitted) if submitted else None,
            vertices_done=sum(1 for v in vertices if v.done),
            vertices=len(vertices),
            tasks_done=sum(v.finished for v in decided),
            tasks_running=sum(v.running for v in decided),
            tasks_known=sum(v.tasks for v in decided),
            undecided=len(vertices) - len(decided),
        )

    @property
    def tasks_text(self) -> str:
        if self.undecided:
            undecided = f"{self.undecided} {'vertex' if self.undecided == 1 else 'vertices'}"
            return f"{self.tasks_done} of {self.tasks_known}+ tasks done ({undecided} undecided)"
        return f"{self.tasks_done} of {self.tasks_known} tasks done"

    def text(self) -> str:
        done = f"{self.vertices_done}/{self.vertices} vertices done"
        return " · ".join((_elapsed(self.elapsed_s), done, self.tasks_text))


class LogProgress:
    """Log lines for a display that is not a terminal: one per vertex whenever its total, its
    finished count, its rows or bytes change or it starts running, and the overall line whenever
    the job's status changes (and once more at ``close`` if it did not just change). Nothing
    is logged while nothing changes, however often the status is polled. The lines go to
    ``log`` (default: the ``tidal.progress`` structlog logger), at INFO."""

    def __init__(self, clock: Callable[[], float] = time.time, log=None) -> None:
        self.log = log if log is not None else structlog.get_logger("tidal.progress")
        self.clock = clock
        self.seen: dict[str, tuple] = {}
        self.job_status: JobStatus | None = None

    def update(self, status: JobDetails) -> None:
        self._update(status)

    def close(self, status: JobDetails) -> None:
        if not self._update(status):
            self._overall(status)

    def _update(self, status: JobDetails) -> bool:
        """Log what changed; whether that included the job's status."""
        for v in status.vertices:
            key = (
                v.total,
                v.finished,
                v.running > 0,
                v.rows_in,
                v.rows_out,
                v.bytes_in,
                v.bytes_out,
            )
            if self.seen.get(v.name) != key:
                self.seen[v.name] = key
                self.log.info(
                    "vertex",
                    job=status.job_id,
                    vertex=v.name,
                    tasks=count_text(v),
                    running=v.running,
                    rows_in=v.rows_in,
                    rows_out=v.rows_out,
                    bytes_in=v.bytes_in,
                    bytes_out=v.bytes_out,
                )
        if status.status is self.job_status:
            return False
        self._overall(status)
        return True

    def _overall(self, status: JobDetails) -> None:
        self.job_status = status.status
        overall = Overall.of(status, self.clock())
        self.log.info(
            "job",
            job=status.job_id,
            status=overall.status.value,
            elapsed=_elapsed(overall.elapsed_s),
            vertices_done=f"{overall.vertices_done}/{overall.vertices}",
            tasks_done=overall.tasks_done,
            tasks_known=overall.tasks_known,
            undecided=overall.undecided,
            running=overall.tasks_running,
        )


def summary_table(
    status: JobDetails, title: str | None = None, caption: str | None = None
) -> Table:
    table = Table(title=title or f"{status.job_id}: {status.status.value}", caption=caption)
    for column in ("vertex", "parallelism", "tasks", "rows out", "bytes out", "why"):
        table.add_column(column, overflow="fold")
    for v in status.vertices:
        tasks = f"{v.finished}/{v.tasks}" + (f" ({v.running} running)" if v.running else "")
        table.add_row(
            v.name,
            "?" if v.parallelism is None else str(v.parallelism),
            tasks,
            f"{v.rows_out:,}",
            _size(v.bytes_out),
            v.explanation,
        )
    return table


class _Column(ProgressColumn):
    """A column whose cell is ``render(task)``."""

    def __init__(self, render: Callable[[Task], Text], column: Column) -> None:
        self._render = render
        super().__init__(table_column=column)

    def render(self, task: Task) -> Text:
        return self._render(task)


class _Bars(Bars):
    """rich's Progress, drawing its rows in the job's vertex order and the overall line last."""

    def __init__(self, owner: RichProgress, *columns: ProgressColumn, **options) -> None:
        self.owner = owner
        super().__init__(*columns, **options)

    def get_renderables(self):
        by_id = {task.id: task for task in self.tasks}
        yield self.make_tasks_table(by_id[i] for i in self.owner.order if i in by_id)
        yield self.owner.overall_line()


class RichProgress:
    """One rich progress bar per vertex, in the job's vertex order, and the overall line under
    them (see the module's docstring). Each vertex's rich task holds ``completed`` = its finished
    tasks and ``total`` = its tasks (None, a pulsing bar, until its parallelism is decided), and
    its rows and bytes as fields. The display starts at the first ``update``, redraws a few
    times a second on its own thread, and at ``close`` leaves its last frame on the terminal
    (or clears it, if ``transient``)."""

    BAR_WIDTH = (10, 24)  # the narrowest and widest bar; in between it fills the console
    NAME_WIDTH = 24

    def __init__(
        self,
        console: Console | None = None,
        transient: bool = False,
        clock: Callable[[], float] = time.time,
        auto_refresh: bool = True,
        refresh_per_second: float = 4,
    ) -> None:
        self._default_console = None if console is not None else Console()
        self.console = console or self._default_console
        self.transient = transient
        self.clock = clock
        self.auto_refresh = auto_refresh
        self.refresh_per_second = refresh_per_second
        self.bars: _Bars | None = None
        self.started = False
        self.task_ids: dict[str, TaskID] = {}
        self.order: list[TaskID] = []
        self.status: JobDetails | None = None
        self.name_width = 0
        self.bar_width = 0

    def update(self, status: JobDetails) -> None:
        if self.bars is None:
            self._make_bars(status)
        assert self.bars is not None
        for v in status.vertices:
            task_id = self.task_ids.get(v.name)
            if task_id is None:
                task_id = self.task_ids[v.name] = self.bars.add_task(v.name, total=None)
            total = v.total
            # rich keeps the total it had when given None: a total once known stays on the bar
            self.bars.update(
                task_id,
                total=total,
                completed=v.finished if total is not None else None,
                rows_in=v.rows_in,
                rows_out=v.rows_out,
                bytes_in=v.bytes_in,
                bytes_out=v.bytes_out,
            )
        self.order = [self.task_ids[v.name] for v in status.vertices]
        self.status = status  # after the rows: the overall line never runs ahead of them
        if not self.started:  # the first frame drawn already has every vertex
            self.started = True
            self.bars.start()
            atexit.register(self._stop)  # an interrupted wait() still gives the terminal back

    def close(self, status: JobDetails) -> None:
        self.update(status)
        self._stop()

    def frame(self) -> RenderableType:
        """What the display shows now."""
        return Group() if self.bars is None else self.bars.get_renderable()

    def tasks(self) -> dict[str, Task]:
        """Each vertex's rich task, by vertex name."""
        by_id = {task.id: task for task in self.bars.tasks} if self.bars else {}
        return {name: by_id[task_id] for name, task_id in self.task_ids.items()}

    def overall_line(self) -> RenderableType:
        status = self.status
        if status is None:
            return Text("")
        overall = Overall.of(status, self.clock())
        line = Table.grid(
            Column(width=self.name_width, no_wrap=True, overflow="ellipsis"),
            Column(width=self.bar_width, no_wrap=True),
            Column(),
            padding=(0, 1),
        )
        line.add_row(
            Text(overall.status.value, style=STATUS_STYLES[overall.status]),
            ProgressBar(overall.vertices, overall.vertices_done, width=self.bar_width),
            Text(overall.text()),
        )
        return line

    def _make_bars(self, status: JobDetails) -> None:
        names = [v.name for v in status.vertices] + list(STATUS_STYLES)
        self.name_width = min(max(map(len, names)), self.NAME_WIDTH)
        narrowest, widest = self.BAR_WIDTH
        # the name, "12/16", "3.0M → 450.0k rows", "90.0 MiB → 5.0 MiB" and the gaps between
        room = self.console.width - self.name_width - 5 - 18 - 19 - 4
        self.bar_width = max(narrowest, min(widest, room))
        default = self.console is self._default_console
        self.bars = _Bars(
            self,
            _Column(
                lambda t: Text(t.description),
                Column(width=self.name_width, no_wrap=True, overflow="ellipsis"),
            ),
            BarColumn(bar_width=self.bar_width),
            _Column(_count_cell, Column(justify="right", no_wrap=True)),
            _Column(
                lambda t: _flow_cell(t, "rows_in", "rows_out", _rows, " rows"), Column(no_wrap=True)
            ),
            _Column(
                lambda t: _flow_cell(t, "bytes_in", "bytes_out", _size, ""), Column(no_wrap=True)
            ),
            console=self.console,
            transient=self.transient,
            auto_refresh=self.auto_refresh,
            refresh_per_second=self.refresh_per_second,
            # prints (and Ray's forwarded logs) go above the bars; a console of the caller's own
            # is left alone
            redirect_stdout=default,
            redirect_stderr=default,
        )

    def _stop(self) -> None:
        if self.bars is not None and self.bars.live.is_started:
            self.bars.stop()
            atexit.unregister(self._stop)


def progress_for(show: bool, transient: bool = False, log=None) -> Progress:
    """Bars when stdout is a terminal (cleared at the end if ``transient``), log lines to
    ``log`` otherwise (see ``LogProgress``), nothing if not ``show``."""
    if not show:
        return NoProgress()
    return RichProgress(transient=transient) if sys.stdout.isatty() else LogProgress(log=log)


def _count_cell(task: Task) -> Text:
    if task.total is None:
        return Text("0/?", style="dim")
    style = "green" if task.completed >= task.total else ""
    return Text(f"{task.completed:.0f}/{task.total:.0f}", style=style)


def _flow_cell(task: Task, into: str, out: str, unit: Callable[[int], str], suffix: str) -> Text:
    """What a vertex read and wrote so far, ``in → out``."""
    if not task.fields.get(into) and not task.fields.get(out):
        return Text("")
    return Text(f"{unit(task.fields[into])} → {unit(task.fields[out])}{suffix}")


def _rows(n: int) -> str:
    for unit, size in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def _size(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _elapsed(seconds: float | None) -> str:
    return "-:--:--" if seconds is None else str(timedelta(seconds=int(seconds)))
