"""A join's strategy decided from the bytes its sides really produced (FLIP-470), in whole runs
of the core against simulated TaskManagers."""

import numpy as np
import pytest

from blob import InMemoryBlobStore
from jobmanager.core import commands as cmd
from jobmanager.core.deployment import TaskDeploymentDescriptorFactory
from jobmanager.core.executiongraph import (
    PartitionRangesInputInfo,
    SubpartitionRangesInputInfo,
    WholeInputInfo,
)
from jobmanager.core.view import CoreView
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode, encode
from jobmanager.model.config import (
    ADAPTIVE_BROADCAST_JOIN_STRATEGY,
    BROADCAST_THRESHOLD,
    SKEWED_THRESHOLD,
)
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.model.joins import JoinInput
from jobmanager.runtime.descriptors import ShuffleDescriptorCache
from shuffle.ranges import IndexRange
from tests.jobmanager.core.harness import Run

MiB = 1 << 20
STRATEGY = ADAPTIVE_BROADCAST_JOIN_STRATEGY.key
THRESHOLD = BROADCAST_THRESHOLD.key


def sized(per_task, hot=None):
    """Each task of vertex v writes ``per_task[v]`` bytes (a callable of the subtask, or a
    number) spread evenly over its subpartitions; ``hot`` = (vertex, subpartition, bytes)
    puts that many more into one subpartition."""

    def model(vertex, subtask, result, n):
        size = per_task.get(vertex, MiB)
        total = size(subtask) if callable(size) else size
        counts = np.full(n, total // n, dtype="<i8")
        counts[: total % n] += 1
        if hot is not None and hot[0] == vertex:
            counts[hot[1]] += hot[2]
        return counts.tobytes()

    return model


def join_job(
    kind,
    left_tasks=4,
    right_tasks=2,
    redistributable=(False, False),
    join_parallelism=None,
    splittable=False,
    broadcast_input=False,
):
    g = JobGraph("join")
    left = g.add_vertex("left", left_tasks)
    right = g.add_vertex("right", right_tasks)
    join = g.add_vertex("join", join_parallelism)
    sink = g.add_vertex("sink")
    g.connect(
        left,
        join,
        Partitioner.hash("k"),
        splittable=splittable,
        join=JoinInput("j1", kind, "left", redistributable[0]),
    )
    g.connect(
        right, join, Partitioner.hash("k"), join=JoinInput("j1", kind, "right", redistributable[1])
    )
    if broadcast_input:
        dim = g.add_vertex("dim", 1)
        g.connect(dim, join, Partitioner.BROADCAST)
    g.connect(join, sink, Partitioner.FORWARD)
    return g


def run_join(job, per_task, config=None, hot=None):
    run = Run(job, config, byte_model=sized(per_task, hot))
    assert run.go().status == "FINISHED"
    run.check_invariants()
    return run


def decision(run, vertex="join") -> ev.VertexParallelismDecided:
    (found,) = [
        e for e in run.run.events if type(e) is ev.VertexParallelismDecided and e.vertex == vertex
    ]
    return found


def slices(run, result, k):
    ejv = run.state.graph.job_vertex("join")
    return [(s.partitions, s.subpartitions) for s in ejv.input_infos[result][k].slices]


BROADCASTABLE = {
    "inner": ("left", "right"),
    "left": ("right",),
    "right": ("left",),
    "full": (),
    "semi": ("right",),
    "anti": ("right",),
}


@pytest.mark.parametrize("kind", sorted(BROADCASTABLE))
@pytest.mark.parametrize("small", ["left", "right"])
def test_a_small_side_is_broadcast_only_where_the_join_kind_allows(kind, small):
    big = "right" if small == "left" else "left"
    run = run_join(join_job(kind), {small: MiB // 2, big: 16 * MiB})
    (join,) = decision(run).joins
    if small in BROADCASTABLE[kind]:
        assert (join.strategy, join.side) == ("broadcast", small)
    else:  # never the side whose unmatched rows the join keeps; built on the smaller side
        assert (join.strategy, join.side) == ("shuffled", small)
    assert (join.join, join.kind, join.threshold) == ("j1", kind, 10 * MiB)
    tasks = {"left": 4, "right": 2}
    assert (join.left_bytes, join.right_bytes) == (
        tasks["left"] * (MiB // 2 if small == "left" else 16 * MiB),
        tasks["right"] * (MiB // 2 if small == "right" else 16 * MiB),
    )


def test_a_small_right_side_of_a_left_outer_join_is_read_whole_by_every_task():
    run = run_join(join_job("left"), {"left": 16 * MiB, "right": MiB})
    event = decision(run)
    (join,) = event.joins
    assert (join.strategy, join.side) == ("broadcast", "right")
    # the parallelism comes from the left side's 64 MiB only: 4 tasks of 16 MiB
    assert event.parallelism == 4
    assert (event.explanation.input_bytes, event.explanation.broadcast_bytes) == (64 * MiB, 2 * MiB)
    infos = dict(event.input_infos)
    assert infos["right->join"] == WholeInputInfo(2, 128, 4)
    for k in range(4):  # all subpartitions of all partitions of the right side, every task
        assert slices(run, "right->join", k) == [(IndexRange(0, 1), IndexRange(0, 127))]
    # the left side keeps balanced subpartition ranges over all its partitions
    assert infos["left->join"] == SubpartitionRangesInputInfo(4, (0, 32, 64, 96, 128))
    assert slices(run, "left->join", 1) == [(IndexRange(0, 3), IndexRange(32, 63))]
    assert run.state.graph.job_vertex("sink").parallelism == 4  # the forward group follows
    text = event.explanation.text
    assert text.startswith("join 'j1' (left outer): broadcast join, the right side")
    assert "2.0 MiB <= threshold 10.0 MiB" in text and "left 64.0 MiB" in text
    assert "once 'left' (left) and 'right' (right) finished" in text
    assert run.state.growth.joins == {"join": event.joins}


def test_a_small_left_side_of_a_left_outer_join_is_never_broadcast():
    run = run_join(join_job("left"), {"left": MiB // 4, "right": 16 * MiB})
    event = decision(run)
    (join,) = event.joins
    assert (join.strategy, join.side) == ("shuffled", "left")
    assert "the right side, which it may broadcast, is above threshold" in join.text
    # both sides count, both read by subpartition ranges: (1 + 32) MiB / 16 MiB -> 3
    assert event.parallelism == 3 and event.explanation.broadcast_bytes == 0
    infos = dict(event.input_infos)
    assert all(type(i) is SubpartitionRangesInputInfo for i in infos.values())


def test_a_full_outer_join_is_never_broadcast():
    run = run_join(join_job("full"), {"left": 1000, "right": 10})
    (join,) = decision(run).joins
    assert (join.strategy, join.side) == ("shuffled", "right")
    assert "a full outer join broadcasts neither side" in join.text


def test_strategy_none_leaves_the_plan_as_it_is():
    run = run_join(join_job("left"), {"left": 16 * MiB, "right": MiB}, {STRATEGY: "none"})
    event = decision(run)
    assert event.joins == () and run.state.growth.joins == {}
    assert all(type(i) is SubpartitionRangesInputInfo for _, i in event.input_infos)
    assert event.parallelism == 5  # 66 MiB, the right side counted


@pytest.mark.parametrize("strategy", ["AUTO", "RUNTIME_ONLY"])
def test_auto_and_runtime_only_both_decide_at_run_time(strategy):
    run = run_join(join_job("inner"), {"left": 16 * MiB, "right": MiB}, {STRATEGY: strategy})
    assert decision(run).joins[0].strategy == "broadcast"


def test_a_threshold_switched_off_keeps_every_join_shuffled():
    run = run_join(join_job("inner"), {"left": 16 * MiB, "right": 10}, {THRESHOLD: -1})
    (join,) = decision(run).joins
    assert (join.strategy, join.side, join.threshold) == ("shuffled", "right", -1)
    assert "the broadcast threshold is off" in join.text


def test_both_sides_big_stay_shuffled_built_on_the_smaller():
    run = run_join(join_job("inner"), {"left": 16 * MiB, "right": 24 * MiB})
    (join,) = decision(run).joins
    assert (join.left_bytes, join.right_bytes) == (64 * MiB, 48 * MiB)
    assert (join.strategy, join.side) == ("shuffled", "right")
    assert "built on the right side, the smaller" in join.text
    assert "both sides are above threshold 10.0 MiB" in join.text
    assert decision(run).parallelism == 7  # both sides count: 112 MiB / 16 MiB


def test_of_two_small_sides_of_an_inner_join_the_smaller_is_broadcast():
    run = run_join(join_job("inner"), {"left": MiB, "right": 3 * MiB})  # 4 MiB against 6 MiB
    (join,) = decision(run).joins
    assert (join.strategy, join.side) == ("broadcast", "left")
    assert decision(run).parallelism == 1  # the right side's 6 MiB


def test_a_redistributable_other_side_is_read_as_whole_outputs_of_consecutive_producers():
    uneven = {"left": lambda k: (1 + k % 3) * 4 * MiB, "right": MiB}  # 16 tasks, 128 MiB
    run = run_join(join_job("left", left_tasks=16, redistributable=(True, False)), uneven)
    event = decision(run)
    assert event.parallelism == 8  # 128 MiB / 16 MiB, the broadcast right side not counted
    info = dict(event.input_infos)["left->join"]
    assert type(info) is PartitionRangesInputInfo and info.num_subpartitions == 128
    assert info.cuts[0] == 0 and info.cuts[-1] == 16 and len(info.cuts) == 9
    sizes = [(1 + k % 3) * 4 for k in range(16)]
    loads = [sum(sizes[a:b]) for a, b in zip(info.cuts, info.cuts[1:])]
    assert max(loads) <= 24  # balanced by bytes: no task holds more than 24 MiB of 128
    for k in range(8):  # all subpartitions of partitions [cuts[k], cuts[k+1])
        assert slices(run, "left->join", k) == [
            (IndexRange(info.cuts[k], info.cuts[k + 1] - 1), IndexRange(0, 127))
        ]
        assert slices(run, "right->join", k) == [(IndexRange(0, 1), IndexRange(0, 127))]
    assert "whole outputs of consecutive producers" in event.explanation.text


def test_a_redistributable_side_with_fewer_producers_than_tasks_keeps_subpartition_ranges():
    run = run_join(
        join_job("left", left_tasks=2, redistributable=(True, False)),
        {"left": 64 * MiB, "right": MiB},
    )
    event = decision(run)
    assert event.parallelism == 8 and event.joins[0].strategy == "broadcast"
    assert type(dict(event.input_infos)["left->join"]) is SubpartitionRangesInputInfo


def test_a_broadcast_join_cuts_no_skewed_subpartition():
    config = {SKEWED_THRESHOLD.key: "1 mb"}
    job = join_job("inner", splittable=True)
    run = run_join(job, {"left": 4 * MiB, "right": MiB}, config, hot=("left", 3, 8 * MiB))
    event = decision(run)
    assert event.joins[0].strategy == "broadcast"
    assert "skewed" not in event.explanation.text
    assert type(dict(event.input_infos)["left->join"]) is SubpartitionRangesInputInfo


def test_a_user_set_parallelism_of_the_join_is_kept_and_its_join_still_decided():
    run = run_join(join_job("left", join_parallelism=3), {"left": 64 * MiB, "right": MiB})
    event = decision(run)
    assert event.parallelism == 3 and event.joins[0].strategy == "broadcast"
    assert dict(event.input_infos)["right->join"] == WholeInputInfo(2, 3, 3)
    assert "parallelism 3 is fixed" in event.explanation.text
    assert run.state.graph.job_vertex("sink").parallelism == 3


def test_a_true_broadcast_input_besides_the_join_sides_does_not_stop_the_decision():
    run = run_join(
        join_job("inner", broadcast_input=True), {"left": 16 * MiB, "right": MiB, "dim": 5 * MiB}
    )
    event = decision(run)
    assert event.joins[0].side == "right" and event.parallelism == 4
    assert event.explanation.broadcast_bytes == 7 * MiB
    assert slices(run, "dim->join", 0) == [(IndexRange(0, 0), IndexRange(0, 0))]


def test_inputs_that_are_not_both_sides_of_one_join_leave_the_plan_as_it_is():
    g = JobGraph("two joins")
    a, b, c = (g.add_vertex(n, 2) for n in "abc")
    join = g.add_vertex("join")
    g.connect(a, join, Partitioner.hash("k"), join=JoinInput("j1", "inner", "left"))
    g.connect(b, join, Partitioner.hash("k"), join=JoinInput("j2", "inner", "right"))
    g.connect(c, join, Partitioner.hash("k"))
    run = run_join(g, {"a": MiB, "b": MiB, "c": MiB})
    assert decision(run).joins == ()


def test_deployment_descriptors_read_whole_partitions():
    run = run_join(
        join_job("inner", left_tasks=16, redistributable=(True, False)),
        {"left": 4 * MiB, "right": MiB},
    )
    cache = ShuffleDescriptorCache(InMemoryBlobStore(), 1 << 20)
    factory = TaskDeploymentDescriptorFactory("j", run.state.graph, run.state.task_managers, cache)
    tdd = factory.create(run.state.graph.vertex("join", 1))
    gates = {g.result: g for g in tdd.inputs}
    whole = gates["right->join"]
    assert [(s.partitions, s.subpartitions) for s in whole.slices] == [
        (IndexRange(0, 1), IndexRange(0, 127))
    ]
    (part,) = gates["left->join"].slices
    assert part.subpartitions == IndexRange(0, 127) and part.partitions == IndexRange(4, 7)
    assert decode(encode(tdd)) == tdd


def test_a_task_is_told_the_side_its_join_builds_on():
    run = run_join(join_job("inner"), {"left": 16 * MiB, "right": 12 * MiB})
    cache = ShuffleDescriptorCache(InMemoryBlobStore(), 1 << 20)
    view = CoreView(run.state)
    describe = view.descriptors("j", cache, {}, 16 << 20)
    tdd = describe(cmd.DeployTask("join", 0, run.state.graph.vertex("join", 0).attempt, "", 0))
    assert tdd.build_sides == (("j1", "right"),)  # 24 MiB written against 64: built on it
    assert decode(encode(tdd)) == tdd


def test_a_decision_with_its_join_travels_through_msgpack():
    run = run_join(
        join_job("left", left_tasks=16, redistributable=(True, False)),
        {"left": 4 * MiB, "right": MiB},
    )
    event = decision(run)
    assert decode(encode(event)) == event
    assert isinstance(event.joins[0], ev.JoinDecision)


def test_a_side_not_hash_partitioned_leaves_the_plan_as_it_is():
    g = JobGraph("odd")
    left, right = g.add_vertex("left", 2), g.add_vertex("right", 2)
    join = g.add_vertex("join")
    g.connect(left, join, Partitioner.hash("k"), join=JoinInput("j1", "inner", "left"))
    g.connect(right, join, Partitioner.REBALANCE, join=JoinInput("j1", "inner", "right"))
    g.connect(join, g.add_vertex("sink"), Partitioner.FORWARD)
    run = run_join(g, {"left": 16 * MiB, "right": 10})
    assert run.state.growth.joins == {} and decision(run).joins == ()


def test_a_join_whose_forward_group_the_user_fixed_keeps_that_parallelism_and_says_by_whom():
    g = JobGraph("fixed downstream")
    left, right = g.add_vertex("left", 8), g.add_vertex("right", 2)
    join, sink = g.add_vertex("join"), g.add_vertex("sink", 3)
    g.connect(left, join, Partitioner.hash("k"), join=JoinInput("j1", "inner", "left", True))
    g.connect(right, join, Partitioner.hash("k"), join=JoinInput("j1", "inner", "right"))
    g.connect(join, sink, Partitioner.FORWARD)
    g.connect(sink, g.add_vertex("after"), Partitioner.hash("z"))
    run = run_join(g, {"left": 16 * MiB, "right": MiB})
    event = decision(run)
    assert event.parallelism == 3 and event.joins[0].side == "right"
    infos = dict(event.input_infos)
    assert infos["left->join"] == PartitionRangesInputInfo(3, (0, 3, 6, 8))  # 48, 48, 32 MiB
    assert infos["right->join"] == WholeInputInfo(2, 3, 3)
    why = run.state.growth.explanations["join"].text
    assert why.startswith("forward group with 'sink'") and "set by the user: 3; join 'j1'" in why
    assert "sink" not in run.state.growth.explanations  # the user's own, nothing decided for it
