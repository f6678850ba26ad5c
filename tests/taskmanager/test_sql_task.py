"""Pieces of a planned query (``SqlOperator``) in a task: inputs as views of a session of the
task's own, chained pieces as one Spark query, Spark's refusal failing the job at once, and a
cancel interrupting the query. Real Spark (the ``spark_provider`` fixture), no Ray."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import taskmanager.sql as sql_module
from jobmanager.core.scheduler.recoverable import non_recoverable_cause
from jobmanager.messages.events import TaskCanceled, TaskFailed, TaskFinished
from jobmanager.model.broadcast_source import BroadcastSource
from jobmanager.model.chaining import ChainedOperator
from jobmanager.model.joins import PlannedJoin
from jobmanager.model.operators import ParquetSink, SqlOperator, arrow, part_file, spark
from jobmanager.model.sources import FileSource
from shuffle import IndexRange, PartitionId, read_range
from taskmanager.cancellation import CancelToken
from taskmanager.runner import run_task
from taskmanager.spark import IsolatedSession
from tests.taskmanager.harness import JOB, DictBlobs, descriptor, environment, gate, output, tdd

pytestmark = pytest.mark.spark

LINES = pa.table(
    {
        "k": [i % 4 for i in range(100)],
        "x": list(range(100)),
        "flag": ["A" if i % 3 else "B" for i in range(100)],
    }
)
NAMES = pa.table({"k": [0, 1, 2], "name": ["zero", "one", "two"]})


def lines() -> pa.Table:
    return LINES


def names() -> pa.Table:
    return NAMES


def produced(env, blobs, name: str, make, result: str):
    """Run an Arrow producer of ``make()`` into one subpartition of ``result``; its gate."""
    event = run_task(
        tdd(name, blobs.code(arrow(make)), outputs=[output(result, 1, "forward")]),
        env,
        CancelToken(),
    )
    assert isinstance(event, TaskFinished), event
    return gate(result, [descriptor(env, result, 0, 1)], [((0, 0), (0, 0))])


def written(env, result: str) -> pa.Table:
    pid = PartitionId(result, 0)
    return read_range(env.registry.path_for(pid), pid, IndexRange(0, 0))


@pytest.fixture
def parquet_lines(tmp_path) -> FileSource:
    path = tmp_path / "data" / "lines.parquet"
    path.parent.mkdir()
    pq.write_table(LINES, path)
    return FileSource(str(path))


def test_a_sql_task_sees_its_source_then_its_input_under_their_view_names(
    tmp_path, spark_provider, parquet_lines, monkeypatch
):
    """Sources first, then incoming edges: ``s0`` is the Parquet source, which Spark reads
    itself (nothing written out for it), ``in0`` the gate's rows."""
    import taskmanager.spark as spark_module

    rewritten = []
    real = spark_module.write_spark_input
    monkeypatch.setattr(
        spark_module,
        "write_spark_input",
        lambda table, path, *a: rewritten.append(path) or real(table, path, *a),
    )
    blobs = DictBlobs()
    env, _ = environment(tmp_path / "tm", blobs, spark=spark_provider)
    names_gate = produced(env, blobs, "names", names, "names->join")
    join = SqlOperator(
        "SELECT n.name, SUM(s.x) AS total FROM s0 s JOIN in0 n ON s.k = n.k "
        "WHERE s.flag = 'A' GROUP BY n.name ORDER BY n.name",
        ("s0", "in0"),
    )
    deployment = tdd(
        "join",
        blobs.code(join, [parquet_lines]),
        inputs=[names_gate],
        outputs=[output("join->sink", 1, "forward")],
    )

    finished = run_task(deployment, env, CancelToken())

    assert isinstance(finished, TaskFinished), getattr(finished, "error", finished)
    expected: dict[str, int] = {}
    for row in LINES.to_pylist():
        if row["flag"] == "A" and row["k"] < 3:
            name = NAMES["name"][row["k"]].as_py()
            expected[name] = expected.get(name, 0) + row["x"]
    assert written(env, "join->sink").to_pylist() == [
        {"name": name, "total": total} for name, total in sorted(expected.items())
    ]
    assert len(rewritten) == 1  # the gate's rows only: the source's file went to Spark as is
    phases = dict(finished.metrics.phases)
    assert {"read_input", "spark_input", "spark_plan", "spark_run", "write_output"} <= set(phases)
    assert finished.metrics.spark_jobs >= 1


