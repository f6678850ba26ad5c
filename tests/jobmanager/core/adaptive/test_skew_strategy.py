"""``execution.batch.adaptive.skewed-join-optimization.strategy`` in the core, from simulated
bytes: what a join vertex's explanation says of a hot key it found, and whether it cut it.

The graphs are what the planner makes of a join followed by an aggregate on its key: under
``auto`` the aggregate sits in the join's task, so neither side is splittable and both carry a
join mark that says something after the join relies on its hashing (``redistributable`` off);
under ``forced`` the aggregate is behind a hash exchange of its own and the sides are
splittable."""

from __future__ import annotations

from dataclasses import replace

import pytest

from jobmanager.core.scheduler.adaptive.decider import decide_vertex
from jobmanager.core.scheduler.adaptive.decision import DeciderSettings, InputStats
from jobmanager.model.config import SKEWED_JOIN_STRATEGY, SKEWED_THRESHOLD
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.model.joins import JoinInput
from tests.jobmanager.core.adaptive.test_adaptive_runs import skewed_model
from tests.jobmanager.core.harness import Run

MiB = 1 << 20
STRATEGY = SKEWED_JOIN_STRATEGY.key
THRESHOLD = SKEWED_THRESHOLD.key
HOT, OTHER = 100 * MiB, MiB // 4  # subpartition 5 of the probe side is hot


def join_job(splittable: bool, kind: str = "inner") -> JobGraph:
    g = JobGraph("skewed join")
    probe = g.add_vertex("probe", parallelism=40)
    build = g.add_vertex("build", parallelism=4)
    join = g.add_vertex("join", max_parallelism=64)
    relies = not splittable  # auto: the aggregate sits in the join's task
    g.connect(
        probe,
        join,
        Partitioner.hash("k"),
        splittable=splittable,
        join=JoinInput("j1", kind, "left", redistributable=not relies),
    )
    g.connect(
        build,
        join,
        Partitioner.hash("k"),
        splittable=splittable and kind == "inner",
        join=JoinInput("j1", kind, "right", redistributable=not relies),
    )
    return g


def run(job: JobGraph, strategy: str) -> Run:
    done = Run(
        job, {STRATEGY: strategy, THRESHOLD: "64 mb"}, byte_model=skewed_model(5, HOT, OTHER)
    )
    assert done.go().status == "FINISHED"
    done.check_invariants()
    return done


def readers_of_the_hot_key(done: Run) -> int:
    ejv = done.state.graph.job_vertex("join")
    info = ejv.input_infos["probe->join"]
    return sum(
        1 for k in range(ejv.parallelism) if any(5 in sl.subpartitions for sl in info[k].slices)
    )


@pytest.mark.parametrize("kind", ["inner", "left"])
def test_auto_names_the_hot_key_it_left_whole_and_the_strategy_that_cuts_it(kind):
    done = run(join_job(splittable=False, kind=kind), "auto")
    why = done.state.growth.explanations["join"].text
    assert (
        f"skewed subpartition 5 of 'probe->join' ({HOT * 40} bytes) not cut: the join's "
        "task relies on its hash partitioning (skipped under strategy auto; forced"
    ) in why
    assert "cut into" not in why
    assert readers_of_the_hot_key(done) == 1


def test_forced_cuts_the_hot_key_of_the_join_the_planner_left_splittable():
    done = run(join_job(splittable=True), "forced")
    why = done.state.growth.explanations["join"].text
    assert f"skewed subpartition 5 of 'probe->join' ({HOT * 40} bytes) cut into" in why
    assert "not cut" not in why
    assert readers_of_the_hot_key(done) >= 4


def test_none_cuts_nothing_and_says_nothing_of_skew():
    done = run(join_job(splittable=True), "none")
    assert "skewed" not in done.state.growth.explanations["join"].text
    assert readers_of_the_hot_key(done) == 1


def test_a_side_its_join_kind_never_cuts_is_only_not_splittable():
    """The right side of a left outer join keeps its unmatched rows out: no strategy cuts it,
    so its note names no strategy."""
    settings = DeciderSettings(data_volume_per_task=10 * MiB, skewed_threshold=20 * MiB)
    sub = [5 * MiB] * 8
    sub[3] = 100 * MiB
    marked = replace(
        InputStats.all_to_all("dims->join", sub, 4), join=JoinInput("j1", "left", "right")
    )
    why = decide_vertex([marked], None, 64, settings).explanation.text
    assert (
        "skewed subpartition 3 of 'dims->join' (104857600 bytes) not cut: the input is not "
        "splittable" in why
    )
