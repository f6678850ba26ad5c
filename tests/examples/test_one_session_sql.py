"""``run_in_one_session`` runs SQL pieces too, split as Tidal would run them, each subtask's
inputs the views of a session of its own: what the planner's tests check its graphs with."""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException

from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.model.operators import ParquetSink, SqlOperator
from jobmanager.model.sources import FileSource
from tests.examples.one_session import run_in_one_session
from tests.jobmanager.runtime.sql_jobs import (
    aggregate_job,
    expected_aggregate,
    expected_join,
    join_job,
    write_tables,
)

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    return write_tables(tmp_path_factory.mktemp("sql-tables"))


def test_a_hashed_aggregate_split_over_subtasks(tables, spark_session):
    graph = aggregate_job(tables, ParquetSink("/unused"))
    result = run_in_one_session(graph, spark_session, {"scan": 2, "agg": 3, "result": 3})
    assert dict(zip(result["key"].to_pylist(), result["total"].to_pylist())) == expected_aggregate()
    assert result.num_rows == len(expected_aggregate())  # each key summed by one subtask


def test_a_broadcast_join_reads_the_small_side_whole_in_every_subtask(tables, spark_session):
    graph = join_job(tables, ParquetSink("/unused"))
    result = run_in_one_session(graph, spark_session, {"scan": 2, "agg": 2, "result": 2})
    assert dict(zip(result["n_name"].to_pylist(), result["total"].to_pylist())) == expected_join()


def test_a_piece_sees_only_its_own_views(tables, spark_session):
    """``late`` names ``s0``, a view of ``early``'s subtask, not its own: it must not find it."""
    g = JobGraph("leaky")
    early = g.add_vertex(
        "early",
        sources=[FileSource(tables["names"])],
        operator=SqlOperator("SELECT * FROM s0", ("s0",)),
    )
    late = g.add_vertex("late", operator=SqlOperator("SELECT * FROM s0", ("in0",)))
    sink = g.add_vertex("sink", operator=ParquetSink("/unused"))
    g.connect(early, late, Partitioner.FORWARD)
    g.connect(late, sink, Partitioner.FORWARD)
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
        run_in_one_session(g, spark_session)
