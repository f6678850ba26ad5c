"""PySpark tasks: inputs reach Spark as Parquet, the result comes back as Arrow, and a cancel
interrupts the running Spark job. One SparkSession serves every test here (the
``spark_provider`` fixture); select these tests with ``-m spark``."""

from __future__ import annotations

import dataclasses
import threading
import time

import pyarrow as pa
import pytest

from jobmanager.messages.events import TaskCanceled, TaskFailed, TaskFinished
from jobmanager.model.operators import arrow, spark
from shuffle import IndexRange, PartitionId, read_range
from taskmanager.cancellation import CancelToken
from taskmanager.failures import MAX_ERROR_CHARS
from taskmanager.runner import run_task
from tests.taskmanager.harness import DictBlobs, descriptor, environment, gate, output, tdd

pytestmark = pytest.mark.spark

ORDERS = pa.table(
    {
        "order": list(range(40)),
        "customer": [i % 7 for i in range(40)],
        "amount": [float(i) * 1.5 for i in range(40)],
    }
)
CUSTOMERS = pa.table(
    {
        "customer": list(range(6)),  # customer 6 has orders but no row here: an inner join drops it
        "name": [f"c{i}" for i in range(6)],
    }
)


def orders() -> pa.Table:
    return ORDERS


def customers() -> pa.Table:
    return CUSTOMERS


def join_names(orders_frame, customers_frame):
    return orders_frame.join(customers_frame, "customer").select("order", "name", "amount")


def endless():
    from pyspark.sql import SparkSession

    return SparkSession.active().range(0, 10**13, numPartitions=2).selectExpr("sum(id * id) AS s")


def not_a_frame(*frames):
    return 42


def select_missing():
    from pyspark.sql import SparkSession

    return SparkSession.active().range(3).select("no_such_column")


def rows(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda row: row["order"])


def test_a_pyspark_task_joins_its_two_inputs(tmp_path, spark_provider):
    blobs = DictBlobs()
    env, _ = environment(tmp_path / "tm", blobs, spark=spark_provider)
    for name, make in (("orders", orders), ("customers", customers)):
        producer = tdd(
            name,
            blobs.code(arrow(make)),
            outputs=[output(f"{name}->join", 3, "hash", ("customer",))],
        )
        assert isinstance(run_task(producer, env, CancelToken()), TaskFinished)
    inputs = [
        gate(f"{name}->join", [descriptor(env, f"{name}->join", 0, 3)], [((0, 0), (0, 2))])
        for name in ("orders", "customers")
    ]
    consumer = tdd(
        "join",
        blobs.code(spark(join_names)),
        inputs=inputs,
        outputs=[output("join->sink", 1, "forward")],
    )

    finished = run_task(consumer, env, CancelToken())

    assert isinstance(finished, TaskFinished), getattr(finished, "error", finished)
    joined = read_range(
        env.registry.path_for(PartitionId("join->sink", 0)),
        PartitionId("join->sink", 0),
        IndexRange(0, 0),
    )
    names = dict(zip(CUSTOMERS["customer"].to_pylist(), CUSTOMERS["name"].to_pylist(), strict=True))
    expected = [
        {"order": o["order"], "name": names[o["customer"]], "amount": o["amount"]}
        for o in ORDERS.to_pylist()
        if o["customer"] in names
    ]
    assert rows(joined) == expected
    assert finished.metrics.rows_in == ORDERS.num_rows + CUSTOMERS.num_rows
    assert finished.metrics.rows_out == len(expected)
    assert list((env.shuffle.root / ".tasks").glob("*")) == []
    phases = dict(finished.metrics.phases)  # where the time went, adding up to the duration
    assert {"read_input", "spark_input", "spark_plan", "spark_run", "write_output"} <= set(phases)
    assert phases["spark_run"] > 0
    assert abs(sum(phases.values()) - finished.metrics.duration_ms) <= max(
        2, 0.05 * finished.metrics.duration_ms
    )