def test_every_subtask_reads_a_broadcast_source_whole_and_spark_reads_its_files(
    tmp_path, spark_provider, monkeypatch
):
    """A join's tiny side read in the big side's tasks (``BroadcastSource``): the two subtasks
    share ``lines`` (two files) but each reads all of ``names``, both as files Spark reads
    itself; together they give the whole join."""
    import taskmanager.spark as spark_module

    rewritten = []
    real = spark_module.write_spark_input
    monkeypatch.setattr(
        spark_module,
        "write_spark_input",
        lambda table, path, *a: rewritten.append(path) or real(table, path, *a),
    )
    data = tmp_path / "data"
    (data / "lines").mkdir(parents=True)
    (data / "names").mkdir()
    pq.write_table(LINES.slice(0, 50), data / "lines" / "part-0.parquet")
    pq.write_table(LINES.slice(50), data / "lines" / "part-1.parquet")
    pq.write_table(NAMES, data / "names" / "part-0.parquet")
    sources = [FileSource(str(data / "lines")), BroadcastSource(FileSource(str(data / "names")))]
    join = SqlOperator(
        "SELECT /*+ BROADCAST(n) */ s.x, n.name FROM s0 s JOIN s1 n ON s.k = n.k", ("s0", "s1")
    )
    blobs = DictBlobs()
    env, _ = environment(tmp_path / "tm", blobs, spark=spark_provider)
    code = blobs.code(join, sources)
    rows = []
    for subtask in (0, 1):
        result = f"join->sink#{subtask}"
        finished = run_task(
            tdd(
                "join", code, subtask=subtask, parallelism=2, outputs=[output(result, 1, "forward")]
            ),
            env,
            CancelToken(),
        )
        assert isinstance(finished, TaskFinished), getattr(finished, "error", finished)
        mine = written(env, result).to_pylist()
        assert {row["x"] for row in mine} <= set(range(subtask * 50, subtask * 50 + 50))
        rows += mine
    names = dict(zip(NAMES["k"].to_pylist(), NAMES["name"].to_pylist()))
    assert sorted(rows, key=lambda row: row["x"]) == [
        {"x": row["x"], "name": names[row["k"]]} for row in LINES.to_pylist() if row["k"] in names
    ]
    assert rewritten == []  # both sources went to Spark as files


def test_an_input_with_no_columns_is_still_a_view(tmp_path, spark_provider):
    blobs = DictBlobs()
    env, _ = environment(tmp_path / "tm", blobs, spark=spark_provider)
    count = SqlOperator("SELECT COUNT(*) AS n FROM in0", ("in0",))
    deployment = tdd(
        "count",
        blobs.code(count),
        inputs=[gate("nothing->count", [], [])],
        outputs=[output("count->sink", 1, "forward")],
    )

    finished = run_task(deployment, env, CancelToken())

    assert isinstance(finished, TaskFinished), getattr(finished, "error", finished)
    assert written(env, "count->sink").to_pylist() == [{"n": 0}]


def test_chained_pieces_compose_into_one_query_and_a_sink_writes_the_result(
    tmp_path, spark_provider, parquet_lines, monkeypatch
):
    """scan -> agg -> top -> sink: the later pieces read the one before under their own view
    name (``top`` reuses ``in0``), and Spark runs the whole chain as one query."""
    queries = []
    real = sql_module.run_spark_query
    monkeypatch.setattr(
        sql_module,
        "run_spark_query",
        lambda *args, **kwargs: queries.append(1) or real(*args, **kwargs),
    )
    out = tmp_path / "out"
    chain = ChainedOperator(
        ("scan", "agg", "top", "sink"),
        (
            SqlOperator("SELECT k, x FROM s0 WHERE flag = 'A'", ("s0",)),
            SqlOperator("SELECT k, SUM(x) AS total FROM in0 GROUP BY k", ("in0",)),
            SqlOperator("SELECT k, total FROM in0 ORDER BY total DESC LIMIT 2", ("in0",)),
            ParquetSink(str(out)),
        ),
    )
    blobs = DictBlobs()
    env, _ = environment(tmp_path / "tm", blobs, spark=spark_provider)
    deployment = tdd("scan -> agg -> top -> sink", blobs.code(chain, [parquet_lines]))

    finished = run_task(deployment, env, CancelToken())

    assert isinstance(finished, TaskFinished), getattr(finished, "error", finished)
    totals: dict[int, int] = {}
    for row in LINES.to_pylist():
        if row["flag"] == "A":
            totals[row["k"]] = totals.get(row["k"], 0) + row["x"]
    best = sorted(totals.items(), key=lambda kv: -kv[1])[:2]
    result = pq.read_table(part_file(ParquetSink(str(out)), JOB, 0, 0))
    assert result.to_pylist() == [{"k": k, "total": t} for k, t in best]
    assert queries == [1]


