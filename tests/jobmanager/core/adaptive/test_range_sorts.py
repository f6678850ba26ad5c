"""A global sort cut into key ranges at run time, from synthetic chunk samples, in whole runs of
the core against simulated TaskManagers: bounds balanced by bytes, every chunk read by exactly
the tasks whose range it overlaps, the bounds in every task's deployment, replay and recovery
applying the decision instead of making it again."""

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blob import InMemoryBlobStore
from jobmanager.core.admission import validate_job
from jobmanager.core.deployment import TaskDeploymentDescriptorFactory
from jobmanager.core.scheduler.adaptive.ranges import key_range
from jobmanager.core.state import JobManagerState
from jobmanager.messages import events as ev
from jobmanager.errors import JobGraphError
from jobmanager.messages.codec import decode, encode
from jobmanager.model.config import (
    AVG_DATA_VOLUME_PER_TASK,
    Configuration,
    FIXED_DELAY_ATTEMPTS,
    RESTART_STRATEGY,
)
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.runtime.descriptors import ShuffleDescriptorCache
from jobmanager.simulation.cluster import TaskFault
from shuffle.keyorder import SortKey, encode_key
from tests.jobmanager.core.crash import crash_and_recover
from tests.jobmanager.core.harness import Run
from tests.jobmanager.core.test_recovery import check
from tests.jobmanager.core.test_snapshots import check_snapshots_anywhere

KiB, MiB = 1 << 10, 1 << 20
ORDER = (SortKey("k"),)
VOLUME = AVG_DATA_VOLUME_PER_TASK.key


def key(value: int) -> bytes:
    return encode_key((value,), ORDER)


def chunked(producer):
    """A byte model whose producers also report range samples: ``producer(subtask, n)`` gives
    (chunk lows, chunk bytes, highest key) as ints; chunk j is written to subpartition j."""

    def model(vertex, subtask, result, n):
        counts = np.zeros(n, dtype="<i8")
        if vertex == "scan":
            _, sizes, _ = producer(subtask, n)
            counts[: len(sizes)] = sizes
        else:
            counts[:] = 1000
        return counts.tobytes()

    def samples(result, subtask, n):
        lows, _, high = producer(subtask, n)
        return tuple(key(v) for v in (*lows, high)) if lows else ()

    model.range_samples = samples
    return model


