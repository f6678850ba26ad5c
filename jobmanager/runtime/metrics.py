"""A job's metrics on Ray's Prometheus path, so Ray's dashboard and any Prometheus see a job.

The JobManager actor hands a ``JobMetrics`` every event once the core has applied it, with the
commands it led to, the time each batch of events took, and the size of the event log; this
module turns them into ``ray.util.metrics`` updates. Nothing here changes what the scheduler
does, and the core stays free of Ray. Each node's Ray metrics agent serves them at the node's
``metrics_export_port`` with Ray's ``ray_`` prefix, tagged ``job_id``, ``job_name`` and, per
vertex, ``vertex`` (not ``job``: Prometheus gives every scraped series its own ``job`` label).

Counters count what this process saw live, never what it replayed: a JobManager that takes a
job over is a new process whose counters start at zero (a new ``WorkerId`` series, a counter
reset to Prometheus), so a job's series summed over ``WorkerId`` give its totals across a
recovery, short of what the dead process had not exported yet. A task attempt counts as
finished or failed when this process sees the core move it there, once: a report resent after
a recovery, or about an attempt already replaced, counts nothing. Gauges say the state as it
is, a recovered JobManager's too.

Ray exports a process's metrics every ``metrics_report_interval_ms`` (10 s) and once more when
the process exits through ``exit_actor``: the JobManager's way of leaving, so a job's final
totals reach the endpoint.
"""

from __future__ import annotations

import threading

import structlog
from ray.util.metrics import Counter, Gauge, Histogram

from jobmanager.core import commands as cmd
from jobmanager.core.executiongraph import ExecutionState
from jobmanager.messages import events as ev

__all__ = ["JobMetrics", "ray_instruments"]

_log = structlog.get_logger("tidal.metrics")

_JOB = ("job_id", "job_name")
_VERTEX = (*_JOB, "vertex")
_LOOP_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5]
_TASK_REPORTS = (ev.TaskRunning, ev.TaskFinished, ev.TaskFailed, ev.TaskCanceled)

Key = tuple[str, int, int]  # vertex, subtask, attempt


def ray_instruments() -> dict[str, object]:
    """The metrics, as Ray defines them (exported as ``ray_<name>``, counters ``_total``)."""
    return {
        "deployed": Counter("tidal_tasks_deployed", "Task attempts deployed.", _VERTEX),
        "finished": Counter("tidal_tasks_finished", "Task attempts finished.", _VERTEX),
        "failed": Counter(
            "tidal_tasks_failed",
            "Task attempts failed, by their own error or with their TaskManager.",
            _VERTEX,
        ),
        "running": Gauge("tidal_tasks_running", "Task attempts running now.", _VERTEX),
        "written": Counter(
            "tidal_bytes_written",
            "Bytes finished task attempts wrote to their result partitions.",
            _VERTEX,
        ),
        "read": Counter("tidal_bytes_read", "Bytes finished task attempts read.", _VERTEX),
        "parallelism": Gauge(
            "tidal_vertex_parallelism", "The vertex's parallelism, once decided.", _VERTEX
        ),
        "loop": Histogram(
            "tidal_jobmanager_loop_seconds",
            "Seconds the JobManager's main loop "
            "took for one batch of events: log, apply, hand off the commands.",
            _LOOP_SECONDS,
            _JOB,
        ),
        "events": Counter("tidal_jobmanager_events", "Events the main loop applied.", _JOB),
        "log": Gauge("tidal_event_log_bytes", "Bytes of the job's event log in its store.", _JOB),
        "joins": Counter(
            "tidal_join_decisions",
            "Joins whose strategy the JobManager decided "
            "at run time, by strategy (broadcast or shuffled).",
            (*_VERTEX, "strategy"),
        ),
        "broadcast": Counter(
            "tidal_broadcast_bytes",
            "Bytes of the join sides the JobManager "
            "decided at run time to send whole to every task of the join "
            "(each task reads them once).",
            _VERTEX,
        ),
    }


