"""The rest of PySpark's DataFrame, Column, GroupedData, Window, reader and writer, session and
catalogue calls give what PySpark gives: each program runs on the tests' PySpark session and on
a Tidal session whose jobs run in it (``one_session_client``), answers compared. ``EXERCISED``
names what the programs call (the surface test counts them as working)."""

from __future__ import annotations

import pytest

from jobmanager.client.dataframe import Window as TidalWindow
from jobmanager.client.dataframe import functions as TF
from tests.jobmanager.client.dataframe.one_session_client import one_session_tidal
from tests.jobmanager.client.dataframe.test_api_behaviour import ROWS, SCHEMA

pytestmark = pytest.mark.spark


def _rows(d):
    return sorted((tuple(r) for r in d.collect()), key=repr)


def _ordered(d):
    return [tuple(r) for r in d.collect()]


PROGRAMS = {
    "Column.asc Column.desc Column.asc_nulls_first Column.asc_nulls_last Column.desc_nulls_first "
    "DataFrame.sort functions.asc functions.asc_nulls_first functions.asc_nulls_last "
    "functions.desc_nulls_first functions.desc_nulls_last": lambda p, F, W: [
        _ordered(p.select("id", "team", "name").sort(*keys))
        for keys in (
            [F.col("team").asc(), F.col("id").desc()],
            [F.col("team").asc_nulls_last(), "id"],
            [F.col("name").desc_nulls_first(), "id"],
            [F.col("team").desc(), F.col("id").asc()],
            [F.col("name").asc_nulls_first(), "id"],
            [F.asc("team"), F.desc("id")],
            [F.asc_nulls_last("name"), "id"],
            [F.asc_nulls_first("team"), "id"],
            [F.desc_nulls_first("team"), "id"],
            [F.desc_nulls_last("name"), "id"],
        )
    ],
    "Column.between Column.cast Column.contains Column.endswith Column.startswith "
    "Column.eqNullSafe Column.getField Column.getItem Column.ilike Column.like Column.rlike "
    "Column.isNotNull Column.isNull Column.isin Column.otherwise Column.when Column.substr "
    "Column.transform functions.when": lambda p, F, W: _rows(
        p.select(
            "id",
            F.col("score").between(1, 2).alias("b"),
            F.col("id").cast("string").alias("c"),
            F.col("name").contains("d").alias("k"),
            F.col("name").endswith("e").alias("e"),
            F.col("name").startswith("a").alias("s"),
            F.col("team").eqNullSafe(10).alias("q"),
            F.struct("id", "name").getField("name").alias("f"),
            F.array("id", "team").getItem(1).alias("i"),
            F.col("name").ilike("A%").alias("il"),
            F.col("name").like("%o%").alias("l"),
            F.col("name").rlike("^[ae]").alias("r"),
            F.col("team").isNotNull().alias("nn"),
            F.col("name").isNull().alias("n"),
            F.col("id").isin(1, 3, 5).alias("in"),
            F.when(F.col("id") > 3, "hi").when(F.col("id") > 1, "mid").otherwise("lo").alias("w"),
            F.col("name").substr(2, 2).alias("sub"),
            F.col("id").transform(lambda c: c * 3).alias("t"),
        )
    ),
    "DataFrame.alias DataFrame.filter DataFrame.drop DataFrame.drop_duplicates DataFrame.groupby "
    "DataFrame.unionAll DataFrame.withColumnRenamed DataFrame.toDF DataFrame.to "
    "GroupedData.avg GroupedData.max GroupedData.mean GroupedData.min": lambda p, F, W: (
        _rows(
            p.alias("a")
            .join(p.alias("b"), F.col("a.id") == F.col("b.team") / 10)
            .select("a.id", "b.name")
        ),
        _rows(p.filter(F.col("team") > 10).drop("score", "name")),
        _rows(p.drop_duplicates(["name"]).select("name")),
        _rows(p.unionAll(p.where("id = 1"))),
        p.withColumnRenamed("id", "key").columns,
        p.toDF("a", "b", "c", "d").columns,
        _rows(p.select("id", "name").to(p.select("name", "id").schema)),
        _rows(p.groupby("team").avg("score")),
        _rows(p.groupBy("team").max("id", "score")),
        _rows(p.groupBy("name").mean("id")),
        _rows(p.groupBy("team").min()),
    ),
    "DataFrame.cache DataFrame.persist DataFrame.unpersist DataFrame.checkpoint "
    "DataFrame.localCheckpoint DataFrame.coalesce DataFrame.repartition "
    "DataFrame.repartitionByRange DataFrame.head DataFrame.isLocal DataFrame.isStreaming "
    "DataFrame.toArrow DataFrame.toLocalIterator DataFrame.sparkSession functions.broadcast": (
        lambda p, F, W: (
            _rows(p.cache()),
            _rows(p.persist().unpersist()),
            _rows(p.checkpoint()),
            _rows(p.localCheckpoint()),
            _rows(p.coalesce(1)),
            _rows(p.repartition(3, "team")),
            _rows(p.repartitionByRange(2, "id")),
            [tuple(r) for r in p.orderBy("id").head(2)],
            tuple(p.orderBy("id").head()),
            p.isStreaming,
            sorted(p.toArrow().to_pylist(), key=repr),
            sorted((tuple(r) for r in p.toLocalIterator()), key=repr),
            p.sparkSession is not None,
            _rows(p.join(F.broadcast(p.select("id")), "id")),
        )
    ),
    "Window.orderBy Window.rowsBetween Window.rangeBetween Window.currentRow "
    "Window.unboundedPreceding Window.unboundedFollowing WindowSpec.partitionBy "
    "WindowSpec.rowsBetween WindowSpec.rangeBetween": lambda p, F, W: _rows(
        p.select(
            "id",
            F.sum("id")
            .over(W.orderBy("id").rowsBetween(W.unboundedPreceding, W.currentRow))
            .alias("a"),
            F.max("id").over(W.orderBy("id").partitionBy("team")).alias("b"),
            F.sum("id").over(W.partitionBy("team").orderBy("id").rowsBetween(-1, 1)).alias("c"),
            F.count("id")
            .over(W.orderBy("id").rangeBetween(W.currentRow, W.unboundedFollowing))
            .alias("d"),
            F.sum("id").over(W.orderBy("id").partitionBy("name").rangeBetween(-2, 0)).alias("e"),
            F.first_value(F.col("name")).over(W.partitionBy("team").orderBy("id")).alias("f"),
            F.last_value(F.col("name"))
            .over(
                W.partitionBy("team")
                .orderBy("id")
                .rowsBetween(W.unboundedPreceding, W.unboundedFollowing)
            )
            .alias("g"),
        )
    ),
    "DataFrame.createOrReplaceTempView DataFrame.createTempView DataFrame.registerTempTable "
    "SparkSession.sql SparkSession.table DataFrameReader.table SparkSession.range "
    "SparkSession.version SparkSession.catalog Catalog.tableExists Catalog.listTables "
    "Catalog.dropTempView Catalog.currentDatabase Catalog.currentCatalog Catalog.listCatalogs "
    "Catalog.listDatabases Catalog.databaseExists Catalog.getDatabase Catalog.getTable "
    "Catalog.listColumns Catalog.setCurrentCatalog Catalog.setCurrentDatabase "
    "Catalog.cacheTable Catalog.uncacheTable Catalog.clearCache": lambda p, F, W: _views(p, F, W),
    "DataFrameStatFunctions.freqItems DataFrame.freqItems DataFrame.sampleBy "
    "DataFrameStatFunctions.sampleBy": lambda p, F, W: (
        [sorted(x, key=repr) for x in p.freqItems(["team"], 0.4).collect()[0]],
        [sorted(x, key=repr) for x in p.stat.freqItems(["name"]).collect()[0]],
        set(_rows(p.sampleBy("team", {10: 1.0, 30: 0.0}, 1))) <= set(_rows(p)),
        set(_rows(p.stat.sampleBy("team", {10: 0.5}, 1))) <= set(_rows(p)),
    ),
    "DataFrame.explain DataFrame.printSchema SparkSession.Builder SparkSession.active "
    "SparkSession.getActiveSession SparkSession.udf functions.raise_error": (
        lambda p, F, W: _session_and_printing(p, F)
    ),
}


