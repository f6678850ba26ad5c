"""Failover and the end of a job: the part of ``JobManagerState`` that restarts what a failure
hit (the regions the failover strategy names, after the restart strategy's back-off) and that
winds the job down when it fails, is cancelled, or finishes.

A mixin of the state, as ``Reconciling`` is, split out to keep each module about one thing.
What it offers the rest of the core (``fail_over``, ``canceled``, ``maybe_terminate``) is part
of ``StateOperations``, and it gives commands through ``emit``, as speculation does.
"""

from __future__ import annotations

from jobmanager.core import commands as cmd
from jobmanager.core.executiongraph import ExecutionState, ExecutionVertex
from jobmanager.messages.jobstatus import JobStatus

__all__ = ["Failing"]

S = ExecutionState


class Failing:
    # -- failover -------------------------------------------------------------------------------

    def fail_over(
        self,
        failed: list[ExecutionVertex],
        cause: str,
        time_ms: int,
        counted: bool = True,
        backoff: bool = True,
    ) -> None:
        """Restart what ``failed`` needs. ``counted`` False: not a failure of the job (a task
        whose deployment died with a JobManager), so no back-off and no restart attempt used.
        ``backoff`` False: a failure that counts, restarted at once (a lost process)."""
        if self.status is not JobStatus.RUNNING:
            return
        if counted and not self._may_restart(cause, time_ms):
            return
        vertices = self._to_restart(failed)
        if not vertices:
            return
        awaiting = sum(v.state in (S.DEPLOYING, S.RUNNING) for v in vertices)
        delay_ms = self.backoff.backoff_ms() if counted and backoff else 0
        timer = self.restarts.add(vertices, delay_ms, awaiting)
        self._stop(vertices)
        self.log.info("failover", cause=cause, restarting=len(vertices), delay_ms=delay_ms)
        if timer is not None:
            self.emit(timer)

    def _stop(self, vertices: list[ExecutionVertex]) -> None:
        """Cancel the subtasks that run, withdraw those waiting for a slot, before a restart."""
        for v in vertices:
            if v.state in (S.DEPLOYING, S.RUNNING):
                self.cancel(v)
            elif v.state is S.SCHEDULED:
                self.withdraw(v)

    def _may_restart(self, cause: str, time_ms: int) -> bool:
        """Count a failure of the job; False (the job failed) when no restart is left."""
        if not self.failure_cause:
            self.failure_cause = cause
        self.backoff.notify_failure(time_ms)
        if self.backoff.can_restart():
            return True
        self._fail_job(f"{cause}; no restart left ({self.backoff})")
        return False

    def _to_restart(self, failed: list[ExecutionVertex]) -> list[ExecutionVertex]:
        """The subtasks the failover restarts that are not restarting yet. A subtask never
        scheduled has nothing to restart: it stays CREATED and is scheduled once its inputs
        are back (lost partitions do not count as produced)."""
        return [
            v
            for v in self.failover.tasks_to_restart(failed)
            if not self.restarts.includes(v) and v.state is not S.CREATED
        ]

    def canceled(self, v: ExecutionVertex) -> None:
        self.free_slot(v)
        self.graph.transitions.move(v, S.CANCELED)
        timer = self.restarts.canceled(v)
        if timer is not None:
            self.emit(timer)
        self.maybe_terminate()

    def _reset(self, v: ExecutionVertex) -> None:
        if v.state is S.CREATED:
            return
        if v.state is S.FINISHED:
            self.release.vertex_unfinished(v)
            ejv = v.job_vertex
            if ejv.unfinished == 0:
                self.graph.unfinished_job_vertices += 1
            ejv.unfinished += 1
        self.release_partitions(v.produced)
        for partition in v.produced:
            partition.reset()
        v.attempt = self.speculation.next_attempt(v)
        self.graph.transitions.move(v, S.CREATED)

    # -- job life cycle ---------------------------------------------------------------------------

    def _fail_job(self, cause: str) -> None:
        self.failure_cause = cause
        self.log.error("job failing", cause=cause)
        self._wind_down(JobStatus.FAILING)

    def _wind_down(self, status: JobStatus) -> None:
        self.status = status
        self.restarts.clear()
        for v in self.graph.vertices():
            if v.state in (S.DEPLOYING, S.RUNNING):
                self.cancel(v)
            elif v.state is S.SCHEDULED:
                self.withdraw(v)
        self.maybe_terminate()

    def maybe_terminate(self) -> None:
        if self._active == 0 and self.status in (JobStatus.FAILING, JobStatus.CANCELLING):
            final = JobStatus.FAILED if self.status is JobStatus.FAILING else JobStatus.CANCELED
            self._terminate(final, self.failure_cause)

    def _terminate(self, status: JobStatus, cause: str) -> None:
        self.status = status
        self.release_partitions(
            [p for result in self.graph.results.values() for p in result.partitions]
        )
        self.log.info("job terminated", status=status.value, cause=cause or None)
        self.emit(cmd.JobTerminated(status, cause))