def shuffle_shape(frame):
    """How Spark runs a shuffle in a task: partitions after it, and whether adaptive execution
    re-planned the query (its plan then starts with AdaptiveSparkPlan)."""
    grouped = frame.groupBy("customer").count()
    plan = grouped._jdf.queryExecution().executedPlan().toString()
    return frame.sparkSession.createDataFrame(
        [(grouped.rdd.getNumPartitions(), plan.startswith("AdaptiveSparkPlan"))],
        "partitions int, adaptive boolean",
    )


def test_a_task_runs_one_partition_after_a_shuffle_without_adaptive_replanning(
    tmp_path, spark_provider
):
    """Two slots share the JVM's cores, but a task is one partition's worth of its vertex:
    its shuffles end in one partition, planned once."""
    blobs = DictBlobs()
    env, _ = environment(tmp_path / "tm", blobs, spark=spark_provider)
    producer = tdd(
        "orders", blobs.code(arrow(orders)), outputs=[output("orders->shape", 1, "forward")]
    )
    assert isinstance(run_task(producer, env, CancelToken()), TaskFinished)
    shape = tdd(
        "shape",
        blobs.code(spark(shuffle_shape)),
        inputs=[
            gate("orders->shape", [descriptor(env, "orders->shape", 0, 1)], [((0, 0), (0, 0))])
        ],
        outputs=[output("shape->sink", 1, "forward")],
    )

    finished = run_task(shape, env, CancelToken())

    assert isinstance(finished, TaskFinished), getattr(finished, "error", finished)
    seen = read_range(
        env.registry.path_for(PartitionId("shape->sink", 0)),
        PartitionId("shape->sink", 0),
        IndexRange(0, 0),
    )
    assert seen.to_pylist() == [{"partitions": 1, "adaptive": False}]
    assert spark_provider.slots == 2


def test_a_pyspark_function_must_return_a_dataframe(tmp_path, spark_provider):
    blobs = DictBlobs()
    env, _ = environment(tmp_path / "tm", blobs, spark=spark_provider)
    failed = run_task(tdd("bad", blobs.code(spark(not_a_frame))), env, CancelToken())
    assert isinstance(failed, TaskFailed)
    assert failed.error.startswith("OutputTypeError: vertex 'bad': spark(not_a_frame) returned int")


def test_a_spark_error_reports_the_python_traceback_and_the_jvm_message(tmp_path, spark_provider):
    blobs = DictBlobs()
    env, _ = environment(tmp_path / "tm", blobs, spark=spark_provider)
    failed = run_task(tdd("missing", blobs.code(spark(select_missing))), env, CancelToken())
    assert isinstance(failed, TaskFailed)
    assert failed.error.startswith("AnalysisException: [UNRESOLVED_COLUMN")
    assert "no_such_column" in failed.error.partition("\n")[0]
    assert "in select_missing" in failed.error
    assert len(failed.error) <= MAX_ERROR_CHARS


def test_cancelling_a_pyspark_task_interrupts_its_spark_job(tmp_path, spark_provider):
    blobs = DictBlobs()
    env, reporter = environment(tmp_path / "tm", blobs, spark=spark_provider)
    deployment = tdd("endless", blobs.code(spark(endless)), attempt=4)
    token = CancelToken()
    worker = threading.Thread(target=run_task, args=(deployment, env, token))
    worker.start()
    tracker = spark_provider.session().sparkContext.statusTracker()
    deadline = time.monotonic() + 60
    while worker.is_alive() and not tracker.getJobIdsForGroup("job-1/endless/0/4"):
        assert time.monotonic() < deadline, "the Spark job never started"
        time.sleep(0.05)

    token.cancel()
    worker.join(30)

    assert not worker.is_alive(), "the Spark job was not interrupted"
    assert reporter.events[-1] == TaskCanceled("endless", 0, 4)