def test_a_chain_of_a_pyspark_function_and_a_piece_is_one_query_too(tmp_path, spark_provider):
    chain = ChainedOperator(
        ("names", "shout"),
        (
            spark(lambda frame: frame.where("k > 0")),
            SqlOperator("SELECT upper(name) AS name FROM in0 ORDER BY name", ("in0",)),
        ),
    )
    blobs = DictBlobs()
    env, _ = environment(tmp_path / "tm", blobs, spark=spark_provider)
    names_gate = produced(env, blobs, "make", names, "make->names")
    finished = run_task(
        tdd(
            "names -> shout",
            blobs.code(chain),
            inputs=[names_gate],
            outputs=[output("shout->sink", 1, "forward")],
        ),
        env,
        CancelToken(),
    )
    assert isinstance(finished, TaskFinished), getattr(finished, "error", finished)
    assert written(env, "shout->sink")["name"].to_pylist() == ["ONE", "TWO"]


def test_a_join_chained_into_its_scan_reads_the_scan_and_the_broadcast_side_as_fed(
    tmp_path, spark_provider, parquet_lines, monkeypatch
):
    """``lines -> join`` as the JobManager fuses it at run time: the scan reads the source
    (input 0); the join reads the scan's rows where it read ``in0`` and the broadcast names
    gate (input 1) as ``in1``, in one Spark query."""
    queries = []
    real = sql_module.run_spark_query
    monkeypatch.setattr(
        sql_module,
        "run_spark_query",
        lambda *args, **kwargs: queries.append(1) or real(*args, **kwargs),
    )
    chain = ChainedOperator(
        ("lines", "join"),
        (
            SqlOperator("SELECT k, x FROM s0 WHERE flag = 'B'", ("s0",)),
            SqlOperator(
                "SELECT in1.name, SUM(in0.x) AS total FROM in0 JOIN in1 ON in0.k = in1.k "
                "GROUP BY in1.name ORDER BY in1.name",
                ("in0", "in1"),
            ),
        ),
        feeds=((0,), (None, 1)),
    )
    blobs = DictBlobs()
    env, _ = environment(tmp_path / "tm", blobs, spark=spark_provider)
    names_gate = produced(env, blobs, "names", names, "names->join")
    finished = run_task(
        tdd(
            "lines -> join",
            blobs.code(chain, [parquet_lines]),
            inputs=[names_gate],
            outputs=[output("join->sink", 1, "forward")],
        ),
        env,
        CancelToken(),
    )
    assert isinstance(finished, TaskFinished), getattr(finished, "error", finished)
    totals: dict[str, int] = {}
    named = {row["k"]: row["name"] for row in NAMES.to_pylist()}
    for row in LINES.to_pylist():
        if row["flag"] == "B" and row["k"] in named:
            totals[named[row["k"]]] = totals.get(named[row["k"]], 0) + row["x"]
    assert written(env, "join->sink").to_pylist() == [
        {"name": n, "total": t} for n, t in sorted(totals.items())
    ]
    assert queries == [1]


def test_a_join_decided_at_run_time_is_built_on_the_side_the_jobmanager_found_smaller(
    tmp_path, spark_provider, monkeypatch
):
    """The planner hinted the right side (listed smaller); the JobManager found the left
    smaller: the task's SQL builds on the left, and the answer is the same."""
    ran = []
    real = sql_module._sql
    monkeypatch.setattr(
        sql_module,
        "_sql",
        lambda isolated, name, op: ran.append(op.sql) or real(isolated, name, op),
    )
    join = PlannedJoin(
        "j1", "inner", "runtime", "right", "in0", "in1", 10, 1, ("BROADCAST(t1)", "BROADCAST(t2)")
    )
    piece = SqlOperator(
        "SELECT /*+ BROADCAST(t2) */ t2.name, t1.x FROM in0 AS t1 "
        "INNER JOIN in1 AS t2 ON t1.k = t2.k ORDER BY t1.x",
        ("in0", "in1"),
        joins=(join,),
    )
    blobs = DictBlobs()
    env, _ = environment(tmp_path / "tm", blobs, spark=spark_provider)
    gates = [
        produced(env, blobs, "lines", lambda: LINES.slice(0, 6), "lines->join"),
        produced(env, blobs, "names", names, "names->join"),
    ]
    deployment = replace(
        tdd("join", blobs.code(piece), inputs=gates, outputs=[output("join->sink", 1, "forward")]),
        build_sides=(("j1", "left"),),
    )
    finished = run_task(deployment, env, CancelToken())
    assert isinstance(finished, TaskFinished), getattr(finished, "error", finished)
    assert ran == [piece.sql.replace("BROADCAST(t2)", "BROADCAST(t1)")]
    assert written(env, "join->sink").to_pylist() == [
        {"name": ("zero", "one", "two")[x % 4], "x": x} for x in range(6) if x % 4 < 3
    ]


