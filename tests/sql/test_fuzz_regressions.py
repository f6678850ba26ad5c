"""Every wrong answer and crash the fuzzer found (``benchmarks/fuzz.py``), shrunk, kept: each
query against PySpark's answer over the fuzzer's tables of the seed it was found with.

The queries of a seed run as one batch (``examples.fuzzing.runner``: one Tidal job for all of
them, each confirmed alone where it fails) in the suite's one SparkSession and on its one Ray
cluster; each then has its own test, named after what went wrong, so a fix turns its test
green alone. A query that only names a feature the planner refuses on purpose
(``UnsupportedSqlError``) is not kept here: ``tests/sql/test_fuzz.py``'s fixed seed covers
those families.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from examples.compare import query_is_ordered
from examples.fuzzing.families import FuzzCase
from examples.fuzzing.fuzzer import VARIANTS
from examples.fuzzing.shrink import total_order
from examples.fuzzing.tables import write_tables


@dataclass(frozen=True, slots=True)
class Regression:
    """A shrunk query that failed: what failed, the seed of the tables it failed over, the
    variant of Tidal's options it failed under (``examples.fuzzing.fuzzer.VARIANTS``)."""

    name: str
    seed: int
    variant: str
    family: str
    sql: str

    def case(self) -> FuzzCase:
        return FuzzCase(
            self.name,
            self.family,
            (self.family,),
            sql=self.sql,
            ordered=bool(total_order(self.sql)),
        )


REGRESSIONS = (
    Regression(
        "an ORDER BY naming an ordered window's alias: the stage's SQL sorts by the window "
        "call itself, which Spark refuses (UNSUPPORTED_EXPR_FOR_OPERATOR)", 2, "listed",
        "windows",
        "SELECT ROW_NUMBER() OVER (ORDER BY c.id ASC NULLS LAST, a.id DESC NULLS FIRST, a.id ASC "
        "NULLS LAST, c.id ASC NULLS LAST) AS c0 FROM t2 AS a INNER JOIN t2 AS c ON a.s = c.s "
        "ORDER BY c0 ASC NULLS LAST"),
    Regression(
        "the same, the window numbering one table", 5, "listed", "windows",
        "SELECT ROW_NUMBER() OVER (ORDER BY a.id) AS c0 FROM t5 AS a ORDER BY c0"),
    Regression(
        "the same, a rank beside a column, ordered by the column first", 5, "listed", "windows",
        "SELECT a.id AS c0, RANK() OVER (ORDER BY a.k) AS c1 FROM t5 AS a ORDER BY c0, c1"),
    Regression(
        "INTERSECT of decimal(12,2) and decimal(11,0): each side hashed as its own type, so "
        "282.00 and 282 meet in no task (1 row, expected 2)", 5, "listed", "set_operations",
        "SELECT a.d AS c0 FROM t1 AS a INTERSECT SELECT ROUND(c.d, 0) AS c0 FROM t1 AS c"),
    Regression(
        "a shuffled join of decimal(12,2) with decimal(11,0): the same hashing by each side's "
        "own type (0 rows, expected 1)", 5, "shuffled", "joins",
        "SELECT a.id AS c0, c.id AS c1 FROM t1 AS a INNER JOIN t1 AS c ON a.d = ROUND(c.d, 0)"),
    Regression(
        "a row number ordered by its alias after a semi join, joins decided at run time", 3,
        "runtime", "windows",
        "SELECT ROW_NUMBER() OVER (ORDER BY a.k ASC, a.id DESC NULLS FIRST) AS c1 FROM t3 AS a "
        "LEFT SEMI JOIN t1 AS c ON a.d = c.d ORDER BY c1 DESC"),
    Regression(
        "a rank ordered by its alias after a right join, joins decided at run time", 3,
        "runtime", "windows",
        "SELECT RANK() OVER (ORDER BY a.d ASC NULLS LAST, c.dt ASC) AS c1 FROM t1 AS a RIGHT JOIN "
        "t1 AS c ON a.s = c.s ORDER BY c1 ASC NULLS LAST"),
    Regression(
        "a scalar subquery in HAVING correlated to a CUBE's key: the join read the key's "
        "column from before the expand, which the aggregate no longer gives (Spark: "
        "UNRESOLVED_COLUMN)", 2026, "runtime", "grouping_sets",
        "SELECT a.f AS c1 FROM t1 AS a GROUP BY CUBE (a.s, a.f) HAVING CASE WHEN "
        "COUNT(DISTINCT a.x * a.k2) >= (SELECT MIN(e.id) FROM t2 AS e WHERE e.s = a.s) THEN 1 "
        "ELSE 0 END = 1"),
    Regression(
        "the same under OR, the CUBE's key an expression's neighbour", 2026, "shuffled",
        "grouping_sets",
        "SELECT a.x AS c1 FROM t2 AS a GROUP BY CUBE (a.id % 3, a.x) HAVING MAX(a.x + a.k) IS "
        "NULL OR COUNT(*) > (SELECT MAX(c.x) FROM t4 AS c WHERE c.x = a.x) ORDER BY c1 ASC "
        "LIMIT 4"),
    Regression(
        "the same with one grouping set and a COUNT subquery", 2026, "runtime", "grouping_sets",
        "SELECT a.k AS c1 FROM t3 AS a GROUP BY GROUPING SETS ((a.b, a.k)) HAVING MIN(a.id) > "
        "(SELECT COUNT(c.k2) FROM t1 AS c WHERE c.k = a.k)"),
    Regression(
        "the same after a join, joins shuffled: the correlation matched every set's rows by "
        "the key before the expand (258 rows, expected 21)", 2026, "shuffled", "grouping_sets",
        "SELECT c.k AS c1 FROM t2 AS a INNER JOIN t2 AS c ON a.k = c.k GROUP BY CUBE (c.k, c.k2) "
        "HAVING COUNT(ABS(c.id)) >= (SELECT MAX(e.k2) FROM t2 AS e WHERE e.k = c.k)"),
    Regression(
        "SUM(DISTINCT 6): the partial aggregate grouped by its constant argument, GROUP BY 6, "
        "which Spark reads as the sixth column (GROUP_BY_POS_OUT_OF_RANGE)", 2026, "runtime",
        "aggregates",
        "SELECT SUM(DISTINCT 6) AS c2 FROM t1 AS a GROUP BY a.ts, a.dt ORDER BY c2 ASC NULLS LAST "
        "LIMIT 4"),
)  # fmt: skip


