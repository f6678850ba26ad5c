"""Taking a job over: the shell's half of a JobManager recovery.

Read the job's store (its submission, the latest snapshot, the events after it, the torn tail
cut off), rebuild the state by replay (``jobmanager.core.replay``: nothing is decided again),
then ask every TaskManager the ResourceManager still leases to the job what it holds and runs,
and hand the answers to the core as one ``JobManagerRecovered`` event. Every failure to read
the store is a ``JobStoreError`` naming it; a TaskManager that does not answer within
``execution.batch.job-recovery.previous-worker.recovery.timeout`` is lost, as the core reads it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import cloudpickle
import ray
import structlog

from blob import BlobKey
from jobmanager.core.executiongraph import ExecutionState
from jobmanager.core.replay import new_state, replay
from jobmanager.core.state import JobManagerState
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode, encode
from jobmanager.runtime.eventlog import JobStoreError
from jobmanager.runtime.jobstore import JobStore
from jobmanager.runtime.names import resource_manager_handle
from jobmanager.runtime.status import TaskLedger

__all__ = ["Replayed", "ask_leases", "reconnect", "replay_store"]

_log = structlog.get_logger("tidal.recovery")
_IN_FLIGHT = (ExecutionState.DEPLOYING, ExecutionState.RUNNING, ExecutionState.CANCELING)


@dataclass
class Replayed:
    submitted: ev.JobSubmitted
    graph: object
    state: JobManagerState
    ledger: TaskLedger
    events: int  # how many were replayed after the snapshot, if any
    from_snapshot: bool


def replay_store(store: JobStore, job_id: str) -> Replayed:
    if not store.exists():
        raise JobStoreError(f"job store {store.url} is missing: nothing to recover the job from")
    snapshot = store.latest_snapshot()
    records = store.records(snapshot.next_segment if snapshot else 0)
    if snapshot:
        submitted = store.submitted()
    else:  # read from its start, the log begins with the submission: not read twice
        submitted, records = store.submitted(records), records[1:]
    try:
        graph = cloudpickle.loads(store.blobs().get(BlobKey(submitted.graph_key)))
    except Exception as error:
        raise JobStoreError(
            f"job store {store.url}: the job graph cannot be read back: "
            f"{type(error).__name__}: {error}"
        ) from error
    state = new_state(graph, submitted, job_id, snapshot.state if snapshot else None)
    ledger = TaskLedger.restore(snapshot.ledger) if snapshot else TaskLedger()

    logged_at = [0.0]  # the time the event being replayed was logged, for the ledger

    def events():
        for time_ms, event in records:
            logged_at[0] = time_ms / 1000
            yield event

    def observe(event, commands) -> None:
        ledger.saw_event(event, logged_at[0])
        for command in commands:
            ledger.saw_command(command, logged_at[0])

    replay(state, events(), observe)
    return Replayed(submitted, graph, state, ledger, len(records), snapshot is not None)


def ask_leases(job_id: str):
    """Ask the ResourceManager which TaskManagers it leases to the job: the answer (a Ray
    reference), or the error of asking. Asked as the take-over begins, the round trip (and
    loading the TaskManagers' class for their handles) overlaps reading and replaying the
    store instead of following it."""
    try:
        return resource_manager_handle().leases_of.remote(job_id)
    except Exception as error:  # no ResourceManager: ``reconnect`` says so
        return error


def reconnect(
    job_id: str,
    state: JobManagerState,
    job_manager,
    shuffle_root: str,
    timeout_s: float,
    leases_asked=None,
) -> tuple[list[ev.TaskManagerReport], dict[str, object]]:
    """Ask each TaskManager leased to the job what is left of it; return the answers and the
    handles of those that answered. ``leases_asked``: what ``ask_leases`` returned, if it was
    called already."""
    if leases_asked is None:
        leases_asked = ask_leases(job_id)
    try:
        if isinstance(leases_asked, Exception):
            raise leases_asked
        leases = ray.get(leases_asked, timeout=timeout_s)
    except Exception as error:  # no ResourceManager to ask: every TaskManager counts as lost
        _log.warning("no leases to reconnect", job=job_id, error=repr(error))
        leases = []
    in_flight: dict[str, list[tuple[str, int, int]]] = {}
    for v in state.graph.vertices():
        if v.state in _IN_FLIGHT:
            in_flight.setdefault(v.slot.task_manager, []).append((v.name, v.subtask, v.attempt))
    asked = {
        tm: (
            handle,
            handle.rejoin.remote(
                job_id, job_manager, os.path.join(shuffle_root, tm), encode(in_flight.get(tm, []))
            ),
        )
        for tm, handle in leases
    }
    deadline = time.monotonic() + timeout_s
    reports, handles = [], {}
    for tm, (handle, answer) in asked.items():
        try:
            reports.append(decode(ray.get(answer, timeout=max(0.0, deadline - time.monotonic()))))
            handles[tm] = handle
        except Exception as error:
            _log.warning(
                "task manager did not rejoin",
                job=job_id,
                task_manager=tm,
                error=f"{type(error).__name__}: {error}".splitlines()[0],
            )
    return reports, handles
