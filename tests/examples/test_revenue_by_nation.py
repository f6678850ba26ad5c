"""The demo job: its reference on data small enough to add up by hand, the graph it builds, its
PySpark functions run split in one session, and ``main`` against a testing client."""

from __future__ import annotations

import datetime
import sys
import types

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from examples import revenue_by_nation
from examples.compare import first_difference
from examples.revenue_by_nation import build, customer_partitioner, reference
from jobmanager import Partitioner
from jobmanager.model.config import NUMBER_OF_TASK_SLOTS
from jobmanager.model.operators import ParquetSink, SparkFunction, check_operators
from tests.examples.one_session import run_in_one_session

D = datetime.date


@pytest.fixture
def hand_data(tmp_path):
    """Three nations, four customers, five orders (two outside 1994), six lines.

    In range: order 1 (customer 1, ALGERIA): 100 * 0.9 + 50 = 140; order 2 (customer 2,
    ARGENTINA): 200 * 0.95 = 190; order 5 (customer 3, ARGENTINA): 10 * 0.5 = 5, on the range's
    first day. Out: order 3 on 1995-01-01 (the end is exclusive), order 4 on 1993-12-31."""
    tables = {
        "nation": {"n_nationkey": [0, 1, 2], "n_name": ["ALGERIA", "ARGENTINA", "BRAZIL"]},
        "customer": {"c_custkey": [1, 2, 3, 4], "c_nationkey": [0, 1, 1, 2]},
        "orders": {
            "o_orderkey": [1, 2, 3, 4, 5],
            "o_custkey": [1, 2, 3, 4, 3],
            "o_orderdate": [
                D(1994, 3, 1),
                D(1994, 12, 31),
                D(1995, 1, 1),
                D(1993, 12, 31),
                D(1994, 1, 1),
            ],
        },
        "lineitem": {
            "l_orderkey": [1, 1, 2, 3, 4, 5],
            "l_extendedprice": [100.0, 50.0, 200.0, 1000.0, 500.0, 10.0],
            "l_discount": [0.10, 0.0, 0.05, 0.0, 0.0, 0.5],
        },
    }
    for name, columns in tables.items():
        (tmp_path / name).mkdir()
        table = pa.table(
            {
                k: pa.array(v, pa.date32() if k.endswith("date") else None)
                for k, v in columns.items()
            }
        )
        pq.write_table(table, tmp_path / name / "part-00000.parquet")
    return tmp_path


HAND_RESULT = pa.table({"nation": ["ARGENTINA", "ALGERIA"], "revenue": [195.0, 140.0]})


def test_the_reference_adds_up_by_hand(hand_data):
    assert first_difference(reference(hand_data), HAND_RESULT) is None


def test_the_reference_at_tiny_scale_covers_every_nation_in_order(tiny_data):
    result = reference(tiny_data)
    assert result.column_names == ["nation", "revenue"]
    assert result.num_rows == 25
    revenue = result["revenue"].to_pylist()
    assert revenue == sorted(revenue, reverse=True) and revenue[-1] > 0


def test_the_graph_has_the_demo_shape_and_sets_no_parallelism(tiny_data, tmp_path):
    graph = build(tiny_data, tmp_path / "out")
    graph.validate()
    check_operators(graph)
    assert [v.name for v in graph.vertices] == [
        "orders",
        "lineitem",
        "customer",
        "nation",
        "join_orders_lineitem",
        "join_customer",
        "revenue_by_nation",
        "sink",
    ]
    assert all(v.parallelism is None and v.max_parallelism is None for v in graph.vertices)
    edges = {e.id: (str(e.partitioner), e.splittable, e.result_type.label) for e in graph.edges}
    assert edges == {
        "orders->join_orders_lineitem": ("hash(o_orderkey)", False, "blocking"),
        "lineitem->join_orders_lineitem": ("hash(l_orderkey)", True, "blocking"),
        "join_orders_lineitem->join_customer": ("rescale", False, "blocking"),
        "customer->join_customer": ("broadcast", False, "blocking"),
        "join_customer->revenue_by_nation": ("hash(c_nationkey)", False, "blocking"),
        "nation->revenue_by_nation": ("broadcast", False, "blocking"),
        "revenue_by_nation->sink": ("forward", False, "blocking"),
    }
    join = graph.vertex("join_orders_lineitem")
    assert [e.source.name for e in join.inputs] == ["orders", "lineitem"]
    assert [e.source.name for e in graph.vertex("join_customer").inputs] == [
        "join_orders_lineitem",
        "customer",
    ]
    for name in ("orders", "lineitem", "customer", "nation"):
        (source,) = graph.vertex(name).sources
        assert source.paths == (str(tiny_data / name),)
        assert graph.vertex(name).infers_parallelism
    sink = graph.vertex("sink").operator
    assert isinstance(sink, ParquetSink) and sink.overwrite
    assert sink.path == str(tmp_path / "out")
    assert all(
        isinstance(graph.vertex(n).operator, SparkFunction)
        for n in (
            "orders",
            "lineitem",
            "join_orders_lineitem",
            "join_customer",
            "revenue_by_nation",
        )
    )


