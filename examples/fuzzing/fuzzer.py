"""A fuzzing run: the tables written, the cases drawn, both engines asked, the failures shrunk.

``FuzzRun`` holds what a run shares (the tables, PySpark's session, Tidal's client and the
options its jobs run with) and turns cases into outcomes (``run``) and a failing case into its
smallest failing query (``shrunk``). It starts nothing itself: the caller hands it a session
and a client, so a test can give it the suite's own and a script a fresh ``Client("local")``.

Tidal runs with a tiny data volume per task (``CONFIG``), so that even these small tables are
read by several tasks and the plans' exchanges really move rows: at Tidal's defaults every
query would be one chained task, and a planner's cut could never show.
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
    _alone,
    _verdict,
    run_cases,
)
from examples.fuzzing.shrink import shrink

__all__ = ["CONFIG", "FuzzRun", "Summary", "draw_cases"]

CONFIG = {
    "taskmanager.numberOfTaskSlots": 2,
    "slotmanager.number-of-slots.max": 2,  # one TaskManager, one Spark JVM, on two cores
    "execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task": "4 kb",
    "restart-strategy.type": "none",  # a wrong plan fails at once, with its cause
}
PROGRAM_SHARE = 0.2  # of a run's cases, when both SQL and DataFrame families are on


def draw_cases(seed: int, count: int, families: Iterable[str] | None = None) -> list[FuzzCase]:
    """``count`` cases of ``seed``: SQL queries and, for a fifth of them, DataFrame programs
    (either alone if ``families`` names only its kind)."""
    families = tuple(families) if families else None
    wanted_sql = families is None or any(f in SQL_FAMILIES for f in families)
    wanted_programs = families is None or any(f not in SQL_FAMILIES for f in families)
    programs = round(count * PROGRAM_SHARE) if wanted_sql and wanted_programs else (
        count if wanted_programs else 0)  # fmt: skip
    return (list(generate_queries(seed, count - programs, families))
            + list(generate_programs(seed, programs, families)))  # fmt: skip


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
        return {"queries": self.queries, "same": self.same, "refused": self.refused,
                "different": self.different, "skipped": self.skipped,
                "tidal_s": round(self.tidal_s, 2), "pyspark_s": round(self.pyspark_s, 2),
                "ratio": self.ratio}  # fmt: skip

    @staticmethod
    def of(outcomes: list[Outcome], timings: Timings) -> Summary:
        counts = Counter(o.verdict for o in outcomes)
        return Summary(len(outcomes), counts[SAME], counts[REFUSED], counts[DIFFERENT],
                       counts[SKIPPED], timings.tidal_s, timings.pyspark_s)  # fmt: skip


class FuzzRun:
    """A run's shared state: PySpark's session over the tables, Tidal's client."""

    def __init__(self, session, client, tables: dict[str, str], config: dict | None = None,
                 batch_size: int = 20) -> None:  # fmt: skip
        self.pyspark = PySparkSide(session, tables)
        self.tidal = TidalSide(client, tables, {**CONFIG, **(config or {})})
        self.batch_size = batch_size

    def run(self, cases: list[FuzzCase], progress=None) -> tuple[list[Outcome], Summary]:
        outcomes, timings = run_cases(cases, self.pyspark, self.tidal, self.batch_size, progress)
        return outcomes, Summary.of(outcomes, timings)

    def check(self, case: FuzzCase) -> Outcome:
        """One case, alone: its outcome."""
        try:
            expected = self.pyspark.answer(case)
        except Exception as error:  # noqa: BLE001
            return Outcome(case, SKIPPED, str(error).splitlines()[0][:300])
        return _verdict(case, _alone(self.tidal, case), expected)

    def shrunk(self, outcome: Outcome, max_checks: int = 60) -> str:
        """The smallest query found that fails as ``outcome`` did (a program as it is)."""
        if outcome.case.is_program:
            return outcome.case.program
        wanted = (outcome.verdict, outcome.why, signature(outcome.detail))

        def fails(sql: str, ordered: bool) -> bool:
            found = self.check(replace(outcome.case, sql=sql, ordered=ordered))
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
