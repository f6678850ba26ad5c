"""Joining a Ray cluster, or starting one, the way a user of Ray expects.

- ``address`` (or ``RAY_ADDRESS``): join that cluster; ``"local"``, as for ``ray.init``, starts
  a new one inside this process even where another runs (a benchmark's fresh cluster).
- none: join the local cluster ``ray start`` started, else start one inside this process, which
  ends with it; ``keep_running`` (``tidal run --detach``) starts one with ``ray start --head``
  instead, which outlives the command.

A cluster started here has Ray's dashboard (its web UI, and the job API ``ray job submit``
uses) unless ``dashboard`` is False, which saves 0.7 s of start-up (the median of 9 fresh
starts on 2 cores) and 200 MB of memory in a dozen processes; the cluster then has no
dashboard process at all. Either way, the start asks whether the raylet has registered every
25 ms, not every second (``jobmanager.client.local_start``). Ray's metrics export does not
depend on the dashboard: every node's dashboard agent serves its processes' metrics, Tidal's
JobManagers' among them, at the node's ``metrics_export_port`` either way.

Ray's token authentication: Ray turns it on for a new local cluster and for ``ray start --head``
once a token exists (``~/.ray/auth_token``), but a client given an explicit address only sends
its token when ``RAY_AUTH_MODE=token`` is set, and otherwise retries for 20 s before failing.
So when the token is available the way Ray looks for it (``RAY_AUTH_TOKEN``,
``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``), Tidal sends it (a cluster without
authentication accepts it), which also keeps Ray's warning about it out of Tidal's output; and
when a cluster asks for a token this client does not have, a probe of its GCS says so at once.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading

import ray

from jobmanager.client.local_start import without_idle_waits
from jobmanager.errors import TidalError
from jobmanager.runtime.names import NAMESPACE

__all__ = ["ClusterConnectionError", "connect"]

_AUTH_MODE = "RAY_AUTH_MODE"
_PROBE_TIMEOUT_S = 5.0
_DEFAULT_PORT = 6379  # Ray's
_DEFAULT_DASHBOARD_PORT = 8265  # Ray's
_HOW_TO_AUTHENTICATE = (
    "it uses Ray's token authentication and this machine has no token for it: copy the "
    "cluster's token (`ray get-auth-token` on its head node) to ~/.ray/auth_token, or set "
    "RAY_AUTH_TOKEN (RAY_AUTH_MODE=disabled only for a cluster started without authentication)"
)


class ClusterConnectionError(TidalError):
    """The Ray cluster cannot be joined or started; says why and what to do."""


def connect(
    address: str | None = None,
    *,
    num_cpus: int | None = None,
    log_to_driver: bool = False,
    keep_running: bool = False,
    dashboard: bool = True,
) -> str:
    """Join or start the cluster (see the module docstring); what was done, in words."""
    if ray.is_initialized():
        return "joined"
    options = dict(namespace=NAMESPACE, logging_level=logging.WARNING, log_to_driver=log_to_driver)
    address = address or os.environ.get("RAY_ADDRESS") or None
    if _has_token():
        _set_auth_mode("token")
    if address == "local":
        _set_auth_mode("token")
        _start_local("local", {**options, "num_cpus": num_cpus}, dashboard)
        return "started a Ray cluster in this process (it ends with it)"
    if address and address != "auto":
        _probe(address)
        _init(address, options)
        return f"joined the Ray cluster at {address}"
    return _join_local_or_start(address, options, num_cpus, keep_running, dashboard)


def _join_local_or_start(
    address: str | None, options: dict, num_cpus: int | None, keep_running: bool, dashboard: bool
) -> str:
    """Join the cluster running on this machine, else (unless ``address`` is ``auto``) start
    one: a head that outlives the process with ``keep_running``, else one in this process."""
    local = _local_cluster()
    if local is not None:
        _probe(local)
        _init("auto", options)
        return f"joined the local Ray cluster at {local}"
    if address == "auto":
        raise ClusterConnectionError("no Ray cluster runs on this machine (address 'auto')")
    _set_auth_mode("token")  # what Ray does for a new cluster, said explicitly: no warning
    if keep_running:
        started = _start_head(num_cpus, dashboard)
        _init("auto", options)
        return started
    _start_local(None, {**options, "num_cpus": num_cpus}, dashboard)
    return "started a Ray cluster in this process (it ends with it)"


def _has_token() -> bool:
    from ray._raylet import AuthenticationTokenLoader
    from ray.exceptions import AuthenticationError

    try:
        return AuthenticationTokenLoader.instance().has_token(ignore_auth_mode=True)
    except AuthenticationError:  # RAY_AUTH_TOKEN_PATH names a file that is not there
        path = os.environ.get("RAY_AUTH_TOKEN_PATH", "")
        raise ClusterConnectionError(
            f"RAY_AUTH_TOKEN_PATH names {path}, which cannot be read or is empty"
        ) from None


def _set_auth_mode(mode: str) -> None:
    """Unless the user chose one, as Ray's own setup does (it caches its settings)."""
    if os.environ.get(_AUTH_MODE) is not None:
        return
    from ray._raylet import Config

    os.environ[_AUTH_MODE] = mode
    Config.initialize("")


