"""TPC-H Q1 and Q3: the Tidal graphs' shape, and all three versions agreeing at a tiny scale --
PySpark alone, the Tidal jobs' functions run split in one session, and pyarrow."""

from __future__ import annotations

import pytest

from examples.compare import first_difference
from examples.tpch_queries import (
    Q1_COLUMNS,
    Q3_COLUMNS,
    q1,
    q3,
    reference_q1,
    reference_q3,
    spark_q1,
    spark_q3,
)
from jobmanager.model.operators import ParquetSink, SparkFunction, check_operators
from tests.examples.one_session import run_in_one_session


def _edges(graph):
    return {e.id: (str(e.partitioner), e.splittable, e.result_type.label) for e in graph.edges}


def _check_common(graph, out):
    graph.validate()
    check_operators(graph)
    ordering = {"pricing_summary", "top_orders"}  # a global order needs one task
    assert all(v.max_parallelism is None for v in graph.vertices)
    assert {v.name: v.parallelism for v in graph.vertices if v.parallelism is not None} == {
        name: 1 for name in ordering if name in {v.name for v in graph.vertices}
    }
    sink = graph.vertex("sink").operator
    assert isinstance(sink, ParquetSink) and sink.path == str(out) and sink.overwrite
    assert all(isinstance(v.operator, SparkFunction) for v in graph.vertices if v.name != "sink")
    for vertex in graph.vertices:
        assert all(source.columns for source in vertex.sources), vertex.name


def test_q1_is_partial_aggregates_hashed_to_a_final_one(tiny_data, tmp_path):
    graph = q1(tiny_data, tmp_path / "q1")
    _check_common(graph, tmp_path / "q1")
    assert [v.name for v in graph.vertices] == ["lineitem", "pricing_summary", "sink"]
    assert _edges(graph) == {
        "lineitem->pricing_summary": ("hash(l_returnflag, l_linestatus)", False, "blocking"),
        "pricing_summary->sink": ("forward", False, "blocking"),
    }
    (source,) = graph.vertex("lineitem").sources
    assert source.paths == (str(tiny_data / "lineitem"),)


def test_q3_joins_the_small_sides_broadcast_into_the_lineitem_scan(tiny_data, tmp_path):
    graph = q3(tiny_data, tmp_path / "q3")
    _check_common(graph, tmp_path / "q3")
    assert [v.name for v in graph.vertices] == [
        "customer",
        "orders",
        "lineitem",
        "top_orders",
        "sink",
    ]
    assert _edges(graph) == {
        "orders->lineitem": ("broadcast", False, "blocking"),
        "customer->lineitem": ("broadcast", False, "blocking"),
        "lineitem->top_orders": ("rebalance", False, "blocking"),
        "top_orders->sink": ("forward", False, "blocking"),
    }
    assert [e.source.name for e in graph.vertex("lineitem").inputs] == ["orders", "customer"]


def test_the_references_have_the_queries_columns(tiny_data):
    first = reference_q1(tiny_data)
    assert tuple(first.column_names) == Q1_COLUMNS
    assert [(r["l_returnflag"], r["l_linestatus"]) for r in first.to_pylist()] == [
        ("A", "F"),
        ("N", "F"),
        ("N", "O"),
        ("R", "F"),
    ]
    third = reference_q3(tiny_data)
    assert tuple(third.column_names) == Q3_COLUMNS and third.num_rows == 10
    revenue = third["revenue"].to_pylist()
    assert revenue == sorted(revenue, reverse=True)


@pytest.mark.spark
@pytest.mark.parametrize("query, reference", [(spark_q1, reference_q1), (spark_q3, reference_q3)])
def test_pyspark_alone_agrees_with_pyarrow(query, reference, tiny_data, spark_session):
    result = query(spark_session, str(tiny_data)).toArrow()
    assert first_difference(result, reference(tiny_data)) is None


@pytest.mark.spark
def test_q1_functions_run_split_agree_with_pyarrow(tiny_data, spark_session, tmp_path):
    graph = q1(tiny_data, tmp_path / "q1")
    result = run_in_one_session(graph, spark_session, {"lineitem": 3})
    assert first_difference(result, reference_q1(tiny_data)) is None


@pytest.mark.spark
def test_q3_functions_run_split_agree_with_pyarrow(tiny_data, spark_session, tmp_path):
    graph = q3(tiny_data, tmp_path / "q3")
    split = {"customer": 2, "orders": 2, "lineitem": 3}
    result = run_in_one_session(graph, spark_session, split)
    assert first_difference(result, reference_q3(tiny_data)) is None
