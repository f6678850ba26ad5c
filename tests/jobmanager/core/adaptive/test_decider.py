"""The decider from tables of numbers: exact parallelisms and exact ranges."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobmanager.core.scheduler.adaptive.decider import (
    decide_parallelism,
    decide_vertex,
    spread_over_slots,
)
from jobmanager.core.scheduler.adaptive.decision import DeciderSettings, InputStats
from jobmanager.core.scheduler.adaptive.packing import (
    Items,
    balanced_ranges,
    exact_count_ranges,
    greedy_ranges,
)
from jobmanager.model.inference import combine_inferred, source_upper_bound
from shuffle.ranges import IndexRange, even_ranges

MiB = 1 << 20


def R(a, b):
    return IndexRange(a, b)


def subpartition_ranges(info, n):
    out = []
    for k in range(n):
        (slice_,) = info[k].slices
        out.append((slice_.subpartitions.start, slice_.subpartitions.end))
    return out


@pytest.mark.parametrize(
    "bytes_, broadcast, vertex_max, expected",
    [
        (100 * MiB, True, 128, 7),  # ceil(100 / 16)
        (16 * MiB, True, 128, 1),
        (16 * MiB + 1, True, 128, 2),
        (0, True, 128, 1),  # zero bytes: the minimum
        (100 * MiB, False, 128, 1),  # only broadcast inputs: the minimum
        (10_000 * MiB, True, 128, 128),  # clamped to max-parallelism
        (10_000 * MiB, True, 50, 50),  # and to the vertex's max parallelism
    ],
)
def test_the_byte_formula(bytes_, broadcast, vertex_max, expected):
    p, *_ = decide_parallelism(bytes_, broadcast, vertex_max, DeciderSettings())
    assert p == expected


def test_min_parallelism_applies_and_the_vertex_max_lowers_it():
    s = DeciderSettings(min_parallelism=8, max_parallelism=64)
    assert decide_parallelism(MiB, True, 128, s)[0] == 8
    p, low, high, _, clamps = decide_parallelism(MiB, True, 4, s)
    assert (p, low, high) == (4, 4, 4)
    assert any("min-parallelism 8 lowered" in c for c in clamps)


@pytest.mark.parametrize(
    "p, n, expected",
    [
        (8, 4, [(0, 1), (2, 3), (4, 5), (6, 7)]),
        (10, 3, [(0, 2), (3, 5), (6, 9)]),  # [k*P/N, (k+1)*P/N - 1]
        (5, 5, [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)]),
        (7, 2, [(0, 2), (3, 6)]),
    ],
)
def test_the_even_formula(p, n, expected):
    assert [(r.start, r.end) for r in even_ranges(p, n)] == expected


def test_greedy_packing_fills_each_range_up_to_the_limit():
    items = Items.of([4, 4, 4, 9, 1, 1, 1, 12, 3])
    assert greedy_ranges(items, 10) == [R(0, 1), R(2, 2), R(3, 4), R(5, 6), R(7, 7), R(8, 8)]


def test_too_few_ranges_bisect_to_the_most_even_legal_count():
    items = Items.of([10, 10, 10, 10, 50, 10])
    ranges, limit = balanced_ranges(items, 100, 4, 6)
    assert ranges == [R(0, 1), R(2, 3), R(4, 4), R(5, 5)] and limit == 20


def test_too_many_ranges_bisect_up_to_the_max():
    items = Items.of([10] * 12)
    ranges, limit = balanced_ranges(items, 10, 1, 3)
    assert ranges == [R(0, 3), R(4, 7), R(8, 11)] and limit == 40


def test_all_to_all_ranges_even_bytes_not_even_counts():
    s = DeciderSettings(data_volume_per_task=10 * MiB)
    sub = [MiB] * 20 + [9 * MiB, 9 * MiB]  # 38 MiB
    d = decide_vertex([InputStats.all_to_all("a->b", sub, 4)], None, 128, s)
    assert d.parallelism == 4
    assert subpartition_ranges(d.input_infos["a->b"], 4) == [(0, 9), (10, 19), (20, 20), (21, 21)]
    info = d.input_infos["a->b"]
    assert all(info[k].slices[0].partitions == R(0, 3) for k in range(4))


def test_user_set_parallelism_is_kept_and_balanced():
    s = DeciderSettings(data_volume_per_task=10 * MiB)
    sub = [MiB] * 8
    d = decide_vertex([InputStats.all_to_all("a->b", sub, 2)], 2, 128, s)
    assert d.parallelism == 2
    assert subpartition_ranges(d.input_infos["a->b"], 2) == [(0, 3), (4, 7)]


def test_when_balancing_cannot_meet_the_bounds_the_even_split_is_the_fallback():
    # 4 subpartitions but min-parallelism 6 is impossible with 4 items: even split of the
    # decided parallelism (clamped to the vertex max of 4)
    s = DeciderSettings(min_parallelism=3, data_volume_per_task=MiB)
    sub = [100 * MiB, 0, 0, 0]
    d = decide_vertex([InputStats.all_to_all("a->b", sub, 1)], None, 4, s)
    assert d.parallelism == 4
    assert subpartition_ranges(d.input_infos["a->b"], 4) == [(0, 0), (1, 1), (2, 2), (3, 3)]


def test_broadcast_inputs_are_read_whole_and_not_counted():
    s = DeciderSettings(data_volume_per_task=10 * MiB)
    inputs = [
        InputStats.all_to_all("fact->j", [5 * MiB] * 8, 3),
        InputStats.broadcast_of("dim->j", [400 * MiB, 400 * MiB]),
    ]
    d = decide_vertex(inputs, None, 128, s)
    assert d.parallelism == 4
    assert d.explanation.broadcast_bytes == 800 * MiB and d.explanation.input_bytes == 40 * MiB
    dim = d.input_infos["dim->j"]
    assert all(dim[k].slices[0].subpartitions == R(0, 0) for k in range(4))
    assert all(dim[k].slices[0].partitions == R(0, 1) for k in range(4))
    assert list(d.input_infos) == ["fact->j", "dim->j"]  # in declared order


def test_pointwise_inputs_fix_the_parallelism_and_balance_slices():
    s = DeciderSettings(data_volume_per_task=4)
    # two partitions of three subpartitions: 1 2 1 | 2 1 2 -> 9 bytes, ceil(9/4) = 3 consumers
    d = decide_vertex([InputStats.pointwise_of("a->b", [[1, 2, 1], [2, 1, 2]])], None, 128, s)
    assert d.parallelism == 3
    info = d.input_infos["a->b"]
    got = [
        [
            (sl.partitions.start, sl.subpartitions.start, sl.subpartitions.end)
            for sl in info[k].slices
        ]
        for k in range(3)
    ]
    assert got == [[(0, 0, 1)], [(0, 2, 2), (1, 0, 0)], [(1, 1, 2)]]


def test_a_skewed_splittable_input_is_cut_and_the_other_side_read_by_each_piece():
    s = DeciderSettings(data_volume_per_task=10 * MiB, skewed_threshold=20 * MiB)
    sub = [5 * MiB] * 8
    sub[3] = 100 * MiB
    probe = InputStats.all_to_all("probe->join", sub, 10, splittable=True)
    build = InputStats.all_to_all("build->join", [MiB] * 8, 2)
    d = decide_vertex([probe, build], None, 64, s)
    assert "skewed subpartition 3" in d.explanation.text
    readers = [
        k
        for k in range(d.parallelism)
        if any(3 in sl.subpartitions for sl in d.input_infos["probe->join"][k].slices)
    ]
    assert len(readers) >= 4  # the hot key is spread over several consumers
    for k in readers:
        (build_slice,) = d.input_infos["build->join"][k].slices
        assert 3 in build_slice.subpartitions and build_slice.partitions == R(0, 1)


def test_skew_is_left_alone_when_the_input_is_not_splittable():
    s = DeciderSettings(data_volume_per_task=10 * MiB, skewed_threshold=20 * MiB)
    sub = [5 * MiB] * 8
    sub[3] = 100 * MiB
    d = decide_vertex([InputStats.all_to_all("a->b", sub, 10)], None, 64, s)
    assert (
        "skewed subpartition 3 of 'a->b' (104857600 bytes) not cut: the input is not "
        "splittable" in d.explanation.text
    )
    assert (
        sum(
            1
            for k in range(d.parallelism)
            if any(3 in sl.subpartitions for sl in d.input_infos["a->b"][k].slices)
        )
        == 1
    )


@pytest.mark.parametrize(
    "default_source, max_p, default_p, vertex_max, expected",
    [
        (10, 50, 4, 128, 10),
        (None, 50, 4, 128, 50),
        (None, None, 4, 128, 4),
        (None, None, None, 128, 128),  # nothing configured: max-parallelism's default
        (500, None, None, 64, 64),  # never above the vertex's max parallelism
    ],
)
def test_the_source_upper_bound_fallback_chain(
    default_source, max_p, default_p, vertex_max, expected
):
    assert source_upper_bound(default_source, max_p, default_p, 128, vertex_max) == expected


def test_several_inferring_sources_take_the_largest_and_minus_one_means_the_bound():
    assert combine_inferred([3, 7, 5], 10) == 7
    assert combine_inferred([3, -1], 10) == 10
    assert combine_inferred([40], 10) == 10
    assert combine_inferred([], 6) == 6


# -- properties ---------------------------------------------------------------------------


def coverage(info, consumers, partitions, subpartitions):
    seen = np.zeros((partitions, subpartitions), dtype=np.int64)
    for k in range(consumers):
        for sl in info[k].slices:
            seen[
                sl.partitions.start : sl.partitions.end + 1,
                sl.subpartitions.start : sl.subpartitions.end + 1,
            ] += 1
    return seen


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 64 * MiB), min_size=1, max_size=60),
    st.integers(1, 12),
    st.integers(1, 40),
    st.integers(1, 16),
    st.booleans(),
)
def test_all_to_all_ranges_read_every_slice_exactly_once(sub, partitions, volume_mib, min_p, split):
    s = DeciderSettings(
        min_parallelism=min(min_p, len(sub)),
        max_parallelism=128,
        data_volume_per_task=volume_mib * MiB,
        skewed_threshold=MiB,
    )
    main = InputStats.all_to_all("a->j", sub, partitions, splittable=split)
    other = InputStats.all_to_all("b->j", [MiB] * len(sub), 2)
    d = decide_vertex([main, other], None, len(sub), s)
    assert s.min_parallelism <= d.parallelism <= len(sub)
    assert (coverage(d.input_infos["a->j"], d.parallelism, partitions, len(sub)) == 1).all()
    seen = coverage(d.input_infos["b->j"], d.parallelism, 2, len(sub))
    assert (seen >= 1).all()  # the other side is read by every piece of a cut subpartition


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 1000), min_size=1, max_size=8), min_size=1, max_size=8),
    st.integers(1, 30),
)
def test_pointwise_ranges_read_every_slice_exactly_once(per_partition, parallelism):
    width = max(len(p) for p in per_partition)
    per_partition = [p + [0] * (width - len(p)) for p in per_partition]
    total_slices = len(per_partition) * width
    parallelism = min(parallelism, total_slices)
    d = decide_vertex(
        [InputStats.pointwise_of("a->b", per_partition)], parallelism, 128, DeciderSettings()
    )
    seen = coverage(d.input_infos["a->b"], parallelism, len(per_partition), width)
    assert (seen == 1).all()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 100), min_size=1, max_size=80), st.integers(1, 200))
def test_greedy_ranges_stay_under_the_limit_unless_one_item_is_larger(sizes, limit):
    ranges = greedy_ranges(Items.of(sizes), limit)
    assert ranges[0].start == 0 and ranges[-1].end == len(sizes) - 1
    for a, b in zip(ranges, ranges[1:]):
        assert b.start == a.end + 1
    for r in ranges:
        assert sum(sizes[r.start : r.end + 1]) <= limit or len(r) == 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 100), min_size=1, max_size=50), st.integers(1, 50))
def test_exact_count_ranges_give_exactly_the_count_or_none(sizes, count):
    ranges = exact_count_ranges(Items.of(sizes), count)
    if ranges is not None:
        assert len(ranges) == count
        assert [i for r in ranges for i in r] == list(range(len(sizes)))


SPREAD = DeciderSettings(data_volume_per_task=64 * MiB, min_data_volume_per_task=MiB, slots=2)


@pytest.mark.parametrize(
    "settings, total, expected",
    [
        (SPREAD, 32 * MiB, 2),  # TPC-H q13's 32.7 MiB at scale 10: both slots, not one
        (SPREAD, MiB, 1),  # under two tasks of the least volume: one
        (SPREAD, 3 * MiB, 2),
        (SPREAD, 200 * MiB, 4),  # fills the slots at 64 MiB a task anyway: the formula's
        (replace(SPREAD, min_data_volume_per_task=None), 32 * MiB, 1),  # unset: Flink's formula
        (replace(SPREAD, slots=None), 32 * MiB, 1),  # no slot limit: nothing to spread over
    ],
)
def test_a_vertex_that_fills_fewer_tasks_than_the_slots_gets_smaller_tasks(
    settings, total, expected
):
    sub = [total // 16] * 16
    d = decide_vertex([InputStats.all_to_all("a->b", sub, 4)], None, 128, settings)
    assert d.parallelism == expected
    spread = expected == 2 and total > MiB
    assert ("to spread over the job's 2 slots" in d.explanation.text) is spread
    ranges = subpartition_ranges(d.input_infos["a->b"], d.parallelism)
    assert ranges[0][0] == 0 and ranges[-1][1] == 15  # every subpartition read, once
    assert all(a[1] + 1 == b[0] for a, b in zip(ranges, ranges[1:]))


def test_a_user_set_parallelism_is_not_spread():
    d = decide_vertex([InputStats.all_to_all("a->b", [MiB] * 16, 4)], 1, 128, SPREAD)
    assert d.parallelism == 1


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 1 << 34), st.integers(1, 64), st.integers(1, 1 << 28), st.integers(1, 1 << 27)
)
def test_spreading_is_idempotent_and_never_past_the_slots_or_under_the_least_volume(
    total, slots, volume, least
):
    s = DeciderSettings(data_volume_per_task=volume, min_data_volume_per_task=least, slots=slots)
    once = spread_over_slots(s, total)
    assert spread_over_slots(once, total) == once
    assert once.data_volume_per_task <= volume
    if once.data_volume_per_task < volume:
        assert once.data_volume_per_task >= least
        assert -(-total // once.data_volume_per_task) <= slots
