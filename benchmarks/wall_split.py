"""A job's wall time split into Spark's work on its critical path and Tidal's own.

Every finished task reports how long it spent in each phase (``taskmanager.timing``): planning
its Spark query (``spark_plan``) and running it into Arrow (``spark_run``) are Spark's work,
everything else is Tidal's (fetching code and descriptors, reading and writing partitions,
writing Spark's input files, waiting). A task runs its phases in order, its Spark query just
before it writes its output, so its Spark interval ends where its output writing began: the
task's finish, as the JobManager logged it, less its ``write_output`` time.

Spark's work on the critical path is the length of the union of those intervals: the time in
which some Spark query of the job was being planned or run. Two slots running Spark at once
count once, and a Spark query that waited for nothing else is never counted as Tidal's. What
is left of the job's wall time is Tidal's own: the time no Spark query of the job ran.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["SPARK_PHASES", "spark_intervals", "split_wall", "union_ms"]

SPARK_PHASES = ("spark_plan", "spark_run")


def spark_intervals(records: Iterable[tuple[int, object]]) -> list[tuple[int, int]]:
    """``(start_ms, end_ms)`` of each finished task's Spark work, from the job's event log
    records (``(time_ms, event)``, ``jobmanager.runtime.eventlog.read_log``)."""
    from jobmanager.messages import events as ev

    intervals = []
    for time_ms, event in records:
        if type(event) is not ev.TaskFinished or event.metrics is None:
            continue
        phases = dict(event.metrics.phases)
        spark_ms = sum(phases.get(name, 0) for name in SPARK_PHASES)
        if spark_ms:
            end = time_ms - phases.get("write_output", 0)
            intervals.append((end - spark_ms, end))
    return intervals


def union_ms(intervals: Iterable[tuple[int, int]]) -> int:
    """How long at least one of ``intervals`` was open."""
    covered, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            covered += end - start
            reach = end
        elif end > reach:
            covered += end - reach
            reach = end
    return covered


def split_wall(records: Iterable[tuple[int, object]], wall_seconds: float) -> dict[str, float]:
    """``spark_seconds`` (Spark's work on the critical path, at most the wall time),
    ``own_seconds`` (the rest) and ``own_share`` (its part of the wall time)."""
    spark = min(wall_seconds, union_ms(spark_intervals(records)) / 1000)
    own = wall_seconds - spark
    return {
        "spark_seconds": round(spark, 3),
        "own_seconds": round(own, 3),
        "own_share": round(own / wall_seconds, 3) if wall_seconds > 0 else 0.0,
    }