def _local_cluster() -> str | None:
    """The address of the cluster running on this machine: the one ``ray start`` last started
    (Ray keeps its address in its temporary directory, ``$RAY_TMPDIR`` or ``$TMPDIR``, else
    ``/tmp``), else the only one running (a cluster a program started in-process), as Ray's
    ``address="auto"`` finds it."""
    from ray._private.services import find_bootstrap_address, find_gcs_addresses

    running = find_gcs_addresses()
    try:
        address = find_bootstrap_address(None)
    except OSError:  # an unreadable address file: as if there were none
        address = None
    if address in running:
        return address
    return next(iter(running)) if len(running) == 1 else None


def _probe(address: str) -> None:
    """Ask the cluster's GCS once (milliseconds) whether it lets this client in; an address
    that does not answer in time is left to ``ray.init`` to report."""
    if "://" in address:
        return
    from ray._raylet import GcsClient
    from ray.exceptions import AuthenticationError

    outcome: list[BaseException | None] = []

    def ask() -> None:
        try:
            GcsClient(address=address)
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - carried to the caller
            outcome.append(error)

    asker = threading.Thread(target=ask, name="tidal-gcs-probe", daemon=True)
    asker.start()
    asker.join(_PROBE_TIMEOUT_S)
    if outcome and isinstance(outcome[0], AuthenticationError):
        raise ClusterConnectionError(
            f"cannot join the Ray cluster at {address}: {_HOW_TO_AUTHENTICATE}"
        )


def _init(address: str | None, options: dict) -> None:
    try:
        ray.init(address=address, **options)
    except ConnectionError as error:
        where = f"at {address}" if address and address != "auto" else "on this machine"
        raise ClusterConnectionError(f"cannot join the Ray cluster {where}: {error}") from None


def _start_local(address: str | None, options: dict, dashboard: bool) -> None:
    with without_idle_waits(dashboard):
        _init(address, {**options, "include_dashboard": dashboard})


def _start_head(num_cpus: int | None, dashboard: bool) -> str:
    """``ray start --head``: a local cluster that outlives this process, on Ray's default
    ports (its dashboard's too) unless another cluster holds them."""
    command = [
        os.path.join(os.path.dirname(sys.executable), "ray"),
        "start",
        "--head",
        f"--port={_free_port(_DEFAULT_PORT)}",
        "--disable-usage-stats",
        f"--include-dashboard={str(dashboard).lower()}",
    ]
    if dashboard:  # as for the GCS: Ray's port, or a free one if another cluster holds it
        command.append(f"--dashboard-port={_free_port(_DEFAULT_DASHBOARD_PORT)}")
    if num_cpus:
        command.append(f"--num-cpus={num_cpus}")
    started = subprocess.run(command, capture_output=True, text=True)
    if started.returncode != 0:
        last = (started.stderr or started.stdout).strip().splitlines()[-1:] or ["no output"]
        raise ClusterConnectionError(f"could not start a local Ray cluster: {last[0]}")
    return (
        "started a local Ray cluster that keeps running after this command "
        "(stop it with `ray stop`)"
    )


def _free_port(preferred: int) -> int:
    for port in (preferred, 0):
        with socket.socket() as probe:
            try:
                probe.bind(("", port))
            except OSError:
                continue
            return probe.getsockname()[1]
    raise ClusterConnectionError("no free port for a local Ray cluster")
