"""Running the real core against simulated TaskManagers, with the invariants every run keeps."""

from __future__ import annotations

import random
from collections import Counter

from jobmanager.core import commands as cmd
from jobmanager.core.executiongraph import ExecutionState
from jobmanager.core.state import JobManagerState
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode, encode
from jobmanager.model.config import AVG_DATA_VOLUME_PER_TASK, Configuration
from jobmanager.simulation.cluster import SimulatedRun, SimulatedTaskManagers, TaskFault


# the simulated runs' bytes are sized for 16 MiB a task (Flink's default, Tidal's before it
# took Spark's 64 MiB): a test says how many tasks its bytes make, whatever the default
SIZED = {AVG_DATA_VOLUME_PER_TASK.key: "16 mb"}


class Run:
    def __init__(self, job, config=None, faults=(), seed=None, inject=None, **cluster):
        self.job = job
        self.config = Configuration({**SIZED, **(config or {})})
        self.state = JobManagerState(job, self.config, job_id="test")
        self.cluster = SimulatedTaskManagers(
            self.state.graph,
            faults=[TaskFault(*f) if isinstance(f, tuple) else f for f in faults],
            **cluster,
        )
        self.max_active = 0
        self._handle = self.state.handle
        self.state.handle = self._observed_handle
        self.run = SimulatedRun(
            self.state,
            self.cluster,
            record=True,
            shuffle=random.Random(seed) if seed is not None else None,
            inject=inject or {},
        )

    def _observed_handle(self, event):
        out = self._handle(event)
        self.max_active = max(self.max_active, self.state._active)
        return out

    def go(self):
        terminated = self.run.run()
        assert terminated is not None, "the job never terminated"
        return terminated

    @property
    def attempts(self) -> Counter:
        return Counter((v, s) for v, s, _ in self.cluster.deployed)

    def check_invariants(self):
        deployed = self.cluster.deployed
        assert len(deployed) == len(set(deployed)), "a task attempt was deployed twice"
        per_task: dict[tuple[str, int], list[int]] = {}
        for v, s, a in deployed:
            per_task.setdefault((v, s), []).append(a)
        for attempts in per_task.values():
            assert attempts == sorted(attempts)
        if self.state.status.value == "FINISHED":
            for v in self.state.graph.vertices():
                assert v.state is ExecutionState.FINISHED
                assert per_task[(v.name, v.subtask)][-1] == v.attempt
            assert self.state._active == 0
        self.check_replay()

    def check_replay(self, config=None):
        """Replaying the recorded events (decisions included), through msgpack, into a fresh
        state gives the same state. The replay decides nothing, and the commands it returns are
        dropped, as a recovering JobManager's are."""
        fresh = JobManagerState(
            self.job, Configuration(config) if config else self.config, job_id="test"
        )
        for event in self.run.events:
            fresh.apply(decode(encode(event)))
        assert fresh.describe() == self.state.describe()
        return fresh


def terminated_status(run: Run) -> str:
    return run.go().status


__all__ = ["Run", "cmd", "ev", "terminated_status"]
