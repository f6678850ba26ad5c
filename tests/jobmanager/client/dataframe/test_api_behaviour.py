"""PySpark's DataFrame calls that Tidal's layer had wrong or lacked give what PySpark gives:
each program runs on the tests' PySpark session and on a Tidal session whose jobs run in that
same session (``one_session_client``: Tidal's planner, its pieces split over two subtasks), the
results compared (rows in any order unless the program orders them). ``EXERCISED`` names the
API each program calls: the surface test (``test_api_surface``) counts them as working.

ROLLUP/CUBE/GROUPING SETS and generators with two outputs (``posexplode``): their Spark SQL, as
Tidal's layer writes it, is checked in PySpark itself, and their end-to-end runs on Tidal."""

from __future__ import annotations

import pytest

from jobmanager.client.dataframe import Window as TidalWindow
from jobmanager.client.dataframe import functions as TF
from tests.jobmanager.client.dataframe.one_session_client import one_session_tidal

pytestmark = pytest.mark.spark

ROWS = [
    (1, "ada", 10, 1.5),
    (2, "bob", None, 2.0),
    (3, None, 10, None),
    (4, "eve", 30, 0.5),
    (5, "ada", 30, 2.0),
]
SCHEMA = "id int, name string, team int, score double"


def _rows(r):
    return [tuple(x) for x in r]


PROGRAMS = {
    "DataFrame.dtypes DataFrame.columns DataFrame.schema": lambda p, F, W: (
        p.dtypes,
        p.columns,
        [f.dataType.simpleString() for f in p.schema.fields],
    ),
    "DataFrame.selectExpr": lambda p, F, W: (
        _rows(p.selectExpr("id + 1 as x", "upper(name)", "id", "score * 2").collect()),
        p.selectExpr("id + 1 as x", "upper(name)", "score * 2").columns,
        _rows(p.selectExpr("*", "id * 2 as y").collect()),
    ),
    "DataFrame.subtract DataFrame.intersect DataFrame.intersectAll DataFrame.exceptAll": (
        lambda p, F, W: (
            sorted(_rows(p.subtract(p.where("id < 3")).collect()), key=repr),
            sorted(_rows(p.intersect(p.where("id < 3")).collect()), key=repr),
            sorted(_rows(p.union(p).intersectAll(p.union(p.where("id < 3"))).collect()), key=repr),
            sorted(_rows(p.union(p).exceptAll(p.where("id < 3")).collect()), key=repr),
        )
    ),
    "DataFrame.describe DataFrame.summary": lambda p, F, W: (
        _rows(p.describe().collect()),
        _rows(p.describe("score").collect()),
        _rows(p.summary().collect()),
        _rows(p.summary("count", "min", "50%").collect()),
        p.summary().columns,
    ),
    "GroupedData.pivot GroupedData.sum GroupedData.count GroupedData.agg": lambda p, F, W: (
        sorted(_rows(p.groupBy("id").pivot("team", [10, 30]).sum("score").collect())),
        p.groupBy("id").pivot("team").sum("score").columns,
        sorted(_rows(p.groupBy("id").pivot("team").sum("score").collect())),
        p.groupBy("id").pivot("team", [10]).agg(F.sum("score"), F.max("id")).columns,
        sorted(
            _rows(p.groupBy("id").pivot("team", [10]).agg(F.sum("score"), F.max("id")).collect())
        ),
        sorted(_rows(p.groupBy("name").pivot("team").count().collect()), key=repr),
    ),
    "functions.first functions.last": lambda p, F, W: (
        p.groupBy("team").agg(F.first("name", ignorenulls=True)).columns,
        sorted(
            _rows(
                p.where("id != 5")
                .groupBy("team")
                .agg(F.first("name", ignorenulls=True), F.last("name", True))
                .collect()
            ),
            key=repr,
        ),
    ),
    "functions.lag functions.lead Window.partitionBy WindowSpec.orderBy": lambda p, F, W: (
        sorted(
            _rows(
                p.withColumn(
                    "l", F.lag("score").over(W.partitionBy("team").orderBy("id"))
                ).collect()
            ),
            key=repr,
        ),
        sorted(
            _rows(
                p.select(
                    "id", F.lead("score", 1).over(W.partitionBy("team").orderBy("id")).alias("ld")
                ).collect()
            ),
            key=repr,
        ),
        sorted(
            _rows(
                p.select(
                    "id", F.lag(F.col("score"), 2, 0.0).over(W.orderBy("id")).alias("l2")
                ).collect()
            )
        ),
    ),
    "DataFrame.unpivot DataFrame.melt": lambda p, F, W: (
        sorted(_rows(p.unpivot("id", ["team", "score"], "var", "val").collect()), key=repr),
        sorted(_rows(p.melt(["id"], ["team", "score"], "var", "val").collect()), key=repr),
    ),
    "DataFrame.na DataFrameNaFunctions.fill DataFrameNaFunctions.drop "
    "DataFrameNaFunctions.replace DataFrame.fillna DataFrame.dropna DataFrame.replace": (
        lambda p, F, W: [
            sorted(_rows(d.collect()), key=repr)
            for d in (
                p.na.fill(0),
                p.na.fill("z"),
                p.fillna({"team": 7, "name": "q"}),
                p.na.fill(1.5),
                p.na.drop(),
                p.na.drop(thresh=3),
                p.dropna("all", subset=["name", "score"]),
                p.na.replace("ada", "x"),
                p.replace([10, 30], [1, 3], "team"),
                p.replace({"ada": "A", "bob": "B"}),
            )
        ]
    ),
    "DataFrame.stat DataFrameStatFunctions.corr DataFrameStatFunctions.cov "
    "DataFrameStatFunctions.approxQuantile DataFrame.corr DataFrame.cov DataFrame.approxQuantile": lambda p, F, W: (
        p.stat.corr("id", "score"),
        p.stat.cov("id", "score"),
        p.corr("id", "team"),
        p.approxQuantile("score", [0.5], 0.0),
        p.stat.approxQuantile(["score", "id"], [0.1, 0.9], 0.0),
    ),
    "DataFrame.crosstab DataFrameStatFunctions.crosstab": lambda p, F, W: (
        p.crosstab("team", "name").columns,
        sorted(_rows(p.stat.crosstab("team", "name").collect()), key=repr),
    ),
    "DataFrame.withColumns DataFrame.withColumnsRenamed DataFrame.transform DataFrame.hint": (
        lambda p, F, W: (
            sorted(_rows(p.withColumns({"a": F.col("id") + 1, "b": F.lit(2)}).collect()), key=repr),
            p.withColumnsRenamed({"id": "pk", "team": "t"}).columns,
            sorted(_rows(p.transform(lambda d, n: d.where(d.id > n), 2).collect())),
            sorted(_rows(p.hint("broadcast").join(p.select("id"), "id").collect()), key=repr),
        )
    ),
    "Column.astype Column.name Column.try_cast Column.isNaN Column.bitwiseAND Column.bitwiseOR "
    "Column.bitwiseXOR": lambda p, F, W: sorted(
        _rows(
            p.select(
                p.id.astype("string"),
                F.col("id").name("n"),
                F.col("name").try_cast("int").alias("t"),
                F.col("score").isNaN().alias("nan"),
                F.col("id").bitwiseAND(6).alias("a"),
                F.col("id").bitwiseOR(6).alias("o"),
                F.col("id").bitwiseXOR(6).alias("x"),
            ).collect()
        ),
        key=repr,
    ),
    "DataFrame.tail DataFrame.sortWithinPartitions": lambda p, F, W: (
        _rows(p.orderBy("id").tail(2)),
        _rows(p.sortWithinPartitions("id").select("id").collect()),
    ),
}