def test_spark_reuses_the_schema_it_inferred_only_for_files_of_the_same_parquet_schema(
    tmp_path, spark_provider
):
    import pyarrow.parquet as pq

    from taskmanager.inputs import ParquetFiles, parquet_schema_key

    def parquet(name: str, table: pa.Table) -> ParquetFiles:
        path = tmp_path / f"{name}.parquet"
        pq.write_table(table, path)
        key = parquet_schema_key(pq.read_metadata(path))
        return ParquetFiles((str(path),), None, table.num_rows, key)

    small = parquet("small", pa.table({"x": pa.array([1, 2], pa.int32())}))
    same = parquet("same", pa.table({"x": pa.array([7], pa.int32())}))
    wide = parquet("wide", pa.table({"x": pa.array([2**40], pa.int64())}))
    text = parquet("text", pa.table({"x": ["a"], "y": [1.5]}))
    assert small.schema_key == same.schema_key
    assert len({small.schema_key, wide.schema_key, text.schema_key}) == 3

    read = {
        name: spark_provider.read_parquet(files)
        for name, files in [("small", small), ("same", same), ("wide", wide), ("text", text)]
    }
    assert [r.x for r in read["same"].collect()] == [7]
    assert read["same"].schema == read["small"].schema
    assert [r.x for r in read["wide"].collect()] == [2**40]
    assert read["wide"].schema["x"].dataType.typeName() == "long"
    assert [tuple(r) for r in read["text"].collect()] == [("a", 1.5)]
    unkeyed = dataclasses.replace(wide, schema_key=None)
    assert [r.x for r in spark_provider.read_parquet(unkeyed).collect()] == [2**40]


