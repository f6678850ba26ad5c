"""Structured logging for Tidal's shells (CLI, actors); the core only calls structlog. And
where a process's log goes, so ``tidal logs`` can show a job's part of it.

Ray sends each worker process's stdout and stderr to files in its session's log folder. A
JobManager or TaskManager writes its structured log to stderr, and what runs inside it (a
user's ``print``, the JVM PySpark starts as a child) writes to the same two files; so the
part of those files written while a TaskManager served a job is that job's part of its log.
"""

from __future__ import annotations

import logging
import os
import sys

import structlog

__all__ = ["configure_logging", "log_positions", "log_since", "progress_logger"]

MAX_LOG_BYTES = 4 << 20  # per process and job: the tail beyond it is what a person reads


def configure_logging(level: str = "INFO", json: bool = False) -> None:
    """Log key-value events at ``level`` and above to stderr, as JSON lines or for a person."""
    renderer = (
        structlog.processors.JSONRenderer()
        if json
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def progress_logger():
    """A logger of progress lines at INFO to stderr, whatever level the rest of the process
    logs at (``tidal run`` keeps Tidal's own log to warnings, but its progress is the point)."""
    return structlog.wrap_logger(
        structlog.PrintLogger(sys.stderr),
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
    ).bind()


def _log_files() -> list[str]:
    paths: list[str] = []
    for fd in (1, 2):
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # no /proc (not Linux), or a closed descriptor
            continue
        if path.startswith("/") and os.path.isfile(path) and path not in paths:
            paths.append(path)
    return paths


def log_positions() -> dict[str, int]:
    """How far this process's log files go now: where a part of them begins."""
    positions = {}
    for path in _log_files():
        try:
            positions[path] = os.path.getsize(path)
        except OSError:
            continue
    return positions


def log_since(positions: dict[str, int] | None = None, limit: int = MAX_LOG_BYTES) -> bytes:
    """This process's stdout and stderr written since ``positions`` (all of them if None),
    each cut to its last ``limit`` bytes."""
    parts = []
    for path in _log_files():
        start = (positions or {}).get(path, 0)
        try:
            with open(path, "rb") as file:
                size = file.seek(0, os.SEEK_END)
                file.seek(max(start, size - limit))
                data = file.read()
        except OSError:
            continue
        if data:
            parts.append(data if data.endswith(b"\n") else data + b"\n")
    return b"".join(parts)
