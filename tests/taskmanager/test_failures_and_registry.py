"""How failures read, and which files a TaskManager serves."""

from __future__ import annotations

import pyarrow as pa
import pytest

from shuffle import (
    HashPartitioner,
    IndexRange,
    PartitionId,
    PartitionNotFound,
    PartitionServer,
    ShuffleDirectory,
    read_range,
)
from taskmanager.failures import InputLost, describe_failure, failure_types
from taskmanager.outputs import filter_values, partitioner_for
from taskmanager.registry import PartitionRegistry
from tests.taskmanager.harness import output

JVM_TRACE = "\n".join(
    [
        "An error occurred while calling o57.collectToPython.",
        ": org.apache.spark.SparkException: Job aborted due to stage failure: boom",
    ]
    + [
        f"\tat org.apache.spark.scheduler.DAGScheduler.f{i}(DAGScheduler.scala:{i})"
        for i in range(400)
    ]
    + ["Caused by: java.lang.ArithmeticException: / by zero"]
    + [f"\tat org.example.Udf.g{i}(Udf.java:{i})" for i in range(50)]
    + ["\t... 32 more"]
)


class FakeJavaError(Exception):
    pass


def raise_from_jvm():
    raise FakeJavaError(JVM_TRACE)


def test_a_failure_reads_type_message_then_the_traceback():
    try:
        int("x7")
    except ValueError as error:
        text = describe_failure(error)
    first, _, rest = text.partition("\n")
    assert first == "ValueError: invalid literal for int() with base 10: 'x7'"
    assert "Traceback (most recent call last)" in rest and "test_a_failure_reads" in rest


def test_a_jvm_stack_trace_keeps_its_messages_and_loses_most_frames():
    with pytest.raises(FakeJavaError) as caught:
        raise_from_jvm()
    text = describe_failure(caught.value)
    assert text.startswith("FakeJavaError: An error occurred while calling o57.collectToPython.")
    assert "SparkException: Job aborted due to stage failure: boom" in text
    assert "Caused by: java.lang.ArithmeticException: / by zero" in text
    assert "in raise_from_jvm" in text
    assert "DAGScheduler.f2(" in text and "DAGScheduler.f3(" not in text
    assert len(text) < 6_000


def test_a_huge_failure_is_capped_keeping_head_and_tail():
    text = describe_failure(RuntimeError("x" * 100_000), limit=3_000)
    assert len(text) < 3_100 and text.startswith("RuntimeError: xxx") and "characters cut" in text


def test_a_lost_input_is_described_by_the_shuffle_error_it_wraps():
    lost = InputLost(PartitionNotFound(PartitionId("a->b", 3), "/shuffle/a/3-0.tpf"))
    assert lost.partition_id == PartitionId("a->b", 3)
    assert describe_failure(lost).startswith("PartitionNotFound: no file for partition a->b#3")


def test_failure_types_name_the_classes_of_the_error_and_what_it_was_raised_from():
    class BadRecord(KeyError):
        pass

    try:
        try:
            open("/no/such/file")
        except OSError as missing:
            raise BadRecord("row 7") from missing
    except BadRecord as error:
        types = failure_types(error)
    own = f"{__name__}.test_failure_types_name_the_classes_of_the_error_and_what_it_was_raised_from.<locals>.BadRecord"
    assert types == (
        own,
        "builtins.KeyError",
        "builtins.LookupError",
        "builtins.FileNotFoundError",
        "builtins.OSError",
    )
    try:
        try:
            int("x")
        except ValueError:
            raise TypeError("while handling") from None
    except TypeError as error:
        assert failure_types(error) == ("builtins.TypeError",)  # an implicit context is not a cause
    lost = InputLost(PartitionNotFound(PartitionId("a->b", 0), "gone"))
    assert failure_types(lost)[0] == "shuffle.errors.PartitionNotFound"


def test_the_registry_serves_the_latest_attempt_and_only_what_was_written(tmp_path):
    directory = ShuffleDirectory(tmp_path / "shuffle")
    registry = PartitionRegistry("tm-a")
    server = PartitionServer(registry)
    pid = PartitionId("a->b", 0)
    for attempt, rows in ((1, 10), (0, 99)):  # the older attempt finishes last
        with directory.writer(pid, 2, HashPartitioner(("k",)), attempt=attempt) as writer:
            writer.write(pa.table({"k": list(range(rows))}))
            registry.add(pid, attempt, writer.finish().path)

    assert registry.path_for(pid) == directory.path_for(pid, 1)
    chunk = server.read_chunk(pid, IndexRange(0, 1), 0, 1 << 20)
    assert len(chunk) > 0
    assert read_range(registry.path_for(pid), pid, IndexRange(0, 1)).num_rows == 10
    assert registry.forget([pid], [0]) == []  # not the registered attempt: still served
    assert registry.forget([pid], [1]) == [pid]
    with pytest.raises(PartitionNotFound, match="task manager tm-a"):
        server.read_chunk(pid, IndexRange(0, 1), 0, 1 << 20)
    with pytest.raises(PartitionNotFound):
        registry.path_for(PartitionId("never", 0))


@pytest.mark.parametrize(
    ("kind", "count", "expected"),
    [
        ("hash", 8, "HashPartitioner(keys=('key',))"),
        ("rebalance", 8, "RebalancePartitioner(offset=3)"),
        ("rescale", 8, "RebalancePartitioner(offset=3)"),
        ("forward", 1, "ForwardPartitioner(subpartition=0)"),
        ("forward", 4, "RebalancePartitioner(offset=3)"),
        ("broadcast", 1, "BroadcastPartitioner()"),
    ],
)
def test_each_edge_partitioner_maps_to_a_row_partitioner(kind, count, expected):
    assert repr(partitioner_for(output("r", count, kind), subtask=3)) == expected


def test_an_unknown_partitioner_names_the_result():
    with pytest.raises(ValueError, match="result 'r': unknown partitioner 'zigzag'"):
        partitioner_for(output("r", 2, "zigzag"), subtask=0)


def test_filter_values_are_distinct_sorted_strings_without_nulls():
    table = pa.table({"day": pa.array([3, 1, None, 3, 20], pa.int32())})
    assert filter_values(table, "day") == ("1", "20", "3")
