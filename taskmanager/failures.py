"""How a task's failure is told to the JobManager, and the exceptions that steer it.

A failure travels as text: ``"Type: message"`` on the first line, then the full Python
traceback, so a person reading ``status()`` sees what their function raised and where. A PySpark
error carries the JVM's whole stack trace in its message, often hundreds of lines of Spark
internals; those frames are cut to the first few of each block, and the whole text is capped, so
the essential JVM message (the exception lines, ``Caused by:``) survives and the event stays
small.

::

    TaskCancelled           the JobManager (or a shutdown) cancelled the task; not a failure
    InputLost               reading an input raised a shuffle PartitionError: the producer must
                            run again, the task's own code is not at fault
    JavaUnavailable         no Java that PySpark 4 accepts; says what to install
"""

from __future__ import annotations

import re
import traceback

from jobmanager.errors import TidalError
from shuffle.errors import PartitionError

__all__ = [
    "MAX_ERROR_CHARS",
    "InputLost",
    "JavaUnavailable",
    "TaskCancelled",
    "describe_failure",
    "failure_types",
]

MAX_ERROR_CHARS = 16_000
_MAX_MESSAGE_CHARS = 2_000
_JVM_FRAMES_KEPT = 3
_JVM_FRAME = re.compile(r"^\s+(at [\w$.<>/]+\(.*\)|\.\.\. \d+ more)\s*$")


class TaskCancelled(TidalError):
    """The task stopped before finishing because it was asked to."""

    def __init__(self, where: str) -> None:
        super().__init__(f"cancelled {where}")


class InputLost(TidalError):
    """An input partition could not be read (missing, truncated, corrupt, unreachable)."""

    def __init__(self, error: PartitionError) -> None:
        super().__init__(str(error))
        self.error = error
        self.partition_id = error.partition_id


class JavaUnavailable(TidalError):
    """PySpark cannot start: no Java 17 or 21 was found."""


def describe_failure(error: BaseException, limit: int = MAX_ERROR_CHARS) -> str:
    """``"Type: message"`` and the traceback, JVM frames trimmed, at most ``limit`` characters
    (the middle is cut, keeping the head, where the message is, and the tail, where the user's
    frame that raised is)."""
    cause = error.error if isinstance(error, InputLost) else error
    message = _trim_jvm_frames(_message(cause)).strip()
    if len(message) > _MAX_MESSAGE_CHARS:
        message = message[:_MAX_MESSAGE_CHARS] + " ..."
    trace = _trim_jvm_frames("".join(traceback.format_exception(cause)))
    text = f"{type(cause).__name__}: {message}\n\n{trace}".rstrip() + "\n"
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n... [{cut} characters cut] ...\n{text[-tail:]}"


def failure_types(error: BaseException, limit: int = 32) -> tuple[str, ...]:
    """The qualified class names of ``error`` and of the exceptions it was raised from
    (``raise ... from``), most specific first: what the JobManager classifies a failure by
    (``jobmanager.core.scheduler.recoverable``)."""
    names: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error.error if isinstance(error, InputLost) else error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for cls in type(current).__mro__[:-1]:  # not object
            name = f"{cls.__module__}.{cls.__qualname__}"
            if cls not in (BaseException, Exception) and name not in names:
                names.append(name)
        current = current.__cause__
    return tuple(names[:limit])


def _message(error: BaseException) -> str:
    """``str(error)``; a Py4J error asks the JVM for its text, which fails if the JVM is gone."""
    try:
        return str(error)
    except Exception as unavailable:
        return f"(message unavailable: {type(unavailable).__name__}: {unavailable})"


def _trim_jvm_frames(text: str) -> str:
    """Keep the first few ``at ...`` lines of every JVM stack trace block."""
    lines = []
    run = 0
    for line in text.splitlines():
        if _JVM_FRAME.match(line):
            run += 1
            if run <= _JVM_FRAMES_KEPT:
                lines.append(line)
            elif run == _JVM_FRAMES_KEPT + 1:
                lines.append("\t... (JVM frames cut)")
            continue
        run = 0
        lines.append(line)
    return "\n".join(lines)
