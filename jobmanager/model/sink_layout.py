"""How a sink's files are laid out and named, as Spark lays out ``df.write`` output: shared by the
TaskManagers that write them (``taskmanager.sink_writer``) and the JobManager that commits them
(``jobmanager.runtime.sinks``), so both read one another's names.

- A partitioned sink's rows go under ``<col>=<value>/...`` directories, one level per column in
  ``partition_by`` order, the partition columns dropped from the files. The value's text is
  Spark's: the value cast to a string (a date ``2024-01-02``, a timestamp
  ``2024-01-02 03:04:05.5``, a boolean ``true``), escaped as Spark's
  ``ExternalCatalogUtils.escapePathName`` escapes it (``%XX`` for control characters and
  ``"#%'*/:=?\\{[]^`` and DEL), NULL and the empty string as Hive's ``__HIVE_DEFAULT_PARTITION__``.
  Readers (Spark's, Tidal's ``FileSource``) unescape with ``%XX`` decoding.
- An attempt writes ``part-<subtask>-<attempt>.<ext>``, in each partition directory it has rows
  for; a partitioned attempt then writes ``_tidal-done-<subtask>-<attempt>`` at the staging
  root, naming its files: the commit's proof that the attempt finished, since a subtask with no
  rows writes no data file at all. Underscore names are skipped by every reader.
- Committed, a file is ``part-<subtask>.<ext>``, or ``part-<subtask>-<job>.<ext>`` where it
  lands next to other jobs' files (appending, or on an object store), so no two jobs' names
  clash.
"""

from __future__ import annotations

import datetime
import decimal
import math
import re
from typing import Any

from jobmanager.model.partition_filter import HIVE_NULL

__all__ = [
    "DONE_PREFIX",
    "FORMATS",
    "attempt_name",
    "done_marker",
    "escape_path_name",
    "extension",
    "final_name",
    "parse_attempt",
    "parse_done",
    "partition_dir",
    "partition_text",
]

DONE_PREFIX = "_tidal-done-"
FORMATS = ("parquet", "csv")
_EXTENSIONS = {"parquet": "parquet", "csv": "csv"}
_ATTEMPT = re.compile(r"^part-(\d+)-(\d+)\.(parquet|csv)$")
_DONE = re.compile(rf"^{DONE_PREFIX}(\d+)-(\d+)$")
# Spark's ExternalCatalogUtils.charToEscape (the Unix set)
_ESCAPED = frozenset(
    [
        *map(chr, range(1, 0x20)),
        '"',
        "#",
        "%",
        "'",
        "*",
        "/",
        ":",
        "=",
        "?",
        "\\",
        "\x7f",
        "{",
        "[",
        "]",
        "^",
    ]
)


def extension(format: str) -> str:
    return _EXTENSIONS[format]


def attempt_name(subtask: int, attempt: int, format: str) -> str:
    return f"part-{subtask:05d}-{attempt}.{extension(format)}"


def final_name(subtask: int, format: str, job_id: str | None = None) -> str:
    """A committed file's name; with ``job_id`` where other jobs' files may lie beside it."""
    tail = f"-{job_id}" if job_id else ""
    return f"part-{subtask:05d}{tail}.{extension(format)}"


def done_marker(subtask: int, attempt: int) -> str:
    return f"{DONE_PREFIX}{subtask:05d}-{attempt}"


def parse_attempt(name: str) -> tuple[int, int] | None:
    """(subtask, attempt) of an attempt's file name. A committed name with an all-digit job id
    looks the same: callers ask ``final_name`` first."""
    found = _ATTEMPT.match(name)
    return (int(found.group(1)), int(found.group(2))) if found else None


def parse_done(name: str) -> tuple[int, int] | None:
    found = _DONE.match(name)
    return (int(found.group(1)), int(found.group(2))) if found else None


def escape_path_name(text: str) -> str:
    """Spark's ``ExternalCatalogUtils.escapePathName``: ``%XX`` (upper-case hex) for each
    character a path or Hive would misread."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def partition_text(value: Any) -> str:
    """A partition value as Spark casts it to a string for its directory name (before
    escaping); NULL and the empty string are Hive's default partition."""
    if value is None or value == "":
        return HIVE_NULL
    for kind, text in _TEXT_BY_TYPE:
        if isinstance(value, kind):
            return text(value)
    return str(value)


def _timestamp_text(value: datetime.datetime) -> str:
    if value.tzinfo is not None:  # Spark shows it in the session's zone; UTC here
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    return text + (f".{value.microsecond:06d}".rstrip("0") if value.microsecond else "")


def _java_double(value: float) -> str:
    """Java's ``Double.toString``, as Spark writes a double: ``1.0``, ``0.001``, ``1.0E7``,
    ``1.5E-4``, ``NaN``, ``Infinity``."""
    if math.isnan(value):
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(value)
    exact = decimal.Decimal(repr(value))
    digits = "".join(map(str, exact.as_tuple().digits)).rstrip("0") or "0"
    sign = "-" if value < 0 else ""
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exact.adjusted()}"


# how Spark casts a value of each type to a string, the first type that matches (a bool is
# no int here, a timestamp no date)
_TEXT_BY_TYPE = (
    (bool, lambda value: "true" if value else "false"),
    (datetime.datetime, _timestamp_text),
    (datetime.date, lambda value: value.isoformat()),
    (float, _java_double),
    (decimal.Decimal, lambda value: format(value, "f")),
    (bytes, lambda value: value.decode("utf-8", "replace")),
)


def partition_dir(columns: tuple[str, ...], values: tuple) -> str:
    """``col=value/...`` for one partition, escaped as Spark escapes it."""
    return "/".join(
        f"{escape_path_name(c)}={escape_path_name(partition_text(v))}"
        for c, v in zip(columns, values)
    )