def test_a_large_customer_table_is_hashed_instead_of_broadcast(tiny_data, tmp_path, monkeypatch):
    assert customer_partitioner(tiny_data) == Partitioner.BROADCAST
    monkeypatch.setattr(revenue_by_nation, "BROADCAST_CUSTOMER_BYTES", 0)
    assert customer_partitioner(tiny_data) == Partitioner.hash("c_custkey")
    graph = build(tiny_data, tmp_path / "out")
    graph.validate()
    edges = {e.id: (str(e.partitioner), e.splittable) for e in graph.edges}
    assert edges["join_orders_lineitem->join_customer"] == ("hash(o_custkey)", True)
    assert edges["customer->join_customer"] == ("hash(c_custkey)", False)


@pytest.mark.spark
def test_the_functions_run_split_give_the_hand_result(hand_data, spark_session, tmp_path):
    graph = build(hand_data, tmp_path / "out")
    split = {
        "orders": 2,
        "lineitem": 2,
        "customer": 2,
        "join_orders_lineitem": 3,
        "join_customer": 2,
    }
    result = run_in_one_session(graph, spark_session, split)
    assert first_difference(result, HAND_RESULT) is None


@pytest.mark.spark
def test_the_functions_run_split_match_the_reference(tiny_data, spark_session, tmp_path):
    graph = build(tiny_data, tmp_path / "out")
    split = {"orders": 2, "lineitem": 3, "join_orders_lineitem": 3, "join_customer": 2}
    result = run_in_one_session(graph, spark_session, split)
    assert first_difference(result, reference(tiny_data)) is None


class _TestingHandle:
    job_id = "0123456789abcdef"

    def __init__(self, result, graph) -> None:
        self.result, self.graph = result, graph

    def report(self, path: str) -> str:
        with open(path, "w") as out:
            out.write("<!DOCTYPE html>")
        return path

    def wait(self, progress=False):
        assert progress
        if self.result.status == "FINISHED":
            sink = self.graph.vertex("sink").operator
            pq.write_table(HAND_RESULT, f"{sink.path}/part-00000.parquet")
        return self.result


def _testing_client_module(status: str, cause: str = "", submitted: list | None = None):
    """A stand-in for ``jobmanager.client.client`` whose jobs end at once with ``status``."""
    vertex = types.SimpleNamespace(
        parallelism=3, explanation="48.0 MiB / 16.0 MiB per task", chain=""
    )

    class TestingClient:
        def __init__(self, address=None) -> None:
            self.address = address

        def submit(self, graph, config=None):
            graph.validate()
            if submitted is not None:
                submitted.append((self.address, graph, config))
            vertices = {v.name: vertex for v in graph.vertices}
            result = types.SimpleNamespace(status=status, cause=cause, vertices=vertices)
            return _TestingHandle(result, graph)

    return types.SimpleNamespace(Client=TestingClient)


def test_main_prints_the_result_and_every_decision(hand_data, tmp_path, monkeypatch, capsys):
    submitted: list = []
    monkeypatch.setitem(
        sys.modules,
        "jobmanager.client.client",
        _testing_client_module("FINISHED", submitted=submitted),
    )
    monkeypatch.setattr(revenue_by_nation, "generate", lambda data, scale: None)
    out = tmp_path / "result"
    out.mkdir()
    code = revenue_by_nation.main(
        [
            "--data",
            str(hand_data),
            "--out",
            str(out),
            "--address",
            "ray://head:10001",
            "--report",
            str(tmp_path / "job.html"),
            "-D",
            "taskmanager.numberOfTaskSlots=2",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "ARGENTINA" in printed and "195.00" in printed
    assert printed.count("48.0 MiB / 16.0 MiB per task") == 8
    assert printed.strip().splitlines()[-1] == (
        f"report written to {tmp_path / 'job.html'} (or: tidal report 0123456789abcdef)"
    )
    (address, graph, config) = submitted[0]
    assert address == "ray://head:10001"
    assert config == {NUMBER_OF_TASK_SLOTS.key: "2"}
    assert graph.name == "revenue-by-nation"


def test_main_exits_non_zero_with_the_cause_when_the_job_fails(
    hand_data, tmp_path, monkeypatch, capsys
):
    monkeypatch.setitem(
        sys.modules,
        "jobmanager.client.client",
        _testing_client_module("FAILED", cause="ZeroDivisionError in orders"),
    )
    monkeypatch.setattr(revenue_by_nation, "generate", lambda data, scale: None)
    code = revenue_by_nation.main(
        [
            "--data",
            str(hand_data),
            "--out",
            str(tmp_path / "r"),
            "--report",
            str(tmp_path / "job.html"),
        ]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "job failed: ZeroDivisionError in orders" in err
    assert f"report written to {tmp_path / 'job.html'}" in err
