"""A fuzzing run: the tables written, the cases drawn, both engines asked, the failures shrunk.

``FuzzRun`` holds what a run shares (the tables, PySpark's session, Tidal's client and the
options its jobs run with) and turns cases into outcomes (``run``) and a failing case into its
smallest failing query (``shrunk``). It starts nothing itself: the caller hands it a session
and a client, so a test can give it the suite's own and a script a fresh ``Client("local")``.

Tidal runs with a tiny data volume per task (``CONFIG``), so that even these small tables are
read by several tasks and the plans' exchanges really move rows: at Tidal's defaults every
query would be one chained task, and a planner's cut could never show. For the same reason the
cases take three variants of the join options in turn (``VARIANTS``): tables this small are
otherwise always broadcast, and a shuffled join's hashing never runs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace

from examples.fuzzing.families import SQL_FAMILIES, FuzzCase
from examples.fuzzing.programs import generate_programs
from examples.fuzzing.queries import generate_queries
from examples.fuzzing.runner import (
    DIFFERENT,
    REFUSED,
    SAME,
    SKIPPED,
    Outcome,
    PySparkSide,
    TidalSide,
    Timings,
    alone,
    run_cases,
    verdict,
)
from examples.fuzzing.shrink import shrink
from jobmanager.model.config import (
    ADAPTIVE_BROADCAST_JOIN_STRATEGY,
    AUTO,
    AVG_DATA_VOLUME_PER_TASK,
    BROADCAST_THRESHOLD,
    MAX_SLOTS,
    NONE,
    NUMBER_OF_TASK_SLOTS,
    READ_WHOLE_THRESHOLD,
    RESTART_STRATEGY,
    RUNTIME_ONLY,
    SKEWED_JOIN_STRATEGY,
)

__all__ = ["CONFIG", "VARIANTS", "FuzzRun", "Summary", "draw_cases"]

CONFIG = {
    NUMBER_OF_TASK_SLOTS.key: 2,
    MAX_SLOTS.key: 2,  # one TaskManager, one Spark JVM, on two cores
    AVG_DATA_VOLUME_PER_TASK.key: "4 kb",
    RESTART_STRATEGY.key: "none",  # a wrong plan fails at once, with its cause
}
# Each a way to plan and run the same query; a run's cases take them in turn. With tables this
# small every join is broadcast as planned (``listed``), so the other two keep Tidal from it:
# ``shuffled`` hashes both sides of every join (and cuts skew where it may), ``runtime``
# decides each join from the bytes its sides wrote. Each names every option any of them sets.
_JOIN_OPTIONS = (
    BROADCAST_THRESHOLD.key,
    READ_WHOLE_THRESHOLD.key,
    ADAPTIVE_BROADCAST_JOIN_STRATEGY.key,
    SKEWED_JOIN_STRATEGY.key,
)
VARIANTS = {
    "listed": dict(zip(_JOIN_OPTIONS, ("10 mb", "1 mb", AUTO, "auto"))),
    "shuffled": dict(zip(_JOIN_OPTIONS, ("-1", "-1", NONE, "forced"))),
    "runtime": dict(zip(_JOIN_OPTIONS, ("-1", "-1", RUNTIME_ONLY, "auto"))),
}
PROGRAM_SHARE = 0.2  # of a run's cases, when both SQL and DataFrame families are on


def draw_cases(seed: int, count: int, families: Iterable[str] | None = None) -> list[FuzzCase]:
    """``count`` cases of ``seed``: SQL queries and, for a fifth of them, DataFrame programs
    (either alone if ``families`` names only its kind)."""
    families = tuple(families) if families else None
    wanted_sql = families is None or any(f in SQL_FAMILIES for f in families)
    wanted_programs = families is None or any(f not in SQL_FAMILIES for f in families)
    programs = (
        round(count * PROGRAM_SHARE)
        if wanted_sql and wanted_programs
        else (count if wanted_programs else 0)
    )
    return list(generate_queries(seed, count - programs, families)) + list(
        generate_programs(seed, programs, families)
    )


@dataclass(frozen=True, slots=True)
class Summary:
    """The counts of a run and each side's seconds; ``ratio`` Tidal's over PySpark's."""

    queries: int
    same: int
    refused: int
    different: int
    skipped: int
    tidal_s: float
    pyspark_s: float

    @property
    def ratio(self) -> float | None:
        return round(self.tidal_s / self.pyspark_s, 3) if self.pyspark_s else None

    def to_json(self) -> dict:
        return {
            "queries": self.queries,
            "same": self.same,
            "refused": self.refused,
            "different": self.different,
            "skipped": self.skipped,
            "tidal_s": round(self.tidal_s, 2),
            "pyspark_s": round(self.pyspark_s, 2),
            "ratio": self.ratio,
        }

    @staticmethod
    def of(outcomes: list[Outcome], timings: Timings) -> Summary:
        counts = Counter(o.verdict for o in outcomes)
        return Summary(
            len(outcomes),
            counts[SAME],
            counts[REFUSED],
            counts[DIFFERENT],
            counts[SKIPPED],
            timings.tidal_s,
            timings.pyspark_s,
        )


class FuzzRun:
    """A run's shared state: PySpark's session over the tables, Tidal's client; used as a
    context manager, which stops the DataFrame session its programs ran in."""

    def __init__(
        self,
        session,
        client,
        tables: dict[str, str],
        config: dict | None = None,
        batch_size: int = 20,
    ) -> None:
        self.pyspark = PySparkSide(session, tables)
        self.tidal = TidalSide(client, tables, {**CONFIG, **(config or {})}, VARIANTS)
        self.batch_size = batch_size

    def __enter__(self) -> FuzzRun:
        return self

    def __exit__(self, *exc_info) -> None:
        self.tidal.close()

    def run(
        self, cases: list[FuzzCase], progress=None, variants: list[str] | None = None
    ) -> tuple[list[Outcome], Summary]:
        """The cases' outcomes, each under its variant in ``variants`` or else the variants
        in turn, and the run's summary."""
        outcomes, timings = run_cases(
            cases, self.pyspark, self.tidal, self.batch_size, progress, variants
        )
        return outcomes, Summary.of(outcomes, timings)

    def check(self, case: FuzzCase, variant: str) -> Outcome:
        """One case, alone, under ``variant``: its outcome."""
        try:
            expected = self.pyspark.answer(case)
        except Exception as error:  # noqa: BLE001
            return Outcome(case, SKIPPED, str(error).splitlines()[0][:300], variant=variant)
        return verdict(case, alone(self.tidal, case, variant), expected, variant)

    def shrunk(self, outcome: Outcome, max_checks: int = 60) -> str:
        """The smallest query found that fails as ``outcome`` did (a program as it is)."""
        if outcome.case.is_program:
            return outcome.case.program
        wanted = (outcome.verdict, outcome.why, signature(outcome.detail))

        def fails(sql: str, ordered: bool) -> bool:
            found = self.check(replace(outcome.case, sql=sql, ordered=ordered), outcome.variant)
            return (found.verdict, found.why, signature(found.detail)) == wanted

        return shrink(outcome.case.sql, fails, max_checks)


def signature(detail: str) -> str:
    """What identifies a failure across shrinking: a refusal's words before its first quoted
    or bracketed part (which names the query's own pieces), numbers blurred (ids of Spark's
    objects and of the query's columns); for a difference, nothing."""
    if detail[:3] == "row" or re.match(r"\d+ (rows|columns)", detail):
        return ""
    words = re.split(r"[(\[{'\"`]", detail, maxsplit=1)[0]
    return re.sub(r"\d+", "#", words).strip()[:80]
