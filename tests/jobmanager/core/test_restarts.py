from jobmanager.core.commands import StartTimer
from jobmanager.core.scheduler.restarts import PendingRestarts
from tests.builders import BLOCKING, TopologyBuilder


def subtasks(n):
    b = TopologyBuilder()
    b.connect_all_to_all(b.add_vertices(n), b.add_vertices(1), BLOCKING)
    graph, _ = b.build()
    return list(graph.vertices())[:n]


def test_the_timer_starts_once_every_running_subtask_confirmed_its_cancellation():
    a, b, c = subtasks(3)
    restarts = PendingRestarts()
    assert restarts.add([a, b, c], 500, awaiting_cancel=2) is None
    assert all(restarts.includes(v) for v in (a, b, c))
    assert restarts.canceled(a) is None
    assert restarts.canceled(b) == StartTimer(0, 500)
    assert restarts.take(0) == [a, b, c]
    assert not restarts.includes(a) and restarts.take(0) is None


def test_a_restart_awaiting_nothing_starts_its_timer_at_once_and_tokens_differ():
    a, b = subtasks(2)
    restarts = PendingRestarts()
    assert restarts.add([a], 10, awaiting_cancel=0) == StartTimer(0, 10)
    assert restarts.add([b], 20, awaiting_cancel=0) == StartTimer(1, 20)
    restarts.clear()
    assert restarts.take(0) is None and not restarts.includes(b)