def _session_and_printing(p, F):
    import contextlib
    import io

    session, kind = p.sparkSession, type(p.sparkSession)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        p.printSchema()
    with contextlib.redirect_stdout(io.StringIO()):  # each engine's own plan
        explained = p.explain()
    try:
        p.select(F.raise_error(F.lit("no"))).collect()
        raised = False
    except Exception:  # noqa: BLE001 - PySpark's and Tidal's errors differ in kind
        raised = True
    return (
        printed.getvalue(),
        explained,
        raised,
        isinstance(kind.builder, kind.Builder),
        kind.active() is session,
        kind.getActiveSession() is session,
        session.udf is not None,
    )


def _views(p, F, W):
    session = p.sparkSession
    p.createOrReplaceTempView("people_v")
    p.where("id > 2").createTempView("people_w")
    p.where("id < 2").registerTempTable("people_x")
    answer = (
        _rows(session.sql("SELECT name, COUNT(*) FROM people_v GROUP BY name")),
        _rows(session.table("people_w")),
        _rows(session.read.table("people_x")),
        _rows(session.range(3)),
        _rows(session.range(1, 7, 2)),
        bool(session.version),
        session.catalog.tableExists("people_v"),
        {"people_v", "people_w"} <= {t.name for t in session.catalog.listTables()},
        session.catalog.currentDatabase(),
        session.catalog.currentCatalog(),
        _catalogue(session.catalog),
    )
    for name in ("people_v", "people_w", "people_x"):
        session.catalog.dropTempView(name)
    return answer + (session.catalog.tableExists("people_v"),)