class JobMetrics:
    """One job's metrics, fed by its JobManager. ``state`` is the core's state, read after each
    event to see what the event did to the task attempts it concerns; ``instruments`` default to
    Ray's (``ray_instruments``)."""

    def __init__(self, job_id: str, job_name: str, state, instruments: dict | None = None) -> None:
        self.state = state
        self.instruments = instruments if instruments is not None else ray_instruments()
        self.job = {"job_id": job_id, "job_name": job_name}
        self._tags: dict[str, dict[str, str]] = {}
        self._live: dict[Key, str] = {}  # deployed, not yet seen to end: its TaskManager
        self._running: set[Key] = set()
        self._running_per_vertex: dict[str, int] = {}
        self._parallelism: dict[str, int] = {}
        self._log_size = -1
        self._log_lock = threading.Lock()
        self._added: dict[tuple[str, str], int] = {}  # (instrument, vertex): since the last batch
        self._set: dict[tuple[str, str], int] = {}
        for v in state.graph.vertices():  # a JobManager taking a job over: what is under way
            if v.state.holds_slot:
                self._live[(v.name, v.subtask, v.attempt)] = v.slot.task_manager
                if v.state is ExecutionState.RUNNING:
                    self._count_running((v.name, v.subtask, v.attempt), True)
        self._flush()

    def saw_event(self, event: object, commands: list) -> None:
        """``event`` was applied and led to ``commands``."""
        self._saw_deployments(commands)
        kind = type(event)
        if kind in _TASK_REPORTS:
            key = (event.vertex, event.subtask, event.attempt)
            if key in self._live:
                self._settle([key], {key: event} if kind is ev.TaskFinished else {})
        elif kind is ev.TaskManagerLost:
            self._settle([key for key, tm in self._live.items() if tm == event.task_manager], {})
        elif kind is ev.JobManagerRecovered:  # the TaskManagers' answers: ends they had not sent
            self._settle(list(self._live), _finished_reports(event))

    def _saw_deployments(self, commands: list) -> None:
        for command in commands:
            if type(command) is cmd.DeployTask:
                self._live[(command.vertex, command.subtask, command.attempt)] = (
                    command.task_manager
                )
                self._add("deployed", command.vertex, 1)

    def saw_decision(self, event: object) -> None:
        """The core decided ``event`` live (not replayed): count its join decisions."""
        if type(event) is not ev.VertexParallelismDecided:
            return
        for join in event.joins:
            tags = {**self._vertex(event.vertex), "strategy": join.strategy}
            _record(self.instruments["joins"].inc, 1, tags)
            side = join.left_bytes if join.side == "left" else join.right_bytes
            if join.is_broadcast and side:  # Ray refuses to add 0: an empty side is broadcast too
                self._add("broadcast", event.vertex, side)

    def loop_batch(self, seconds: float, events: int) -> None:
        """The main loop applied a batch of ``events`` in ``seconds``: hand Ray what the batch
        counted, once per instrument and vertex (a call to Ray's recorder costs about as much
        as applying an event)."""
        _record(self.instruments["loop"].observe, seconds, self.job)
        if events:
            _record(self.instruments["events"].inc, events, self.job)
        for ejv in self.state.graph.job_vertices.values():  # a forward group's members too
            if ejv.parallelism is not None and self._parallelism.get(ejv.name) != ejv.parallelism:
                self._parallelism[ejv.name] = ejv.parallelism
                _record(
                    self.instruments["parallelism"].set, ejv.parallelism, self._vertex(ejv.name)
                )
        self._flush()

    def _flush(self) -> None:
        for (instrument, vertex), amount in self._added.items():
            _record(self.instruments[instrument].inc, amount, self._vertex(vertex))
        for (instrument, vertex), value in self._set.items():
            _record(self.instruments[instrument].set, value, self._vertex(vertex))
        self._added.clear()
        self._set.clear()

    def _add(self, instrument: str, vertex: str, amount: int) -> None:
        key = (instrument, vertex)
        self._added[key] = self._added.get(key, 0) + amount

    def saw_log(self, size: int) -> None:
        """The event log holds ``size`` bytes (``EventLog.size``). The log only grows, and the
        flushing thread may read its size just before the main loop's last flush and report it
        just after: a smaller size than the last one is that stale reading, not news."""
        with self._log_lock:
            if size > self._log_size:
                self._log_size = size
                _record(self.instruments["log"].set, size, self.job)

    def _settle(self, keys: list[Key], finished_reports: dict[Key, ev.TaskFinished]) -> None:
        """Count what the last event did to these attempts: running, finished, failed."""
        jobvertices = self.state.graph.job_vertices
        for key in keys:
            name, subtask, attempt = key
            v = jobvertices[name].vertices[subtask]
            replaced = v.attempt != attempt  # lost in a take-over and run again: no outcome
            if v.state is ExecutionState.RUNNING and not replaced:
                self._count_running(key, True)
            if not (replaced or v.state.is_terminal):
                continue
            del self._live[key]
            self._count_running(key, False)
            if replaced:
                continue
            if v.state is ExecutionState.FAILED:
                self._add("failed", name, 1)
            elif v.state is ExecutionState.FINISHED:
                self._add("finished", name, 1)
                report = finished_reports.get(key)
                if report is not None:
                    self._count_bytes(report, name)

    def _count_bytes(self, report: ev.TaskFinished, vertex: str) -> None:
        written = sum(p.total for p in report.produced)
        read = report.metrics.bytes_in if report.metrics is not None else 0
        if written:
            self._add("written", vertex, written)
        if read:
            self._add("read", vertex, read)

    def _count_running(self, key: Key, running: bool) -> None:
        if running == (key in self._running):
            return
        (self._running.add if running else self._running.discard)(key)
        name = key[0]
        count = self._running_per_vertex.get(name, 0) + (1 if running else -1)
        self._running_per_vertex[name] = count
        self._set[("running", name)] = count

    def _vertex(self, name: str) -> dict[str, str]:
        tags = self._tags.get(name)
        if tags is None:
            tags = self._tags[name] = {**self.job, "vertex": name}
        return tags


def _record(update, value: float, tags: dict[str, str]) -> None:
    """Hand Ray one update; a metric Ray refuses is a warning, never the job's failure."""
    try:
        update(value, tags=tags)
    except Exception as error:
        _log.warning(
            "metric not recorded",
            job=tags.get("job_id"),
            vertex=tags.get("vertex"),
            value=value,
            error=repr(error),
        )


def _finished_reports(event: ev.JobManagerRecovered) -> dict:
    """The ends of tasks the TaskManagers report after a recovery, by (vertex, subtask,
    attempt)."""
    return {
        (e.vertex, e.subtask, e.attempt): e
        for tm in event.task_managers
        for e in tm.ended
        if type(e) is ev.TaskFinished
    }
