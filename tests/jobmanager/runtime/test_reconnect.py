"""A take-over that asked for the job's leases before replaying (``ask_leases``) and could not
reach the ResourceManager: no TaskManager is asked, and the core counts every one as lost."""

from types import SimpleNamespace

from jobmanager.runtime.recovery import reconnect


def _state_with_nothing_in_flight():
    return SimpleNamespace(graph=SimpleNamespace(vertices=list))


def test_leases_that_could_not_be_asked_leave_no_task_manager_to_reconnect():
    asked = ValueError("Failed to look up actor with name 'tidal-resource-manager'")
    reports, handles = reconnect(
        "job", _state_with_nothing_in_flight(), None, "/tmp/shuffle", 1.0, asked
    )
    assert (reports, handles) == ([], {})
