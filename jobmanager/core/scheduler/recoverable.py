"""Which task failures a restart can fix, as Flink's ThrowableClassifier sorts them.

A task's input is the same on every attempt, so most errors of a user's code would come back
on each restart: retrying them only makes the user wait (four attempts and their back-offs)
for the cause. A failure arrives with the qualified names of its exception's classes and of
the exceptions it was raised from (``TaskFailed.error_types``); one of them among the
non-recoverable ones fails the job at once, like Flink's ``NonRecoverableError``. The rest (a
lost TaskManager, a lost partition, an I/O error, a timeout, a user's ``ValueError``) keep the
restart strategy, and an input partition that could not be read always does.
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["NON_RECOVERABLE", "non_recoverable_cause"]

NON_RECOVERABLE = frozenset(
    {
        "jobmanager.errors.NonRecoverableError",  # Tidal's own, and the user's subclasses of it
        "pyspark.errors.exceptions.base.AnalysisException",  # a column or table that is not there
        "builtins.TypeError",  # a wrong return type, or a function applied to what it cannot take
        "builtins.AttributeError",
        "builtins.NameError",
        "builtins.ImportError",  # ModuleNotFoundError included: code that cannot be loaded
        "builtins.SyntaxError",
        "builtins.FileNotFoundError",  # a source's file that is gone
    }
)


def non_recoverable_cause(error_types: Iterable[str], configured: Iterable[str] = ()) -> str | None:
    """The first of ``error_types`` that no restart can fix (Tidal's list or ``configured``,
    the option restart-strategy.non-recoverable-exceptions), or None."""
    extra = frozenset(configured)
    return next((t for t in error_types if t in NON_RECOVERABLE or t in extra), None)