def _same_sampling(p, F, W):
    """Sampling matches PySpark's semantics, not its rows: plausible sizes, disjoint parts,
    their union the whole."""
    whole = sorted(_rows(p.collect()), key=repr)
    parts = [sorted(_rows(part.collect()), key=repr) for part in p.randomSplit([0.5, 0.5], 7)]
    sample = _rows(p.sample(0.5, 3).collect())
    return (
        sorted(parts[0] + parts[1], key=repr) == whole,
        set(parts[0]).isdisjoint(parts[1]),
        set(sample) <= set(whole),
        p.sample(fraction=1.0).count(),
        p.sample(0.0).count(),
    )


PROGRAMS["DataFrame.sample DataFrame.randomSplit"] = _same_sampling

_GROUPING_NAMES = (
    "DataFrame.rollup DataFrame.cube DataFrame.groupingSets functions.grouping_id "
    "functions.posexplode functions.array"
)
EXERCISED = frozenset(name for names in [*PROGRAMS, _GROUPING_NAMES] for name in names.split())


@pytest.fixture(scope="module")
def tidal(spark_session):
    session = one_session_tidal(spark_session)
    yield session
    session.stop()


def test_each_program_gives_pysparks_answer(tidal, spark_session):
    from pyspark.sql import Window
    from pyspark.sql import functions as SF

    wrong = []
    for name, program in PROGRAMS.items():
        expected = program(spark_session.createDataFrame(ROWS, SCHEMA), SF, Window)
        actual = program(tidal.createDataFrame(ROWS, SCHEMA), TF, TidalWindow)
        if actual != expected:
            wrong.append(f"{name}:\n  PySpark: {expected}\n  Tidal:   {actual}")
    assert not wrong, "\n".join(wrong)


GROUPINGS = {
    "rollup": lambda p, F: p.rollup("team", "name").agg(F.count("*").alias("n"), F.sum("score")),
    "cube": lambda p, F: p.cube("team").agg(F.sum("score")),
    "grouping sets": lambda p, F: p.groupingSets([["team"], []], "team").agg(F.sum("score")),
    "grouping_id": lambda p, F: p.cube("team", "name").agg(
        F.grouping_id().alias("g"), F.count("*").alias("n")
    ),
    "posexplode": lambda p, F: p.select("id", F.posexplode(F.array("id", "team"))),
}


@pytest.mark.parametrize("name", list(GROUPINGS))
def test_the_sql_of_groupings_and_generators_is_pysparks_answer(name, tidal, spark_session):
    """Tidal's SQL (its rows inline), run by PySpark itself, gives PySpark's DataFrame's."""
    from pyspark.sql import functions as SF

    expected = GROUPINGS[name](spark_session.createDataFrame(ROWS, SCHEMA), SF)
    ours = GROUPINGS[name](tidal.createDataFrame(ROWS, SCHEMA), TF)
    sql = tidal._query_sql(ours._get_expressions(optimize=False))
    got = spark_session.sql(sql)
    assert got.columns == expected.columns
    assert sorted(_rows(got.collect()), key=repr) == sorted(_rows(expected.collect()), key=repr)


@pytest.mark.parametrize("name", list(GROUPINGS))
def test_groupings_and_generators_on_tidal(name, tidal, spark_session):
    from pyspark.sql import functions as SF

    expected = GROUPINGS[name](spark_session.createDataFrame(ROWS, SCHEMA), SF).collect()
    actual = GROUPINGS[name](tidal.createDataFrame(ROWS, SCHEMA), TF).collect()
    assert sorted(_rows(actual), key=repr) == sorted(_rows(expected), key=repr)
