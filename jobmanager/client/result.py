"""A job's result as the client hands it to the user: built from the status dict the JobManager
answers with (``jobmanager.runtime.status``)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["JobResult", "VertexReport"]


@dataclass(frozen=True)
class VertexReport:
    name: str
    parallelism: int | None
    explanation: str
    tasks: int
    finished: int
    deployments: int
    rows_in: int
    rows_out: int
    bytes_in: int
    bytes_out: int
    duration_s: float | None
    bytes_in_remote: int = 0
    phases_ms: dict = field(default_factory=dict)  # where its tasks' time went, summed
    queued_ms: int = 0
    chain: str = ""  # the task it runs in, when chained with others (``a -> b``)
    spark_jobs: int = 0

    @staticmethod
    def of(entry: dict) -> VertexReport:
        return VertexReport(
            entry["name"], entry["parallelism"], entry["explanation"], entry["tasks"],
            entry["finished"], entry["deployments"], entry["rows_in"], entry["rows_out"],
            entry["bytes_in"], entry["bytes_out"], entry["duration_s"],
            entry.get("bytes_in_remote", 0), dict(entry.get("phases_ms", {})),
            entry.get("queued_ms", 0),
            entry["name"] if len(entry.get("members", ())) > 1 else "",
            entry.get("spark_jobs", 0),
        )  # fmt: skip


@dataclass(frozen=True)
class JobResult:
    job_id: str
    status: str
    cause: str
    duration_s: float | None
    max_running_tasks: int
    vertices: dict[str, VertexReport] = field(default_factory=dict)  # by the job graph's names:
    # vertices chained into one task share its report (its ``chain`` names the task)

    @property
    def succeeded(self) -> bool:
        return self.status == "FINISHED"

    @staticmethod
    def of(status: dict) -> JobResult:
        ended = status.get("ended_at")
        duration = round(ended - status["submitted_at"], 3) if ended else None
        return JobResult(
            status["job_id"],
            status["status"],
            status["cause"],
            duration,
            status["max_running_tasks"],
            {member: report for v in status["vertices"] for report in (VertexReport.of(v),)
             for member in v.get("members") or [v["name"]]},  # fmt: skip
        )