@pytest.mark.parametrize(
    "sql, spark_error",
    [
        ("SELECT no_such_column FROM in0", "UNRESOLVED_COLUMN"),
        ("SELECT k FROM no_such_view", "TABLE_OR_VIEW_NOT_FOUND"),
        ("SELEC k FROM in0", "PARSE_SYNTAX_ERROR"),
    ],
)
def test_sql_spark_refuses_fails_the_job_at_once_naming_the_vertex_and_the_sql(
    tmp_path, spark_provider, sql, spark_error
):
    blobs = DictBlobs()
    env, _ = environment(tmp_path / "tm", blobs, spark=spark_provider)
    lines_gate = produced(env, blobs, "lines", lines, "lines->agg")
    piece = SqlOperator(sql, ("in0",), origin="the user's query")
    failed = run_task(
        tdd(
            "agg",
            blobs.code(piece),
            inputs=[lines_gate],
            outputs=[output("agg->sink", 1, "forward")],
        ),
        env,
        CancelToken(),
    )

    assert isinstance(failed, TaskFailed)
    head = failed.error.partition("Traceback (most recent call last)")[0]
    assert head.startswith("SqlRefused: vertex 'agg': Spark refused its SQL")
    assert spark_error in head and sql in head
    assert "SubqueryAlias" not in head  # Spark's analysed plan, left out
    assert failed.error_types[0] == "taskmanager.sql.SqlRefused"
    assert non_recoverable_cause(failed.error_types) == "jobmanager.errors.NonRecoverableError"
    assert "pyspark.errors.exceptions.base.AnalysisException" in failed.error_types


def test_a_task_session_is_its_own_and_comes_back_clean_for_the_next_task(spark_provider):
    """Two tasks holding sessions at once do not see each other's views, nor does the process's
    session; a session handed back has lost its views and serves the next task."""
    with spark_provider.isolated() as first:
        first.register("in0", first.session.range(3))
        with spark_provider.isolated() as second:
            assert second.session is not first.session
            second.register("in0", second.session.range(5))
            assert second.session.sql("SELECT COUNT(*) AS n FROM in0").first().n == 5
        assert first.session.sql("SELECT COUNT(*) AS n FROM in0").first().n == 3
        assert not spark_provider.session().catalog.tableExists("in0")
    spark_provider.settle()
    with spark_provider.isolated() as again:
        assert again.session in (first.session, second.session)  # reused, not made anew
        assert not again.session.catalog.tableExists("in0")
        assert again.session.conf.get("spark.sql.shuffle.partitions") == "1"
        assert again.session.conf.get("spark.sql.session.timeZone") == "UTC"


def test_a_task_hands_its_session_back_without_waiting_for_its_views_to_be_dropped(
    spark_provider, monkeypatch
):
    """The drops come after the task, on the provider's thread; until they are done the
    session goes to no other task."""
    spark_provider.settle()
    dropping, may_drop = threading.Event(), threading.Event()
    drop = IsolatedSession.drop_views

    def held_drop(isolated):
        dropping.set()
        assert may_drop.wait(60)
        return drop(isolated)

    monkeypatch.setattr(IsolatedSession, "drop_views", held_drop)
    handed_back = threading.Event()

    def task():
        with spark_provider.isolated() as isolated:
            isolated.register("in0", isolated.session.range(3))
            held.append(isolated.session)
        handed_back.set()

    held: list = []
    worker = threading.Thread(target=task)
    worker.start()
    assert handed_back.wait(60), "leaving the session waited for its views to be dropped"
    assert dropping.wait(60)
    with spark_provider.isolated() as meanwhile:
        assert meanwhile.session is not held[0]  # its views are not dropped yet
    may_drop.set()
    spark_provider.settle()
    assert not held[0].catalog.tableExists("in0")
    with spark_provider.isolated() as after:
        assert after.session in (held[0], meanwhile.session)
    worker.join(60)


def test_cancelling_a_sql_task_interrupts_its_spark_job(tmp_path, spark_provider):
    blobs = DictBlobs()
    env, reporter = environment(tmp_path / "tm", blobs, spark=spark_provider)
    endless = SqlOperator("SELECT SUM(id % 7) AS s FROM range(0, 10000000000000, 1, 2)", ())
    deployment = tdd("endless", blobs.code(endless), attempt=2)
    token = CancelToken()
    worker = threading.Thread(target=run_task, args=(deployment, env, token))
    worker.start()
    tracker = spark_provider.session().sparkContext.statusTracker()
    deadline = time.monotonic() + 60
    while worker.is_alive() and not tracker.getJobIdsForGroup(f"{JOB}/endless/0/2"):
        assert time.monotonic() < deadline, "the Spark job never started"
        time.sleep(0.05)

    token.cancel()
    worker.join(30)

    assert not worker.is_alive(), "the Spark job was not interrupted"
    assert reporter.events[-1] == TaskCanceled("endless", 0, 2)
