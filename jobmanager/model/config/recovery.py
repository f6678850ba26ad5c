"""What happens when something fails: how failed regions restart, and how a new JobManager takes
a job over."""

from __future__ import annotations

from jobmanager.model.config.option import (
    Option,
    _bool,
    _choice,
    _class_names,
    _float,
    _int,
    _positive_duration,
)

__all__ = [
    "EXPONENTIAL_ATTEMPTS",
    "EXPONENTIAL_BACKOFF_MULTIPLIER",
    "EXPONENTIAL_INITIAL_BACKOFF",
    "EXPONENTIAL_JITTER_FACTOR",
    "EXPONENTIAL_MAX_BACKOFF",
    "EXPONENTIAL_RESET_BACKOFF_THRESHOLD",
    "FIXED_DELAY_ATTEMPTS",
    "FIXED_DELAY_DELAY",
    "JOB_RECOVERY_ENABLED",
    "NON_RECOVERABLE_EXCEPTIONS",
    "PREVIOUS_WORKER_RECOVERY_TIMEOUT",
    "RESTART_STRATEGY",
    "SNAPSHOT_MIN_PAUSE",
]

_EXP = "restart-strategy.exponential-delay."

RESTART_STRATEGY = Option(
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
)

NON_RECOVERABLE_EXCEPTIONS = Option(
    "restart-strategy.non-recoverable-exceptions",
    _class_names,
    (),
    "Exception classes (qualified names; a list, or separated by ';') that fail the "
    "job at the first failure, with no restart, besides Tidal's own list (Spark's "
    "AnalysisException, TypeError, a missing file, ...; see "
    "jobmanager.core.scheduler.recoverable). Subclasses count too.",
)

FIXED_DELAY_ATTEMPTS = Option(
    "restart-strategy.fixed-delay.attempts",
    _int(0),
    1,
    "Restarts before the job fails, for fixed-delay.",
)

FIXED_DELAY_DELAY = Option(
    "restart-strategy.fixed-delay.delay",
    _positive_duration,
    1000,
    "Delay before each restart, for fixed-delay.",
)

EXPONENTIAL_INITIAL_BACKOFF = Option(
    _EXP + "initial-backoff", _positive_duration, 1000, "First back-off."
)

EXPONENTIAL_MAX_BACKOFF = Option(
    _EXP + "max-backoff", _positive_duration, 60_000, "Largest back-off."
)

EXPONENTIAL_BACKOFF_MULTIPLIER = Option(
    _EXP + "backoff-multiplier", _float(1.0), 1.5, "Growth of the back-off."
)

EXPONENTIAL_RESET_BACKOFF_THRESHOLD = Option(
    _EXP + "reset-backoff-threshold",
    _positive_duration,
    3_600_000,
    "Time without failure after which the back-off starts over.",
)

EXPONENTIAL_JITTER_FACTOR = Option(
    _EXP + "jitter-factor", _float(0.0, 1.0), 0.1, "Random spread of a back-off."
)

EXPONENTIAL_ATTEMPTS = Option(
    _EXP + "attempts-before-reset-backoff",
    _int(0),
    4,
    "Restarts before the job fails (Flink: unlimited; Tidal stops a deterministic "
    "bug after 4, like Spark's spark.task.maxFailures).",
)

JOB_RECOVERY_ENABLED = Option(
    "execution.batch.job-recovery.enabled",
    _bool,
    True,
    "A JobManager that dies is restarted and takes the job over from its store, "
    "keeping finished tasks and every decision. (Flink: off by default.)",
)

PREVIOUS_WORKER_RECOVERY_TIMEOUT = Option(
    "execution.batch.job-recovery.previous-worker.recovery.timeout",
    _positive_duration,
    30_000,
    "How long a new JobManager waits for the job's TaskManagers to say what they "
    "hold; TaskManagers leased to a job whose JobManager is gone stay leased to it "
    "this long.",
)

SNAPSHOT_MIN_PAUSE = Option(
    "execution.batch.job-recovery.snapshot.min-pause",
    _positive_duration,
    180_000,
    "The job's state is written to its store as a snapshot at most this often, so "
    "a recovery replays only the events after it.",
)
