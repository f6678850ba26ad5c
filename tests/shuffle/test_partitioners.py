"""Round robin, rescale, forward and broadcast partitioning, and the reordering they share."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from shuffle import (
    BroadcastPartitioner,
    ForwardPartitioner,
    HashPartitioner,
    IndexRange,
    RebalancePartitioner,
    RescalePartitioner,
    RowPartitioner,
    partition_rows,
    reorder_by_subpartition,
)


def _rows(count: int) -> pa.Table:
    return pa.table({"n": np.arange(count)})


def test_rebalance_is_round_robin_from_its_offset():
    ids = RebalancePartitioner(offset=2).assign(_rows(7), 3)
    assert ids.tolist() == [2, 0, 1, 2, 0, 1, 2]


def test_rebalance_continues_the_cycle_across_writes():
    partitioner = RebalancePartitioner(offset=1)
    first = partitioner.assign(_rows(4), 3, first_row=0)
    second = partitioner.assign(_rows(4), 3, first_row=4)
    assert np.concatenate([first, second]).tolist() == partitioner.assign(_rows(8), 3).tolist()


def test_rescale_cycles_over_its_targets_only():
    ids = RescalePartitioner(IndexRange(4, 6), offset=1).assign(_rows(5), 10)
    assert ids.tolist() == [5, 6, 4, 5, 6]


def test_rescale_targets_must_fit():
    with pytest.raises(ValueError, match="exceed 5 subpartitions"):
        RescalePartitioner(IndexRange(3, 5)).assign(_rows(1), 5)


def test_forward_sends_everything_to_its_subpartition_without_copying():
    table = _rows(10)
    split = partition_rows(table, ForwardPartitioner(2), 4)
    assert split.rows_per_subpartition().tolist() == [0, 0, 10, 0]
    assert split.rows is table
    assert split.subpartition(2).equals(table)


def test_broadcast_needs_exactly_one_subpartition():
    split = partition_rows(_rows(3), BroadcastPartitioner(), 1)
    assert split.rows_per_subpartition().tolist() == [3]
    with pytest.raises(ValueError, match="exactly one subpartition, not 4"):
        partition_rows(_rows(3), BroadcastPartitioner(), 4)


def test_forward_target_must_exist():
    with pytest.raises(ValueError, match="outside 2 subpartitions"):
        ForwardPartitioner(2).assign(_rows(1), 2)


def test_every_partitioner_meets_the_protocol():
    for partitioner in (
        HashPartitioner(("n",)),
        RebalancePartitioner(),
        RescalePartitioner(IndexRange(0, 1)),
        ForwardPartitioner(),
        BroadcastPartitioner(),
    ):
        assert isinstance(partitioner, RowPartitioner)


def test_reordering_groups_rows_and_keeps_their_order_within_a_group():
    table = pa.table({"n": list(range(8))})
    ids = np.array([2, 0, 2, 1, 0, 2, 1, 0], dtype=np.uint8)
    split = reorder_by_subpartition(table, ids, 4)
    assert split.offsets.tolist() == [0, 3, 5, 8, 8]
    assert split.rows.column("n").to_pylist() == [1, 4, 7, 3, 6, 0, 2, 5]


@pytest.mark.parametrize("threads", [2, 3])
def test_a_large_table_is_reordered_in_slices_to_the_same_rows(monkeypatch, threads):
    import shuffle.partitioning as partitioning

    rng = np.random.default_rng(7)
    table = pa.table(
        {
            "n": np.arange(1000),
            "s": [f"row-{i}" for i in range(1000)],
            "x": rng.standard_normal(1000),
        }
    )
    ids = rng.integers(0, 16, 1000).astype(np.uint8)
    serial = reorder_by_subpartition(table, ids, 16)
    monkeypatch.setattr(partitioning, "_PARALLEL_TAKE_BYTES", 0)
    monkeypatch.setattr(partitioning, "_TAKE_THREADS", threads)
    sliced = reorder_by_subpartition(table, ids, 16)
    assert sliced.rows.column("n").num_chunks == threads
    assert sliced.offsets.tolist() == serial.offsets.tolist()
    assert sliced.rows.equals(serial.rows)
    for index in range(16):
        assert sliced.subpartition(index).equals(serial.subpartition(index))


def test_reordering_rejects_ids_outside_the_partition():
    with pytest.raises(ValueError, match="subpartition id 5 >= 3"):
        reorder_by_subpartition(_rows(2), np.array([0, 5]), 3)


def test_record_batches_and_chunked_tables_partition_alike():
    table = pa.concat_tables([pa.table({"n": [1, 2, 3]}), pa.table({"n": [4, 5]})])
    batch = table.combine_chunks().to_batches()[0]
    from_table = partition_rows(table, HashPartitioner(("n",)), 3)
    from_batch = partition_rows(batch, HashPartitioner(("n",)), 3)
    assert from_table.offsets.tolist() == from_batch.offsets.tolist()
    assert from_table.rows.equals(from_batch.rows)


def test_a_missing_key_column_is_named():
    with pytest.raises(KeyError, match="'nope'"):
        HashPartitioner(("nope",)).assign(_rows(2), 2)