def spread(producers_offset=100, width=1000, per_chunk=MiB, heavy=None):
    """Producer p holds keys [p*offset, p*offset + width), in n chunks of ``per_chunk`` bytes
    (``heavy`` = (producer, factor): that one's chunks weigh factor times more)."""

    def producer(p, n):
        lows = [p * producers_offset + j * width // n for j in range(n)]
        size = per_chunk * (heavy[1] if heavy and heavy[0] == p else 1)
        return lows, [size] * n, p * producers_offset + width - 1

    return producer


def sort_job(producers=4, sort_parallelism=None, max_parallelism=16):
    g = JobGraph("sort")
    scan = g.add_vertex("scan", producers)
    sort = g.add_vertex("sort", sort_parallelism, max_parallelism=max_parallelism)
    g.connect(scan, sort, Partitioner.range(*ORDER))
    g.connect(sort, g.add_vertex("sink"), Partitioner.FORWARD)
    return g


def run_sort(job, producer, config=None):
    run = Run(job, {VOLUME: "16 mb", **(config or {})}, byte_model=chunked(producer))
    assert run.go().status == "FINISHED"
    run.check_invariants()
    return run


def decision(run) -> ev.VertexParallelismDecided:
    (found,) = [
        e for e in run.run.events if type(e) is ev.VertexParallelismDecided and e.vertex == "sort"
    ]
    return found


def check_reads(run, producer) -> list[int]:
    """Every task reads exactly the chunks whose keys [low_j, low_j+1] may meet its range;
    returns each task's bytes read."""
    ejv = run.state.graph.job_vertex("sort")
    bounds = run.state.growth.ranges.bounds["sort"]
    assert list(bounds) == sorted(bounds) and len(bounds) == ejv.parallelism - 1  # padded: equal
    (result,) = ejv.inputs
    n = result.subpartition_count(0)
    read_bytes = []
    for k in range(ejv.parallelism):
        lower, upper = key_range(bounds, k)
        read = {
            (p, s)
            for piece in ejv.input_infos[result.id][k].slices
            for p in piece.partitions
            for s in piece.subpartitions
        }
        expected = set()
        for p in range(len(result.partitions)):
            lows, sizes, high = producer(p, n)
            edges = [key(v) for v in (*lows, high)]
            for j in range(len(lows)):
                if (upper is None or edges[j] < upper) and (lower is None or edges[j + 1] >= lower):
                    expected.add((p, j))
        if expected:
            assert read == expected, f"task {k}"
        else:  # an empty range (or no rows at all): one slice, for the columns, kept nothing of
            assert len(ejv.input_infos[result.id][k].slices) == 1
        read_bytes.append(sum(producer(p, n)[1][s] for p, s in read & expected))
    return read_bytes


def test_bounds_are_balanced_by_bytes_and_each_task_reads_the_chunks_its_range_overlaps():
    producer = spread()
    run = run_sort(sort_job(), producer)
    event = decision(run)
    assert event.parallelism == 4  # 4 producers x 16 chunks of 1 MiB / 16 MiB per task
    assert len(event.range_bounds) == 3
    read = check_reads(run, producer)
    assert max(read) <= 2 * min(read)
    assert (
        "sorted by key ranges, 3 bounds picked from 64 chunks of 4 producers"
        in event.explanation.text
    )
    assert run.state.graph.job_vertex("sink").parallelism == 4
    assert run.state.growth.ranges.samples == {}  # the decision holds what they were for


def test_a_heavy_producer_pulls_the_bounds_towards_its_keys():
    producer = spread(producers_offset=1000, heavy=(3, 7))  # disjoint keys, the last heavier
    run = run_sort(sort_job(), producer)
    bounds = decision(run).range_bounds
    assert decision(run).parallelism == 10  # (3 + 7) x 16 MiB / 16 MiB
    assert sum(b >= key(3000) for b in bounds) >= 6  # most ranges cut the heavy producer's keys
    read = check_reads(run, producer)
    assert max(read) <= 2 * min(read)


def test_a_small_input_is_sorted_by_one_task_reading_everything():
    producer = spread(per_chunk=KiB)
    run = run_sort(sort_job(), producer)
    event = decision(run)
    assert (event.parallelism, event.range_bounds) == (1, ())
    check_reads(run, producer)


def test_keys_that_are_all_equal_allow_one_range():
    run = run_sort(sort_job(), lambda p, n: ([7] * n, [MiB] * n, 7))
    event = decision(run)
    assert (event.parallelism, event.range_bounds) == (1, ())
    assert "the keys allow 1 ranges" in event.explanation.text


def test_producers_without_rows_are_read_by_no_task():
    producer = lambda p, n: spread()(p, n) if p % 2 else ([], [], 0)  # noqa: E731
    run = run_sort(sort_job(), producer)
    assert decision(run).parallelism == 2
    check_reads(run, producer)
    ejv = run.state.graph.job_vertex("sort")
    assert all(
        piece.partitions.start % 2
        for k in range(2)
        for piece in ejv.input_infos["scan->sort"][k].slices
    )


def test_a_fixed_parallelism_is_kept_with_empty_ranges_where_the_keys_allow_no_more():
    run = run_sort(sort_job(sort_parallelism=3), lambda p, n: ([1, 1, 2], [MiB] * 3, 2))
    event = decision(run)
    assert event.parallelism == 3 and event.range_bounds == (key(2), key(2))
    assert "parallelism 3 is fixed" in event.explanation.text


def test_each_sort_task_is_deployed_with_its_key_range_and_the_sort_keys():
    run = run_sort(sort_job(), spread())
    bounds = decision(run).range_bounds
    cache = ShuffleDescriptorCache(InMemoryBlobStore(), 1 << 20)
    growth = run.state.growth
    factory = TaskDeploymentDescriptorFactory(
        "j",
        run.state.graph,
        run.state.task_managers,
        cache,
        key_ranges=lambda name, k: growth.ranges.key_range(name, k),
    )
    for k in range(4):
        (gate,) = factory.create(run.state.graph.vertex("sort", k)).inputs
        assert gate.key_order == ORDER
        assert (gate.lower_key, gate.upper_key) == key_range(bounds, k)
    tdd = factory.create(run.state.graph.vertex("scan", 0))
    assert tdd.outputs[0].partitioner == "range" and tdd.outputs[0].order == ORDER
    assert decode(encode(tdd)) == tdd
    assert decode(encode(decision(run))) == decision(run)


def test_a_range_edge_into_several_tasks_needs_the_adaptive_scheduler():
    static = sort_job(sort_parallelism=3)
    static.vertex("sink").parallelism = 3
    with pytest.raises(JobGraphError, match="range partitioned, which needs the adaptive"):
        validate_job(static, Configuration())
    one_task = sort_job(sort_parallelism=1)
    one_task.vertex("sink").parallelism = 1
    validate_job(one_task, Configuration())
    validate_job(sort_job(), Configuration())


def test_a_decision_written_before_range_bounds_existed_decodes_without_them():
    old = ev.VertexParallelismDecided("v", 2, (), ev.Explanation("x"))
    assert decode(encode(old)).range_bounds == ()
    assert decode(encode(ev.ProducedPartition("r", b""))).range_bounds == ()


@st.composite
def sort_scenarios(draw):
    producers = draw(st.integers(1, 5))
    job = sort_job(
        producers, draw(st.one_of(st.none(), st.integers(1, 4))), draw(st.integers(4, 16))
    )
    rows = {p: sorted(draw(st.lists(st.integers(0, 50), max_size=40))) for p in range(producers)}

    def producer(p, n):  # each producer's sorted keys cut into at most n chunks, 1 KiB a row
        keys = rows[p]
        chunks = min(n, len(keys))
        firsts = [(j * len(keys) + chunks - 1) // chunks for j in range(chunks)]
        sizes = [
            KiB * ((firsts[j + 1] if j + 1 < chunks else len(keys)) - firsts[j])
            for j in range(chunks)
        ]
        return [keys[i] for i in firsts], sizes, keys[-1] if keys else 0

    faults = [
        TaskFault(draw(st.sampled_from(["scan", "sort", "sink"])), 0, 0, "injected")
        for _ in range(draw(st.integers(0, 2)))
    ]
    config = {
        VOLUME: f"{draw(st.integers(2, 16))} kb",
        RESTART_STRATEGY.key: "fixed-delay",
        FIXED_DELAY_ATTEMPTS.key: 100,
    }
    return job, config, faults, draw(st.integers(0, 2**16)), producer


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sort_scenarios(), st.floats(0, 1))
def test_sort_runs_read_every_chunk_where_it_belongs_and_replay_and_snapshots_agree(scenario, at):
    job, config, faults, seed, producer = scenario
    run = Run(job, config, faults=faults, seed=seed, byte_model=chunked(producer))
    shadow = JobManagerState(run.job, run.config, job_id="test")
    handle = run.state.handle

    def handle_and_compare(e):  # a replay of the log so far is the live state, at every step
        step = handle(e)
        for logged in (e, *step.events):
            shadow.apply(decode(encode(logged)))
        assert shadow.describe() == run.state.describe(), f"the replay differs after {e}"
        return step

    run.run.state.handle = handle_and_compare
    assert run.go().status == "FINISHED"
    run.check_invariants()
    check_reads(run, producer)
    check_snapshots_anywhere(run, at)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sort_scenarios(), st.floats(0, 1), st.integers(0, 2**16))
def test_a_jobmanager_dying_anywhere_applies_the_logged_bounds(scenario, when, fate_seed):
    job, config, _, seed, producer = scenario
    model = chunked(producer)
    live = Run(job, config, seed=seed, byte_model=model)
    live.go()
    recovery = crash_and_recover(
        job,
        config,
        seed,
        int(when * len(live.run.events)),
        random.Random(fate_seed),
        byte_model=model,
    )
    check(recovery)
    assert recovery.state.growth.ranges.bounds == live.state.growth.ranges.bounds
    decided = [
        e for e in recovery.log if type(e) is ev.VertexParallelismDecided and e.vertex == "sort"
    ]
    assert len(decided) == 1  # decided once: before the crash, or after it, never both
