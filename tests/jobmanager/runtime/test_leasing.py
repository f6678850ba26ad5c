"""The order and the means by which waiting TaskManager requests are served."""

from hypothesis import given
from hypothesis import strategies as st

from jobmanager.runtime.leasing import Create, Request, Reuse, plan

ONE, TWO = (1, ""), (2, "")


def test_an_idle_task_manager_of_the_shape_is_reused_before_any_new_one():
    grants = plan([Request(0, "b", ONE)], [("tm-0", ONE)], [], free_cpus=0, total_cpus=2)
    assert grants == [Reuse(0, "tm-0")]


def test_idle_ones_of_another_shape_are_stopped_to_free_their_cpus():
    grants = plan([Request(0, "b", TWO)], [("tm-0", ONE), ("tm-1", ONE)], [], 0, 2)
    assert grants == [Create(0, ("tm-1", "tm-0"))]


def test_a_new_one_is_started_on_free_cpus_without_stopping_idle_ones():
    assert plan([Request(0, "b", TWO)], [("tm-0", ONE)], [], 2, 3) == [Create(0, ())]


def test_a_request_waits_for_a_warm_one_on_its_way_back_rather_than_starting_one():
    assert plan([Request(0, "b", ONE)], [], [ONE], free_cpus=1, total_cpus=2) == []
    # two requests, one coming back: the second starts a new one on the free CPU
    assert plan([Request(0, "b", ONE), Request(1, "b", ONE)], [], [ONE], 1, 2) == [Create(1, ())]


def test_the_first_request_that_cannot_be_served_blocks_new_task_managers_behind_it():
    waiting = [Request(0, "a", TWO), Request(1, "b", ONE)]
    assert plan(waiting, [], [], free_cpus=1, total_cpus=2) == []
    # not even an idle one of the later request's shape: its CPU is what the first one needs
    assert plan(waiting, [("tm-0", ONE)], [], free_cpus=0, total_cpus=2) == []


def test_a_request_larger_than_the_cluster_goes_through_rather_than_blocking_everyone():
    assert plan([Request(0, "a", (4, ""))], [], [], 2, 2) == [Create(0, ())]


@given(
    st.lists(st.sampled_from([ONE, TWO]), max_size=8),
    st.lists(st.sampled_from([ONE, TWO]), max_size=4),
    st.integers(0, 4),
)
def test_grants_never_overcommit_the_cluster_nor_hand_out_a_task_manager_twice(shapes, idle, free):
    idle = [(f"tm-{i}", shape) for i, shape in enumerate(idle)]
    total = free + sum(shape[0] for _, shape in idle) + 2
    waiting = [Request(i, f"job-{i}", shape) for i, shape in enumerate(shapes)]
    grants = plan(waiting, idle, [], free, total)
    reused = [g.task_manager for g in grants if isinstance(g, Reuse)]
    stopped = [t for g in grants if isinstance(g, Create) for t in g.stop]
    assert len(set(reused + stopped)) == len(reused) + len(stopped)
    created = sum(waiting[g.ticket].shape[0] for g in grants if isinstance(g, Create))
    freed = sum(shape[0] for t, shape in idle if t in stopped)
    assert created <= free + freed
    # served in order: the granted tickets, those that needed a new TaskManager, form a prefix
    served = {g.ticket for g in grants}
    first_unserved = next((r.ticket for r in waiting if r.ticket not in served), len(waiting))
    assert all(g.ticket < first_unserved for g in grants if isinstance(g, Create))