def test_a_large_input_reaches_spark_as_a_file_per_core_written_side_by_side(
    tmp_path, spark_provider
):
    import pyarrow.parquet as pq

    import taskmanager.spark as spark_module
    import taskmanager.spark_input as spark_input

    rows = 2 * spark_input.PIECE_BYTES // 8 + 7  # two int64 columns: four pieces' worth
    keys = pa.array(range(rows), pa.int64())
    table = pa.table({"k": keys, "odd": pa.compute.bit_wise_and(keys, 1)})
    big = spark_input.write_spark_input(table, tmp_path / "input-0.parquet", 3)
    step = -(-rows // 3)
    assert [pq.read_metadata(p).num_rows for p in big.paths] == [step, step, rows - 2 * step]
    assert big.num_rows == rows
    assert pq.read_metadata(big.paths[0]).row_group(0).column(0).statistics is None
    by_bytes = spark_input.write_spark_input(table, tmp_path / "input-3.parquet", 8)
    assert len(by_bytes.paths) == 4  # no piece smaller than PIECE_BYTES
    small = spark_input.write_spark_input(table.slice(0, 1000), tmp_path / "input-1.parquet", 4)
    assert small.paths == (str(tmp_path / "input-1.parquet"),)
    assert spark_input.write_spark_input(table, tmp_path / "input-2.parquet", 1).paths == (
        str(tmp_path / "input-2.parquet"),
    )  # one core, one file

    result = spark_module.run_spark_query(
        lambda frames: frames[0].groupBy("odd").agg({"k": "sum", "*": "count"}).orderBy("odd"),
        [table],
        spark_module.SparkTask(spark_provider, tmp_path / "task", "pieces", CancelToken()),
    )
    evens = rows // 2 + rows % 2
    assert [(row["odd"], row["sum(k)"], row["count(1)"]) for row in result.to_pylist()] == [
        (0, (evens - 1) * evens, evens),
        (1, (rows - evens) ** 2, rows - evens),
    ]


def test_spark_reads_only_a_sources_columns_in_their_order_with_no_select(tmp_path, spark_provider):
    import pyarrow.parquet as pq

    from taskmanager.inputs import ParquetFiles, parquet_schema_key

    path = tmp_path / "wide.parquet"
    pq.write_table(pa.table({"a": [1, 2], "b": ["x", "y"], "c": [0.5, 1.5]}), path)
    key = parquet_schema_key(pq.read_metadata(path))

    def read(*columns: str):
        return spark_provider.read_parquet(ParquetFiles((str(path),), columns or None, 2, key))

    narrowed = read("c", "a")
    assert narrowed.columns == ["c", "a"]
    assert [tuple(r) for r in narrowed.collect()] == [(0.5, 1), (1.5, 2)]
    assert "Project" not in narrowed._jdf.queryExecution().analyzed().toString()
    assert read().columns == ["a", "b", "c"]
    assert [tuple(r) for r in read("B", "a").collect()] == [("x", 1), ("y", 2)]  # Spark resolves
    assert read("a", "a").columns == ["a", "a"]
    with pytest.raises(Exception, match="missing"):
        read("a", "missing")


def test_a_chain_headed_by_a_pyspark_function_hands_spark_its_sources_files(
    tmp_path, spark_provider, monkeypatch
):
    """As a lone PySpark source task does: Spark reads the source's Parquet files itself, with
    no copy of them read into Arrow and written out again for it."""
    import pyarrow.parquet as pq

    import taskmanager.spark as spark_module
    from jobmanager.model.chaining import ChainedOperator
    from jobmanager.model.sources import FileSource

    pq.write_table(ORDERS, tmp_path / "orders.parquet")
    written = []
    real = spark_module.write_spark_input
    monkeypatch.setattr(
        spark_module,
        "write_spark_input",
        lambda table, path, *a: written.append(path) or real(table, path, *a),
    )
    chain = ChainedOperator(
        ("orders", "big"),
        (
            spark(lambda frame: frame.where("amount > 30")),
            spark(lambda frame: frame.select("order", "amount")),
        ),
    )
    blobs = DictBlobs()
    env, _ = environment(tmp_path / "tm", blobs, spark=spark_provider)
    deployment = tdd(
        "orders -> big",
        blobs.code(chain, [FileSource(str(tmp_path / "orders.parquet"))]),
        outputs=[output("big->sink", 1, "broadcast")],
    )
    finished = run_task(deployment, env, CancelToken())
    assert isinstance(finished, TaskFinished), finished
    assert finished.metrics.rows_out == sum(1 for a in ORDERS["amount"].to_pylist() if a > 30)
    assert written == []


def test_a_written_input_is_one_partition_so_spark_shuffles_none_of_it(tmp_path, spark_provider):
    """A gate's rows are the task's partition already: Spark aggregates, ranks and sorts them
    with no shuffle to its one shuffle partition. A source's files keep Spark's splits."""
    import pyarrow.parquet as pq
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    import taskmanager.spark as spark_module
    from taskmanager.inputs import ParquetFiles, parquet_schema_key

    path = tmp_path / "customers.parquet"
    pq.write_table(CUSTOMERS, path)
    source = ParquetFiles((str(path),), None, 6, parquet_schema_key(pq.read_metadata(path)))
    frames = []

    def build(inputs):
        frames.extend(inputs)
        totals = inputs[0].groupBy("customer").agg(F.sum("amount").alias("total"))
        frames.append(
            totals.withColumn("rank", F.rank().over(Window.orderBy(F.desc("total")))).orderBy(
                "customer"
            )
        )
        return frames[-1]

    result = spark_module.run_spark_query(
        build,
        [ORDERS, source],
        spark_module.SparkTask(spark_provider, tmp_path / "task", "one-partition", CancelToken()),
    )

    totals = [sum(1.5 * i for i in range(c, 40, 7)) for c in range(7)]
    assert result.to_pylist() == [
        {"customer": c, "total": t, "rank": 1 + sum(o > t for o in totals)}
        for c, t in enumerate(totals)
    ]
    written, source_frame, query = (
        f._jdf.queryExecution().executedPlan().toString() for f in frames
    )
    assert "Coalesce 1" in written and "Coalesce" not in source_frame
    assert "Exchange" not in query
