"""The local start changes Ray's start-up code for the length of the start alone, whatever
happens in it, and leaves the dashboard's start alone when the dashboard is wanted. (A
cluster started this way: tests/jobmanager/runtime/test_first_job_on_ray.py.)"""

from __future__ import annotations

import pytest
from ray._private import node, services

from jobmanager.client.local_start import wait_until, without_idle_waits


def test_rays_start_up_code_is_its_own_again_once_the_start_is_over():
    get_node, start_api_server = services.get_node, node.Node.start_api_server
    with without_idle_waits(dashboard=False):
        assert services.get_node is not get_node
        assert node.Node.start_api_server is not start_api_server
        assert (
            node.Node.start_api_server(object(), include_dashboard=False, raise_on_failure=False)
            is None
        )
    assert services.get_node is get_node and node.Node.start_api_server is start_api_server


def test_a_start_that_fails_leaves_rays_start_up_code_as_it_was():
    get_node, start_api_server = services.get_node, node.Node.start_api_server
    with pytest.raises(ConnectionError), without_idle_waits(dashboard=False):
        raise ConnectionError("no cluster")
    assert services.get_node is get_node and node.Node.start_api_server is start_api_server


def test_a_wanted_dashboard_is_started_as_ray_starts_it():
    start_api_server = node.Node.start_api_server
    with without_idle_waits(dashboard=True):
        assert node.Node.start_api_server is start_api_server


def test_wait_until_asks_until_the_condition_holds():
    answers, asked = iter([False, False, True]), []
    assert wait_until(lambda: asked.append(1) or next(answers), timeout_s=5)
    assert len(asked) == 3


def test_wait_until_gives_up_at_its_timeout():
    assert not wait_until(lambda: False, timeout_s=0.05)
