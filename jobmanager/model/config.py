"""Configuration options, under Flink's keys where Flink has one.

Values come from the defaults, then a YAML file, then ``-D key=value`` pairs or the client call.
An unknown key or a bad value is an error that names the key.

A configuration crosses a process (to the ResourceManager that leases a job its TaskManagers,
to a TaskManager it starts) as its msgpack form, ``to_bytes``, and is parsed there by
``from_bytes``: every reader has the same options with the same defaults, none its own copy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import msgpack

from jobmanager.errors import ConfigurationError, ConfigurationFileError

__all__ = [
    "FLINK_KEYS",
    "OPTIONS",
    "Configuration",
    "Option",
    "parse_duration_ms",
    "parse_memory_size",
]

_DURATION_UNITS = {
    "ms": 1,
    "milli": 1,
    "millis": 1,
    "millisecond": 1,
    "milliseconds": 1,
    "s": 1000,
    "sec": 1000,
    "secs": 1000,
    "second": 1000,
    "seconds": 1000,
    "min": 60_000,
    "m": 60_000,
    "minute": 60_000,
    "minutes": 60_000,
    "h": 3_600_000,
    "hour": 3_600_000,
    "hours": 3_600_000,
    "d": 86_400_000,
    "day": 86_400_000,
    "days": 86_400_000,
}
_MEMORY_UNITS = {
    "b": 1,
    "bytes": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kib": 1 << 10,
    "kibibytes": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "mib": 1 << 20,
    "mebibytes": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "gib": 1 << 30,
    "gibibytes": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "tib": 1 << 40,
    "tebibytes": 1 << 40,
}
_AMOUNT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def _parse_amount(text: str, units: dict[str, int], default_unit: int, what: str) -> int:
    match = _AMOUNT.match(text)
    if not match or match.group(2).lower() not in units and match.group(2):
        raise ValueError(f"not a {what}: {text!r} (examples: {', '.join(list(units)[:4])})")
    unit = units[match.group(2).lower()] if match.group(2) else default_unit
    return int(float(match.group(1)) * unit)


def parse_duration_ms(value: Any) -> int:
    """``"1 s"``, ``"500 ms"``, ``"1 min"`` or a number of milliseconds."""
    if isinstance(value, bool):
        raise TypeError("a duration, not a boolean")
    if isinstance(value, int):
        return value
    return _parse_amount(str(value), _DURATION_UNITS, 1, "duration")


def parse_memory_size(value: Any) -> int:
    """``"16 mb"``, ``"1 MiB"``, ``"1g"`` or a number of bytes."""
    if isinstance(value, bool):
        raise TypeError("a size, not a boolean")
    if isinstance(value, int):
        return value
    return _parse_amount(str(value), _MEMORY_UNITS, 1, "memory size")


def _int(minimum: int) -> Callable[[Any], int]:
    def parse(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise TypeError(f"expected an integer, got {value!r}")
        number = int(value)
        if number < minimum:
            raise ValueError(f"must be at least {minimum}, got {number}")
        return number

    return parse


def _float(minimum: float, maximum: float | None = None) -> Callable[[Any], float]:
    def parse(value: Any) -> float:
        if isinstance(value, bool):
            raise TypeError(f"expected a number, got {value!r}")
        number = float(value)
        if number < minimum or (maximum is not None and number > maximum):
            raise ValueError(f"must be within [{minimum}, {maximum}], got {number}")
        return number

    return parse


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off"):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


def _choice(*choices: str, aliases: Mapping[str, str] | None = None) -> Callable[[Any], str]:
    lookup = {c.lower(): c for c in choices}
    lookup.update({k.lower(): v for k, v in (aliases or {}).items()})

    def parse(value: Any) -> str:
        try:
            return lookup[str(value).strip().lower()]
        except KeyError:
            raise ValueError(f"expected one of {', '.join(choices)}; got {value!r}") from None

    return parse


def _positive_duration(value: Any) -> int:
    ms = parse_duration_ms(value)
    if ms < 0:
        raise ValueError("a duration cannot be negative")
    return ms


_CLASS_NAME = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


def _class_names(value: Any) -> tuple[str, ...]:
    """Qualified class names, as a list or one string separated by ``;`` or ``,``; a bare name
    is a builtin (``TypeError`` is ``builtins.TypeError``)."""
    items = re.split(r"[;,]", value) if isinstance(value, str) else list(value)
    names = []
    for item in (str(i).strip() for i in items):
        if not item:
            continue
        if not _CLASS_NAME.match(item):
            raise ValueError(f"not a class name: {item!r}")
        names.append(item if "." in item else f"builtins.{item}")
    return tuple(names)


def _retained_jobs(value: Any) -> int:
    number = _int(-1)(value)
    if number == 0:
        raise ValueError("must be -1 (keep all) or at least 1, got 0")
    return number


def _positive_memory(value: Any) -> int:
    size = parse_memory_size(value)
    if size < 1:
        raise ValueError("must be at least one byte")
    return size


def _memory_or_off(value: Any) -> int:
    """A size, or -1 for never."""
    if value in (-1, "-1"):
        return -1
    return parse_memory_size(value)


def _names(value: Any) -> tuple[str, ...]:
    """Names, as a list or one string separated by ``,``, lowercased, the empty ones dropped."""
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(name for name in (str(i).strip().lower() for i in items) if name)


@dataclass(frozen=True, slots=True)
class Option:
    key: str
    parse: Callable[[Any], Any]
    default: Any
    description: str


_ADAPTIVE = "execution.batch.adaptive.auto-parallelism."
_SKEW = "execution.batch.adaptive.skewed-join-optimization."
_EXP = "restart-strategy.exponential-delay."

OPTIONS: dict[str, Option] = {
    o.key: o
    for o in [
        Option(
            "parallelism.default",
            _int(1),
            1,
            "Parallelism of a vertex that sets none when the job runs without the adaptive "
            "scheduler; the last fallback for a source's parallelism upper bound.",
        ),
        Option(
            "jobmanager.core.scheduler",
            _choice("Default", "AdaptiveBatch"),
            None,
            "Default: every parallelism is fixed before the job starts. AdaptiveBatch: "
            "decided from the bytes inputs produced. Unset: AdaptiveBatch when some vertex "
            "leaves its parallelism unset.",
        ),
        Option(
            _ADAPTIVE + "min-parallelism",
            _int(1),
            1,
            "Lower bound of a parallelism the adaptive scheduler decides.",
        ),
        Option(
            _ADAPTIVE + "max-parallelism",
            _int(1),
            128,
            "Upper bound of a decided parallelism; also how many subpartitions a producer "
            "writes for a consumer whose parallelism is not decided yet.",
        ),
        Option(
            _ADAPTIVE + "avg-data-volume-per-task",
            _positive_memory,
            64 << 20,
            "Bytes of input each task should get (Spark's "
            "spark.sql.adaptive.advisoryPartitionSizeInBytes, 64 MiB: a Tidal task is a "
            "Spark query of its own, 100 to 200 ms before its first row, so smaller tasks "
            "spend more of their time starting).",
        ),
        Option(
            _ADAPTIVE + "min-data-volume-per-task",
            _positive_memory,
            16 << 20,
            "Spread a vertex over the job's slots: where its input fills fewer tasks "
            "than the job's slots at avg-data-volume-per-task, its tasks get "
            "input / slots bytes each, but at least this many (Spark's "
            "spark.sql.adaptive.coalescePartitions.parallelismFirst with minPartitionSize, "
            "1 MiB; Tidal 16 MiB, a task costing more to start than a partition). Unset: every "
            "task gets avg-data-volume-per-task, as in Flink.",
        ),
        Option(
            _ADAPTIVE + "source-data-volume-per-task",
            _positive_memory,
            128 << 20,
            "Bytes of its files' columns each task of a source should read (where unset and "
            "avg-data-volume-per-task is set, that). A task's "
            "Spark splits its own scan over its "
            "TaskManager's cores, so a source task may read as much as one Spark scan "
            "partition (spark.sql.files.maxPartitionBytes, 128 MiB).",
        ),
        Option(
            _ADAPTIVE + "default-source-parallelism",
            _int(1),
            None,
            "Upper bound of a source's inferred parallelism; unset falls back to "
            "max-parallelism, then parallelism.default.",
        ),
        Option(
            _SKEW + "strategy",
            _choice("none", "auto", "forced"),
            "auto",
            "auto: cut skewed subpartitions of inputs marked splittable across consumers; "
            "a SQL join whose output its own task uses as hash-partitioned (an aggregate, "
            "window or join on its keys placed after it) is not cut. forced: the planner "
            "puts such an operator behind a hash exchange of its own, so the join is cut "
            "too (Flink's FORCED, planned before the run: the exchange is there whether or "
            "not skew appears). none: nothing is cut.",
        ),
        Option(
            _SKEW + "skewed-factor",
            _float(1.0),
            4.0,
            "A subpartition is skewed above this many times the median ...",
        ),
        Option(
            _SKEW + "skewed-threshold",
            _positive_memory,
            256 << 20,
            "... and above this many bytes.",
        ),
        Option(
            "blob.offload.minsize",
            _positive_memory,
            1 << 20,
            "Shuffle descriptors of a consumed partition group at least this large travel "
            "through the blob store; smaller ones inline in the deployment.",
        ),
        Option(
            "taskmanager.numberOfTaskSlots",
            _int(1),
            2,
            "Slots per TaskManager; each runs one task at a time. (Flink: 1; Tidal: 2, "
            "because every TaskManager process carries its own Spark JVM.)",
        ),
        Option(
            "taskmanager.memory.spark-driver",
            _positive_memory,
            None,
            "JVM heap of the SparkSession in each TaskManager. Unset: a quarter of its "
            "node's memory, shared by the TaskManagers the node's CPUs hold (its slots' "
            "share), between 1 GiB and 16 GiB; as Spark sizes executors from the "
            "machine, the rest left to Python, Arrow, Ray's object store and the page "
            "cache.",
        ),
        Option(
            "heartbeat.interval",
            _positive_duration,
            1000,
            "How often the JobManager checks that each TaskManager is alive.",
        ),
        Option(
            "heartbeat.timeout",
            _positive_duration,
            30_000,
            "A TaskManager that does not answer for this long is lost.",
        ),
        Option(
            "resourcemanager.taskmanager-timeout",
            _positive_duration,
            300_000,
            "An idle TaskManager is kept this long for the next job, then stopped; sooner "
            "when a job of another shape needs the CPUs it holds. (Flink: 30 s; Tidal: 5 "
            "min, Ray's autoscaler's idle node timeout, because every TaskManager carries a "
            "Spark JVM whose start and warm-up cost the next job seconds.)",
        ),
        Option(
            "slot.request.timeout",
            _positive_duration,
            300_000,
            "A TaskManager the cluster cannot start within this time is given up.",
        ),
        Option(
            "taskmanager.node-id",
            str,
            "",
            "The node a TaskManager says it is on; empty means Ray's node id. Consumers on "
            "the same node read its partition files directly; tests set two ids to force "
            "reads through the network.",
        ),
        Option(
            "io.tmp.dirs",
            str,
            "",
            "Where TaskManagers keep the job's partition files and their scratch space "
            "(Spark's temporary files; a TaskManager started elsewhere is not reused for "
            "the job); empty means the system's temporary directory.",
        ),
        Option(
            "jobstore.dir",
            str,
            "",
            "Where each job's store lives (its event log, snapshots, graph and blobs): a "
            "local directory or any fsspec URL a restarted JobManager can reach. Empty: "
            "$TIDAL_HOME/jobs, or ~/.tidal/jobs.",
        ),
        Option(
            "job-event.store.write-buffer.size",
            _positive_memory,
            1 << 20,
            "Events that start no work (a task reporting it runs) are written to the job's "
            "event log in batches of this size ...",
        ),
        Option(
            "job-event.store.write-buffer.flush-interval",
            _positive_duration,
            1000,
            "... or at least this often. An event that leads to work (a deployment, a "
            "cancellation, a decision) is written before the work starts.",
        ),
        Option(
            "execution.batch.job-recovery.enabled",
            _bool,
            True,
            "A JobManager that dies is restarted and takes the job over from its store, "
            "keeping finished tasks and every decision. (Flink: off by default.)",
        ),
        Option(
            "execution.batch.job-recovery.previous-worker.recovery.timeout",
            _positive_duration,
            30_000,
            "How long a new JobManager waits for the job's TaskManagers to say what they "
            "hold; TaskManagers leased to a job whose JobManager is gone stay leased to it "
            "this long.",
        ),
        Option(
            "execution.batch.job-recovery.snapshot.min-pause",
            _positive_duration,
            180_000,
            "The job's state is written to its store as a snapshot at most this often, so "
            "a recovery replays only the events after it.",
        ),
        Option(
            "jobstore.expiration-time",
            _positive_duration,
            600_000,
            "How long an ended job's store and work directory are kept (status, logs and "
            "recovery read them); its archive stays.",
        ),
        Option(
            "jobmanager.archive.fs.dir",
            str,
            "",
            "Where an ended job's archive goes (its event log, graph, final status and "
            "logs), for tidal history, explain and report: a local directory or any fsspec "
            "URL. Empty: $TIDAL_HOME/history, or ~/.tidal/history. (Flink: no archive "
            "unless set.)",
        ),
        Option(
            "client.result.max-size",
            _positive_memory,
            256 << 20,
            "The largest query result JobResult.to_arrow() reads back into the client, "
            "measured before reading from its Parquet files' uncompressed row groups; a "
            "larger one is an error saying to write it instead (Client.sql(output=...), "
            "tidal sql -o).",
        ),
        Option(
            "historyserver.archive.retained-jobs",
            _retained_jobs,
            1000,
            "How many archives are kept, the newest; -1 keeps all. (Flink: -1.)",
        ),
        Option(
            "jobmanager.slot-prefetch",
            _int(0),
            4,
            "How many single-task regions may wait in a busy slot behind its running task, "
            "hiding the round trip to the JobManager between short tasks; 0 turns it off.",
        ),
        Option(
            "slotmanager.number-of-slots.max",
            _int(1),
            None,
            "Most slots the job's TaskManagers may have in all. Unset: the cluster's CPUs "
            "when the job was submitted (kept in the job's store, so a recovered job plans "
            "with the same number).",
        ),
        Option(
            "pipeline.operator-chaining.enabled",
            _bool,
            True,
            "Run vertices joined by a FORWARD edge, one consumer to one producer, as one "
            "task: one Spark query, no partition file between them.",
        ),
        Option(
            "execution.batch.speculative.enabled",
            _bool,
            False,
            "Run another attempt of a task much slower than its finished peers, in a slot "
            "on another TaskManager; the first to finish wins, the others are cancelled.",
        ),
        Option(
            "execution.batch.speculative.max-concurrent-executions",
            _int(2),
            2,
            "Most attempts of one task running at once, the first one included.",
        ),
        Option(
            "execution.batch.speculative.block-slow-node-duration",
            _positive_duration,
            60_000,
            "A TaskManager found running a slow task takes no speculative attempt for this long.",
        ),
        Option(
            "slow-task-detector.check-interval",
            _positive_duration,
            1000,
            "How often running tasks are checked for slowness (with speculation on).",
        ),
        Option(
            "slow-task-detector.execution-time.baseline-lower-bound",
            _positive_duration,
            60_000,
            "A task is never slow before it ran this long ...",
        ),
        Option(
            "slow-task-detector.execution-time.baseline-ratio",
            _float(0.0, 1.0),
            0.75,
            "... nor before this share of its vertex's tasks finished ...",
        ),
        Option(
            "slow-task-detector.execution-time.baseline-multiplier",
            _float(1.0),
            1.5,
            "... nor before it ran this many times the median of its finished peers.",
        ),
        Option(
            "restart-strategy.type",
            _choice(
                "none",
                "fixed-delay",
                "exponential-delay",
                aliases={
                    "off": "none",
                    "disable": "none",
                    "no_restart": "none",
                    "norestart": "none",
                    "fixeddelay": "fixed-delay",
                    "exponentialdelay": "exponential-delay",
                },
            ),
            "exponential-delay",
            "How the job restarts failed regions.",
        ),
        Option(
            "restart-strategy.non-recoverable-exceptions",
            _class_names,
            (),
            "Exception classes (qualified names; a list, or separated by ';') that fail the "
            "job at the first failure, with no restart, besides Tidal's own list (Spark's "
            "AnalysisException, TypeError, a missing file, ...; see "
            "jobmanager.core.scheduler.recoverable). Subclasses count too.",
        ),
        Option(
            "restart-strategy.fixed-delay.attempts",
            _int(0),
            1,
            "Restarts before the job fails, for fixed-delay.",
        ),
        Option(
            "restart-strategy.fixed-delay.delay",
            _positive_duration,
            1000,
            "Delay before each restart, for fixed-delay.",
        ),
        Option(_EXP + "initial-backoff", _positive_duration, 1000, "First back-off."),
        Option(_EXP + "max-backoff", _positive_duration, 60_000, "Largest back-off."),
        Option(_EXP + "backoff-multiplier", _float(1.0), 1.5, "Growth of the back-off."),
        Option(
            _EXP + "reset-backoff-threshold",
            _positive_duration,
            3_600_000,
            "Time without failure after which the back-off starts over.",
        ),
        Option(_EXP + "jitter-factor", _float(0.0, 1.0), 0.1, "Random spread of a back-off."),
        Option(
            _EXP + "attempts-before-reset-backoff",
            _int(0),
            4,
            "Restarts before the job fails (Flink: unlimited; Tidal stops a deterministic "
            "bug after 4, like Spark's spark.task.maxFailures).",
        ),
        Option(
            "table.optimizer.join.broadcast-threshold",
            _memory_or_off,
            10 << 20,
            "A SQL query's join sends a side whole to every task of the other when the "
            "side's listed bytes (the compressed columns it reads) are at most this; -1 "
            "never does. (Flink: 1 MB of its own estimate; Tidal: Spark's 10 MB, of bytes "
            "as Spark's estimate counts them.)",
        ),
        Option(
            "table.optimizer.join.read-whole-threshold",
            _memory_or_off,
            1 << 20,
            "A join's side sent whole to every task of the other side, when it reads one "
            "table (filtered and projected only) of at most this many listed bytes and the "
            "other side's tasks read a table too, is read by each of those tasks in its own "
            "Spark query, as Spark's own plan reads it, not by a task of its own; -1 never.",
        ),
        Option(
            "table.optimizer.adaptive-broadcast-join.strategy",
            _choice("AUTO", "RUNTIME_ONLY", "NONE", aliases={"runtime-only": "RUNTIME_ONLY"}),
            "AUTO",
            "AUTO: a join is broadcast when planned (a side's listed bytes under "
            "table.optimizer.join.broadcast-threshold) or, failing that, at run time, when "
            "a side it may broadcast produced at most the threshold's real bytes (else it "
            "stays shuffled, built on its smaller side); RUNTIME_ONLY: only at run time, "
            "from the bytes produced; NONE: never at run time (FLIP-470).",
        ),
        Option(
            "table.optimizer.rules.disabled",
            _names,
            (),
            "The SQL planner's logical rules left out, by name, comma-separated (empty: none); "
            "`tidal sql --explain --rules` lists them and what each changed. The planner "
            "refuses a name no rule has.",
        ),
    ]
}


# Flink's keys for an option Tidal names otherwise: either may be given, read under Tidal's.
# Flink's table planner reads the skewed join options as table.optimizer.*; Tidal's runtime
# key came first and stays, and a Flink configuration carries over as it is.
FLINK_KEYS = {
    "table.optimizer.skewed-join-optimization." + name: _SKEW + name
    for name in ("strategy", "skewed-factor", "skewed-threshold")
}

_CONTRADICTIONS = (
    (_ADAPTIVE + "min-parallelism", _ADAPTIVE + "max-parallelism",
     lambda low, high: low <= high, "may not be above"),
    (_EXP + "initial-backoff", _EXP + "max-backoff",
     lambda low, high: low <= high, "may not be above"),
    ("heartbeat.interval", "heartbeat.timeout",
     lambda interval, timeout: interval < timeout, "must be below"),
)  # fmt: skip


class Configuration(Mapping[str, Any]):
    """Validated option values; reading an unset option gives its default."""

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        self._values: dict[str, Any] = {}
        for key, value in _under_tidal_keys(values or {}).items():
            self._values[key] = _parse(key, value)

    @classmethod
    def from_yaml(cls, path: str) -> Configuration:
        """The options of a YAML file; its mistakes name the file (and the line)."""
        import yaml

        try:
            with open(path, encoding="utf-8") as handle:
                data = yaml.safe_load(handle) or {}
        except FileNotFoundError:
            raise ConfigurationFileError(path, "no such configuration file") from None
        except OSError as error:
            raise ConfigurationFileError(path, f"cannot read it: {error.strerror}") from None
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
            problem = getattr(error, "problem", None) or str(error).splitlines()[0]
            raise ConfigurationFileError(where, f"not valid YAML: {problem}") from None
        if not isinstance(data, dict):
            raise ConfigurationFileError(path, "a configuration file maps option keys to values")
        try:
            return cls(_flatten(data))
        except ConfigurationError as error:
            raise ConfigurationFileError(path, str(error)) from None

    def with_overrides(self, values: Mapping[str, Any]) -> Configuration:
        merged = Configuration()
        merged._values = dict(self._values)
        for key, value in _under_tidal_keys(values).items():
            merged._values[key] = _parse(key, value)
        return merged

    def with_dynamic_properties(self, pairs: Iterable[str]) -> Configuration:
        """Apply ``-D key=value`` pairs."""
        values = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep:
                raise ConfigurationError(pair, "expected key=value")
            values[key.strip()] = value.strip()
        return self.with_overrides(values)

    def __getitem__(self, key: str) -> Any:
        key = FLINK_KEYS.get(key, key)
        if key in self._values:
            return self._values[key]
        try:
            return OPTIONS[key].default
        except KeyError:
            raise ConfigurationError(key, "unknown option") from None

    def is_set(self, key: str) -> bool:
        return FLINK_KEYS.get(key, key) in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def check_consistent(self) -> None:
        """Refuse options that contradict each other (as Flink does when it builds what reads
        them), naming both keys and their values."""
        for first, second, holds, relation in _CONTRADICTIONS:
            if not holds(self[first], self[second]):
                raise ConfigurationError(
                    first, f"{self[first]} {relation} {second!r} ({self[second]})"
                )

    def to_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def to_bytes(self) -> bytes:
        """The options set, msgpack-encoded: how a configuration crosses a process."""
        return msgpack.packb(self._values)

    @classmethod
    def from_bytes(cls, data: bytes) -> Configuration:
        """The configuration ``to_bytes`` encoded, parsed and checked again here."""
        return cls(msgpack.unpackb(data, strict_map_key=False))

    def __repr__(self) -> str:
        return f"Configuration({self._values})"


def _under_tidal_keys(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with Flink's keys for an option Tidal names otherwise (``FLINK_KEYS``) put
    under Tidal's; both keys of one option with different values are refused, naming both."""
    found: dict[str, Any] = {}
    given: dict[str, str] = {}
    for key, value in values.items():
        ours = FLINK_KEYS.get(key, key)
        if ours in found and found[ours] != value:
            raise ConfigurationError(
                key, f"{value!r} contradicts {given[ours]!r} ({found[ours]!r}): both set one option"
            )
        found[ours], given[ours] = value, key
    return found


def _parse(key: str, value: Any) -> Any:
    option = OPTIONS.get(key)
    if option is None:
        close = [k for k in OPTIONS if k.split(".")[-1] == key.split(".")[-1]]
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigurationError(key, f"unknown option{hint}")
    if value is None:
        return None
    try:
        return option.parse(value)
    except (TypeError, ValueError) as error:
        raise ConfigurationError(key, f"bad value {value!r}: {error}") from None


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        full = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, full + "."))
        else:
            flat[full] = value
    return flat
