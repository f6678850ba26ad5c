"""Running each case in plain PySpark and in Tidal, and classifying it.

- ``same``: Tidal's answer is PySpark's (``examples.compare.sql_difference``: by column
  position; in order only where the case orders its rows totally; doubles to 1e-9 relative,
  decimals exactly);
- ``different``: both answered, differently; the difference says where;
- ``refused``: PySpark answered and Tidal did not: its planner raised (``unsupported`` for an
  ``UnsupportedSqlError``, which names a feature not taken yet; ``planner error`` for any other
  error while planning), or its job failed, hung or crashed (``job failed``);
- ``skipped``: PySpark itself raised, so the case is not valid Spark; not counted.

PySpark runs first, in one local session (``local[2]``) kept for the whole run, over temporary
views of the tables (a program reads them by path). Tidal plans every case the PySpark answered,
then runs the planned ones in batches of ``batch_size`` queries per job (``batch``) on one warm
cluster. A batch that fails is run again one job per query, to tell which query failed; a
difference found in a batch is confirmed by running that query alone, so that a fault of the
batching itself is never reported as the planner's.

Times: ``pyspark_s`` is PySpark's from each query's call until its Arrow answer; ``tidal_s``
Tidal's from planning until the answers are read back, batches included, the confirming runs
of single queries not (they run only for failures).
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

import pyarrow as pa

from examples.compare import sql_difference
from examples.fuzzing.batch import combined_graph
from examples.fuzzing.families import FuzzCase

__all__ = ["Outcome", "PySparkSide", "TidalSide", "alone", "run_cases", "verdict"]

SAME, DIFFERENT, REFUSED, SKIPPED = "same", "different", "refused", "skipped"
UNSUPPORTED, PLANNER_ERROR, JOB_FAILED = "unsupported", "planner error", "job failed"
JOB_TIMEOUT_S = 300.0


@dataclass(frozen=True, slots=True)
class Outcome:
    """A case's verdict; ``detail`` the difference or the error, ``why`` for a refusal one of
    ``unsupported``, ``planner error``, ``job failed``; ``variant`` the options Tidal ran it
    with (``TidalSide.variants``)."""

    case: FuzzCase
    verdict: str
    detail: str = ""
    why: str = ""
    variant: str = ""


class PySparkSide:
    """Plain PySpark's answers, in one session, over temporary views of the tables."""

    def __init__(self, session, tables: Mapping[str, str]) -> None:
        self.session = session
        self.tables = dict(tables)
        for name, path in self.tables.items():
            session.read.parquet(path).createOrReplaceTempView(name)

    def answer(self, case: FuzzCase) -> pa.Table:
        if not case.is_program:
            return self.session.sql(case.sql).toArrow()
        from pyspark.sql import Window, functions

        return _run_program(case.program, self.session, functions, Window, self.tables).toArrow()