def test_each_regression_is_a_determined_spark_query():
    for regression in REGRESSIONS:
        assert total_order(regression.sql) is not None, regression.name
        if query_is_ordered(regression.sql):
            assert total_order(regression.sql) is True, regression.name
    assert len({r.name for r in REGRESSIONS}) == len(REGRESSIONS)
    assert {r.variant for r in REGRESSIONS} <= set(VARIANTS)


@pytest.fixture(scope="module")
def outcomes(ray_cluster, spark_session, tmp_path_factory) -> dict[str, object]:
    """Each regression's outcome, its seed's queries run as one batch."""
    from jobmanager import Client

    from examples.fuzzing.fuzzer import FuzzRun

    found = {}
    for seed in sorted({r.seed for r in REGRESSIONS}):
        tables = write_tables(tmp_path_factory.mktemp(f"fuzz-tables-{seed}"), seed)
        chosen = [r for r in REGRESSIONS if r.seed == seed]
        with FuzzRun(spark_session, Client(), tables) as run:
            results, _ = run.run([r.case() for r in chosen], variants=[r.variant for r in chosen])
        found.update({r.name: outcome for r, outcome in zip(chosen, results)})
    return found


@pytest.mark.runtime
@pytest.mark.spark
@pytest.mark.parametrize("regression", REGRESSIONS, ids=lambda r: r.name[:60])
def test_tidal_answers_the_shrunk_query_as_pyspark_does(regression, outcomes):
    outcome = outcomes[regression.name]
    assert outcome.verdict == "same", f"{outcome.verdict} {outcome.why}: {outcome.detail}"
