import pytest

from jobmanager.core.scheduler.slots import SlotPool, slots_needed
from jobmanager.errors import NoResourceAvailableError
from jobmanager.model.config import MAX_SLOTS, NUMBER_OF_TASK_SLOTS, SLOT_PREFETCH
from tests.builders import PIPELINED, TopologyBuilder


def region_vertices(parallelism_a, parallelism_b):
    b = TopologyBuilder()
    b.connect_all_to_all(b.add_vertices(parallelism_a), b.add_vertices(parallelism_b), PIPELINED)
    graph, regions = b.build()
    return list(regions)[0].vertices


def test_slot_sharing_needs_one_slot_per_subtask_of_the_widest_vertex():
    assert slots_needed(region_vertices(3, 5)) == 5
    assert slots_needed(region_vertices(1, 1)) == 1


def test_a_bulk_gets_all_its_slots_or_waits():
    pool = SlotPool(slots_per_task_manager=2, max_slots=None)
    wide = region_vertices(3, 3)
    narrow = region_vertices(1, 1)
    pool.submit(wide)
    pool.submit(narrow)
    assert pool.task_managers_to_request() == [2, 2]  # 4 slots wanted, 2 per TaskManager
    assert pool.task_managers_to_request() == []  # already asked for
    pool.register("tm-0", 2)
    assert pool.fulfil() == []  # the head needs 3: nothing partial, and no overtaking
    pool.register("tm-1", 2)
    granted = pool.fulfil()
    assert [len(slots) for _, slots in granted] == [3, 1]
    assert pool.fulfil() == []


def test_released_slots_serve_the_next_request_in_order():
    pool = SlotPool(1, max_slots=1)
    first, second = region_vertices(1, 1), region_vertices(1, 1)
    pool.submit(first)
    pool.submit(second)
    assert pool.task_managers_to_request() == [1]
    pool.register("tm", 1)
    ((request, (slot,)),) = pool.fulfil()
    assert request.vertices is first
    pool.acquire(slot)
    assert pool.fulfil() == []
    pool.release(slot)
    ((request, _),) = pool.fulfil()
    assert request.vertices is second


def test_a_region_larger_than_the_cluster_may_grow_is_refused_by_name():
    pool = SlotPool(1, max_slots=2)
    with pytest.raises(NoResourceAvailableError, match="needs 3 slots.*at most 2"):
        pool.submit(region_vertices(3, 1))


def test_lost_task_manager_slots_never_come_back():
    pool = SlotPool(2, None)
    pool.register("tm-0", 2)
    pool.submit(region_vertices(1, 1))
    ((_, (slot,)),) = pool.fulfil()
    pool.acquire(slot)
    pool.remove("tm-0")
    pool.release(slot)
    assert len(pool.free) == 0 and pool.total_slots == 0


def test_cancelled_requests_are_skipped_and_no_longer_demanded():
    pool = SlotPool(1, None)
    request = pool.submit(region_vertices(2, 2))
    pool.cancel(request)
    assert pool.task_managers_to_request() == []
    pool.register("tm", 1)
    assert pool.fulfil() == []


def test_the_last_task_manager_shrinks_to_stay_within_the_limit():
    pool = SlotPool(slots_per_task_manager=4, max_slots=6)
    pool.submit(region_vertices(6, 6))
    assert pool.task_managers_to_request() == [4, 2]


@pytest.mark.parametrize("prefetch", [0, 1, 2, 4])
def test_prefetch_queues_up_to_its_depth_of_single_tasks_behind_a_running_one(prefetch):
    """...once no more TaskManagers are coming: before that, tasks wait for their own slot."""
    from jobmanager.core.state import JobManagerState
    from jobmanager.messages import events as ev
    from jobmanager.model.config import Configuration
    from jobmanager.model.jobgraph import JobGraph

    g = JobGraph("prefetch")
    g.add_vertex("a", 8)
    config = Configuration(
        {
            SLOT_PREFETCH.key: prefetch,
            NUMBER_OF_TASK_SLOTS.key: 1,
            MAX_SLOTS.key: 1,
        }
    )
    state = JobManagerState(g, config)
    state.handle(ev.JobStarted())
    commands = state.handle(ev.TaskManagerRegistered("tm", 1)).commands
    assert [c.subtask for c in commands] == list(range(1 + prefetch))
    # each task that ends makes room for one more: the queue behind the running task stays full
    for subtask in range(8 - 1 - prefetch):
        commands = state.handle(ev.TaskFinished("a", subtask, 0)).commands
        assert [c.subtask for c in commands] == [subtask + 1 + prefetch]
    for subtask in range(8 - 1 - prefetch, 8):
        commands = state.handle(ev.TaskFinished("a", subtask, 0)).commands
        assert not [c for c in commands if hasattr(c, "subtask")]
    assert state.status.name == "FINISHED"


def test_followers_are_dealt_round_robin_over_the_busy_slots():
    pool = SlotPool(2, None, prefetch=2)
    pool.register("tm", 2)
    for vertex in region_vertices(6, 1)[:6]:
        pool.submit([vertex])
    granted = pool.fulfil()
    for _, (slot,) in granted:
        pool.acquire(slot)
    assert [slot.index for _, (slot,) in granted] == [0, 1, 0, 1, 0, 1]
    assert [slot.users for slot in pool.task_managers["tm"]] == [3, 3]
    pool.submit(region_vertices(1, 1)[:1])
    assert pool.fulfil() == []  # both slots hold a running task and two waiting ones
    pool.release(pool.task_managers["tm"][1])
    ((_, (slot,)),) = pool.fulfil()
    assert slot.index == 1


def test_shared_slots_take_no_follower():
    pool = SlotPool(1, None, prefetch=4)
    pool.register("tm", 1)
    region = region_vertices(1, 1)  # a pipelined pair sharing one slot
    pool.submit(region)
    ((_, (slot,)),) = pool.fulfil()
    for _ in region:
        pool.acquire(slot, shared=True)
    pool.submit(region_vertices(1, 1)[:1])
    assert pool.fulfil() == []