def _catalogue(catalog):
    catalog.setCurrentCatalog("spark_catalog")
    catalog.setCurrentDatabase("default")
    catalog.cacheTable("people_v")
    catalog.uncacheTable("people_v")
    catalog.clearCache()
    table = catalog.getTable("people_v")
    return (
        [c.name for c in catalog.listCatalogs()],
        [d.name for d in catalog.listDatabases()],
        catalog.databaseExists("default"),
        catalog.databaseExists("nope"),
        catalog.getDatabase("default").name,
        (table.name, table.tableType, table.isTemporary),
        [(c.name, c.dataType, c.nullable) for c in catalog.listColumns("people_v")],
    )


WRITES = (
    "DataFrame.write DataFrameWriter.mode DataFrameWriter.option DataFrameWriter.options "
    "DataFrameWriter.parquet DataFrameWriter.format DataFrameWriter.save DataFrameWriter.csv "
    "DataFrameWriter.partitionBy DataFrameReader.format DataFrameReader.options"
)
EXERCISED = frozenset(name for names in [*PROGRAMS, WRITES] for name in names.split())


@pytest.fixture(scope="module")
def tidal(spark_session):
    session = one_session_tidal(spark_session)
    yield session
    session.stop()


def test_each_program_gives_pysparks_answer(tidal, spark_session, tmp_path):
    from pyspark.sql import Window
    from pyspark.sql import functions as SF

    spark_session.sparkContext.setCheckpointDir(str(tmp_path / "checkpoints"))
    wrong = []
    for name, program in PROGRAMS.items():
        expected = program(spark_session.createDataFrame(ROWS, SCHEMA), SF, Window)
        actual = program(tidal.createDataFrame(ROWS, SCHEMA), TF, TidalWindow)
        if actual != expected:
            wrong.append(f"{name}:\n  PySpark: {expected}\n  Tidal:   {actual}")
    assert not wrong, "\n".join(wrong)


def test_the_writers_calls_reach_the_jobs_sink(tidal, tmp_path):
    """The one-session harness does not write a sink's files, so the writer's calls are checked
    where they land: the sink of the job each write submits (path, format, header, mode,
    partitioning), which Tidal's sink tests write as Spark would."""
    from jobmanager.model.operators import ParquetSink

    p = tidal.createDataFrame(ROWS, SCHEMA)
    writes = [
        lambda: p.write.mode("overwrite").option("compression", "snappy").parquet(f"{tmp_path}/a"),
        lambda: p.write.format("csv").options(header=True).mode("append").save(f"{tmp_path}/b"),
        lambda: p.write.csv(f"{tmp_path}/c", header=True, mode="ignore"),
        lambda: p.write.partitionBy("team").mode("overwrite").parquet(f"{tmp_path}/d"),
    ]
    sinks = []
    for write in writes:
        write()
        graph = tidal.runner._client.graphs[-1]
        sinks.append(
            next(v.operator for v in graph.vertices if isinstance(v.operator, ParquetSink))
        )
    got = [(s.path, s.format, s.csv_header, s.mode, s.partition_by) for s in sinks]
    assert got == [
        (f"{tmp_path}/a", "parquet", False, "overwrite", ()),
        (f"{tmp_path}/b", "csv", True, "append", ()),
        (f"{tmp_path}/c", "csv", True, "ignore", ()),
        (f"{tmp_path}/d", "parquet", False, "overwrite", ("team",)),
    ]
