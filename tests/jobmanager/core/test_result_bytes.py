"""Byte reports in their three forms (sparse, dense, total only), counted by ``ResultBytes``:
whatever form a report takes, the sums, the totals and which partitions a consumer must read
equal what the dense numbers give, and a report costs what it holds."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from jobmanager.core.executiongraph.result_bytes import ResultBytes
from jobmanager.messages.codec import decode, encode
from jobmanager.messages.events import ProducedPartition
from jobmanager.model.config import RESTART_STRATEGY


@st.composite
def partitions(draw):
    """Bytes per subpartition of each partition: mostly empty, some dense, some sparse."""
    subpartitions = draw(st.integers(1, 40))
    count = draw(st.integers(1, 12))
    result = []
    for _ in range(count):
        density = draw(st.sampled_from([0.0, 0.05, 0.3, 1.0]))
        seed = draw(st.integers(0, 2**32 - 1))
        rng = np.random.default_rng(seed)
        counts = rng.integers(1, 10_000, subpartitions) * (rng.random(subpartitions) < density)
        result.append(counts.astype(np.int64))
    return subpartitions, result


@settings(max_examples=200, deadline=None)
@given(partitions(), st.data())
def test_sums_totals_and_reads_equal_the_dense_computation(shape, data):
    subpartitions, dense = shape
    counted = ResultBytes(len(dense), subpartitions)
    for index, counts in enumerate(dense):
        report = decode(encode(ProducedPartition.of("r", counts, breakdown=True)))
        assert report.total == int(counts.sum())
        assert np.array_equal(report.counts(), counts)
        if np.count_nonzero(counts) <= subpartitions // 8:
            assert report.is_sparse and len(report.values()) == np.count_nonzero(counts)
        counted.record(index, report)
    assert np.array_equal(counted.subpartition_sums, np.sum(dense, axis=0))
    assert counted.partition_totals.tolist() == [int(c.sum()) for c in dense]
    first = data.draw(st.integers(0, subpartitions - 1))
    last = data.draw(st.integers(first, subpartitions - 1))
    lo = data.draw(st.integers(0, len(dense) - 1))
    hi = data.draw(st.integers(lo, len(dense) - 1))
    found = counted.partitions_with_data(range(lo, hi + 1), range(first, last + 1))
    needed = {p for p in range(lo, hi + 1) if dense[p][first : last + 1].any()}
    if found is None:  # every partition may hold data: dense ones are not tracked
        assert all(
            np.count_nonzero(dense[p]) > subpartitions // 8
            for p in range(lo, hi + 1)
            if p not in needed and dense[p].any()
        )
    else:
        dense_ones = {
            p for p in range(lo, hi + 1) if np.count_nonzero(dense[p]) > subpartitions // 8
        }
        assert needed <= set(found) <= needed | dense_ones


def test_a_report_without_breakdown_is_its_total_and_counts_no_subpartition():
    counts = np.arange(1, 2001, dtype=np.int64)
    report = ProducedPartition.of("r", counts, breakdown=False)
    assert (report.total, report.num_subpartitions, report.subpartition_bytes) == (
        2001000,
        2000,
        b"",
    )
    assert len(encode(report)) < 192  # a number and its field names, not 2,000 numbers
    counted = ResultBytes(2, 2000)
    counted.record(0, report)
    assert not counted.has_breakdown and counted.partition_totals.tolist() == [2001000, 0]
    assert counted.partitions_with_data(range(0, 2), range(0, 10)) is None  # read all


def test_a_task_that_wrote_nothing_reports_nothing():
    report = ProducedPartition.of("r", np.zeros(100_000, dtype=np.int64), breakdown=True)
    assert report.total == 0 and report.num_subpartitions == 100_000
    assert len(encode(report)) < 192  # not 100,000 zeros


def test_a_negative_or_overflowing_byte_count_fails_the_task_naming_the_result():
    from jobmanager.core.state import JobManagerState
    from jobmanager.model.config import Configuration
    from jobmanager.model.jobgraph import JobGraph, Partitioner
    from jobmanager.messages import events as ev

    g = JobGraph("bytes")
    a = g.add_vertex("a", parallelism=2)
    b = g.add_vertex("b", parallelism=2)
    g.connect(a, b, Partitioner.REBALANCE)
    state = JobManagerState(g, Configuration({RESTART_STRATEGY.key: "none"}), job_id="t")
    state.handle(ev.JobStarted())
    state.handle(ev.TaskManagerRegistered("tm", 4))
    state.handle(ev.TaskFinished("a", 0, 0, (ProducedPartition.of("a->b", [2**62, 2**62 - 1]),)))
    assert not state.failure_cause
    state.handle(ev.TaskFinished("a", 1, 0, (ProducedPartition.of("a->b", [2**62, 0]),)))
    assert "would take its total past 2^63 - 1 bytes" in state.failure_cause
    assert "'a->b'" in state.failure_cause or "a->b" in state.failure_cause
    negative = ProducedPartition.of("a->b", [-5, 10])
    from jobmanager.core.executiongraph.result_bytes import report_problem

    fresh = JobManagerState(g, Configuration(), job_id="u")
    fresh.handle(ev.JobStarted())
    fresh.handle(ev.TaskManagerRegistered("tm", 4))
    assert (
        report_problem(fresh.graph.vertex("a", 0), (negative,))
        == "reported a negative byte count for a->b"
    )