class TidalSide:
    """Tidal's answers: each case planned in the client (a program through Tidal's DataFrame
    layer, as ``tidal run`` runs it), the planned jobs run on ``client``'s cluster.

    ``variants`` name sets of options laid over ``config``, each a way of planning and running
    the same query (every join broadcast as listed, every join shuffled, joins decided at run
    time): a case runs under one of them (``variant_of``), so that one run covers them all. A
    variant names every option any variant sets, so the DataFrame session, whose options
    persist, is switched whole."""

    def __init__(
        self,
        client,
        tables: Mapping[str, str],
        config: Mapping[str, Any],
        variants: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        from jobmanager.client.client import _settings

        self.client = client
        self.tables = dict(tables)
        self.variants = {
            name: {**config, **options} for name, options in (variants or {"default": {}}).items()
        }
        self.settings = {
            name: _settings(options, None, ()) for name, options in self.variants.items()
        }
        self._session = None
        self.tasks = 0  # the tasks of the jobs run so far (a chained task's members once)

    def variant_of(self, index: int) -> str:
        """The variant the ``index``-th case of a run runs under: each in turn."""
        names = list(self.variants)
        return names[index % len(names)]

    def plan(self, case: FuzzCase, variant: str):
        """The case's ``(PlannedQuery, QueryOutput)``; raises what the planner raises."""
        from jobmanager.client.query import plan_query

        if not case.is_program:
            return plan_query(case.sql, self.settings[variant], tables=self.tables)
        from jobmanager.client.dataframe import Window, functions

        session = self.dataframe_session()
        session.runner.configure(self.variants[variant])
        frame = _run_program(case.program, session, functions, Window, self.tables)
        sql = session._query_sql(frame._get_expressions(optimize=False))
        planned, where, _ = session.runner.plan(sql, "toArrow")
        return planned, where

    def dataframe_session(self):
        if self._session is None:
            from jobmanager.client.dataframe import SparkSession

            self._session = SparkSession.builder.getOrCreate()
            self._session.runner._client = self.client
        return self._session

    def close(self) -> None:
        """Stop the DataFrame session this side made: it is the process's one session, and
        a later ``getOrCreate`` would otherwise get it with the fuzzer's options (4 KB a
        task) still set."""
        if self._session is not None:
            self._session.stop()
            self._session = None

    def run(self, plans: Sequence[tuple], variant: str) -> list[pa.Table] | str:
        """Run the planned queries as one job: their answers, or why the job failed."""
        graphs = [planned.graph for planned, _ in plans]
        graph = graphs[0] if len(graphs) == 1 else combined_graph(graphs)
        output = plans[0][1] if len(plans) == 1 else None
        try:
            handle = self.client._submit(graph, self.settings[variant], output)
        except Exception as error:  # noqa: BLE001 - any refusal of the job is the verdict
            return f"{type(error).__name__}: {error}"
        try:
            result = handle.wait(timeout=JOB_TIMEOUT_S)
            if not result.succeeded:
                if not result.status.is_terminal:
                    handle.cancel("the fuzzer's time limit")
                    return f"no end within {JOB_TIMEOUT_S:.0f} s ({result.status})"
                return f"job {result.status}: {_first_line(result.cause)}"
            self.tasks += sum(
                report.tasks for report in {id(r): r for r in result.vertices.values()}.values()
            )
            return [replace(result, output=where).to_arrow() for _, where in plans]
        except Exception as error:  # noqa: BLE001
            return f"{type(error).__name__}: {error}"
        finally:
            try:
                handle.release()
            except Exception:  # noqa: BLE001 - it expires anyway
                pass


def _run_program(program: str, spark, functions, window, tables: Mapping[str, str]):
    """The DataFrame a program binds to ``result``, its ``spark``, ``F``, ``Window`` and
    ``paths`` given."""
    scope = {"spark": spark, "F": functions, "Window": window, "paths": dict(tables)}
    exec(compile(program, "<fuzz program>", "exec"), scope)  # noqa: S102 - generated here
    return scope["result"]


@dataclass(slots=True)
class Timings:
    tidal_s: float = 0.0
    pyspark_s: float = 0.0


def run_cases(
    cases: Sequence[FuzzCase],
    pyspark: PySparkSide,
    tidal: TidalSide,
    batch_size: int = 20,
    progress: Callable[[str], None] | None = None,
    variants: Sequence[str] | None = None,
) -> tuple[list[Outcome], Timings]:
    """Every case's outcome, in the order given, and the two sides' total seconds; each case
    under its variant in ``variants``, else under ``tidal.variant_of`` its index."""
    variant_of = variants.__getitem__ if variants is not None else tidal.variant_of
    say = progress or (lambda line: None)
    timings = Timings()
    outcomes: dict[int, Outcome] = {}
    expected: dict[int, pa.Table] = {}
    for index, case in enumerate(cases):
        start = time.perf_counter()
        try:
            expected[index] = pyspark.answer(case)
        except Exception as error:  # noqa: BLE001 - PySpark's refusal skips the case
            outcomes[index] = Outcome(case, SKIPPED, _first_line(error))
        timings.pyspark_s += time.perf_counter() - start
    planned = {}
    start = time.perf_counter()
    for index in expected:
        variant = variant_of(index)
        try:
            planned[index] = tidal.plan(cases[index], variant)
        except Exception as error:  # noqa: BLE001 - every refusal is a verdict
            outcomes[index] = _refusal(cases[index], error, variant)
    timings.tidal_s += time.perf_counter() - start
    for variant in tidal.variants:
        order = [i for i in planned if variant_of(i) == variant]
        for first in range(0, len(order), batch_size):
            chunk = order[first : first + batch_size]
            start = time.perf_counter()
            answers = tidal.run([planned[i] for i in chunk], variant)
            timings.tidal_s += time.perf_counter() - start
            say(
                f"{variant} batch of {len(chunk)}: "
                f"{'failed' if isinstance(answers, str) else 'ran'} "
                f"({time.perf_counter() - start:.1f} s)"
            )
            for position, index in enumerate(chunk):
                case = cases[index]
                answer = answers if isinstance(answers, str) else answers[position]
                if len(chunk) > 1 and (
                    isinstance(answer, str) or _differs(answer, expected[index], case)
                ):
                    answer = alone(tidal, case, variant)  # which failed; a difference confirmed
                outcomes[index] = verdict(case, answer, expected[index], variant)
    return [outcomes[i] for i in range(len(cases))], timings


def alone(tidal: TidalSide, case: FuzzCase, variant: str) -> pa.Table | str | Exception:
    """The case's answer from a job of its own (or its planner's error, or why its job
    failed)."""
    try:
        plan = tidal.plan(case, variant)  # planned afresh: a result sink is written once
    except Exception as error:  # noqa: BLE001
        return error
    answers = tidal.run([plan], variant)
    return answers if isinstance(answers, str) else answers[0]


def _differs(answer: pa.Table, expected: pa.Table, case: FuzzCase) -> bool:
    return sql_difference(answer, expected, case.ordered) is not None


def verdict(case: FuzzCase, answer, expected: pa.Table, variant: str) -> Outcome:
    """The outcome of Tidal's ``answer`` (a table, an error, or why its job failed) against
    PySpark's."""
    if isinstance(answer, Exception):
        return _refusal(case, answer, variant)
    if isinstance(answer, str):
        return Outcome(case, REFUSED, answer, JOB_FAILED, variant)
    difference = sql_difference(answer, expected, case.ordered)
    if difference is None:
        return Outcome(case, SAME, variant=variant)
    return Outcome(case, DIFFERENT, difference, variant=variant)


def _refusal(case: FuzzCase, error: Exception, variant: str) -> Outcome:
    from jobmanager.errors import SqlError, UnsupportedSqlError

    if isinstance(error, UnsupportedSqlError):
        return Outcome(case, REFUSED, _first_line(error), UNSUPPORTED, variant)
    if isinstance(error, SqlError):
        return Outcome(
            case, REFUSED, f"{type(error).__name__}: {_first_line(error)}", PLANNER_ERROR, variant
        )
    where = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    at = f" at {where.filename.rsplit('/', 1)[-1]}:{where.lineno}" if where else ""
    return Outcome(
        case, REFUSED, f"{type(error).__name__}{at}: {_first_line(error)}", PLANNER_ERROR, variant
    )


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0][:500] if text else type(error).__name__
