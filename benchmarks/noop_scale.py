"""Scheduling overhead at scale: a no-op N x N all-to-all blocking job, Tidal against PySpark.

Measures, in one run,

- Tidal: a job of two Arrow vertices with parallelism N each -- a source whose function takes
  no input and returns a one-row table, then a vertex that returns its input -- joined by an
  ALL_TO_ALL BLOCKING REBALANCE edge, so 2N tasks and N x N subpartition reads; timed from
  submit until ``wait()`` returns, on a local Ray cluster started beforehand. Arrow tasks start
  no JVM, so this is the scheduling cost; ``--pyspark-vertices`` also runs the same job with
  PySpark vertices (a Spark query per task), what a PySpark user pays;
- baseline: the same shape in PySpark alone (``local[2]``): ``spark.range`` over N partitions,
  ``repartition(N)``, written to Spark's no-op sink, with adaptive query execution off so the
  shuffle keeps its N partitions (the task counts per stage are printed to show it); timed from
  planning until the write returns, on a session started beforehand.

The data is a row per task: what is measured is scheduling, deployment and shuffle bookkeeping.
Both sides run warm, as a long-lived service runs: PySpark in a started session, Tidal on a
cluster whose TaskManagers stay up between jobs and whose standby JobManager is ready
(``Client.warm_up`` before each timed run of either side, so neither shares the machine with a
JobManager process starting).
Each side first runs ``--warmups`` unmeasured jobs (one by default: a cold
JVM runs this job about four times slower than a warm one), then ``--repeats`` measured ones,
alternating. ``ratio`` is Tidal's median seconds over the baseline's (at most 0.8 at N = 4,000).
Prints human lines, then one JSON object as the last line. ``--baseline-only`` runs PySpark
alone.

``--sizes 1000,2000,4000`` measures how Tidal's cost grows instead: Tidal alone, the median
seconds per task at each size, and ``ratio`` the largest size's seconds per task over the
smallest's (1.0 is linear; the target is at most 1.3).

    python benchmarks/noop_scale.py                  # N = 1000
    python benchmarks/noop_scale.py --n 4000
    python benchmarks/noop_scale.py --sizes 1000,2000,4000
    python benchmarks/noop_scale.py --n 20 --warmups 0 --repeats 1
    python benchmarks/noop_scale.py --n 20 -D slotmanager.number-of-slots.max=2   # one TaskManager

``-D key=value`` sets a Tidal option for the Tidal side's jobs.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This folder holds shuffle.py, named like the shuffle package; run as a script, the folder
# comes first on sys.path and would shadow it, so the repository root takes its place.
_ROOT = Path(__file__).resolve().parent.parent
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(_ROOT)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402

import pyarrow as pa  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from examples.options import add_option_flag, parse_options  # noqa: E402
from jobmanager import JobGraph, Partitioner, ResultPartitionType, arrow, spark  # noqa: E402

TARGET_RATIO = 0.8  # at N = 4,000
TARGET_GROWTH = 1.3  # seconds per task, largest size over smallest
_JOB_GROUP = "tidal-noop-scale"


def one_row() -> pa.Table:
    return pa.table({"value": pa.array([1], pa.int64())})


def identity(table: pa.Table) -> pa.Table:
    return table


def one_row_frame():
    from pyspark.sql import SparkSession

    return SparkSession.active().range(1)


def same_frame(frame):
    return frame


def noop_graph(n: int, pyspark: bool = False) -> JobGraph:
    """Arrow tasks (no JVM: the scheduling cost alone), or, ``pyspark``, PySpark tasks (a
    Spark query each: what a PySpark user pays per task)."""
    graph = JobGraph(f"noop-{n}x{n}")
    first, second = (
        (spark(one_row_frame), spark(same_frame)) if pyspark else (arrow(one_row), arrow(identity))
    )
    source = graph.add_vertex("source", parallelism=n, operator=first)
    noop = graph.add_vertex("noop", parallelism=n, operator=second)
    graph.connect(source, noop, Partitioner.REBALANCE, ResultPartitionType.BLOCKING)
    return graph


def run_tidal(client, n: int, pyspark: bool = False, config: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    result = client.submit(noop_graph(n, pyspark), config=config).wait()
    seconds = time.perf_counter() - started
    if result.status != "FINISHED":
        raise SystemExit(f"Tidal job {result.status.lower()}: {result.cause}")
    tasks = {name: vertex.tasks for name, vertex in result.vertices.items()}
    if tasks != {"source": n, "noop": n}:
        raise SystemExit(f"Tidal ran {tasks} tasks, expected {n} per vertex")
    return seconds


def spark_session() -> SparkSession:
    """The baseline: two local cores, adaptive execution off (it would coalesce the N
    shuffle partitions into a handful), no UI."""
    session = (
        SparkSession.builder.master("local[2]")
        .appName("tidal-benchmark-noop-baseline")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def run_spark(session: SparkSession, n: int, run: int = 0) -> tuple[float, list[int]]:
    """Seconds, and the number of tasks of each stage the run's job ran (its job group is its
    own: a session used before, as the tests' is, has run other jobs in groups of this name)."""
    context = session.sparkContext
    group = f"{_JOB_GROUP}-{run}-{uuid.uuid4().hex[:8]}"
    context.setJobGroup(group, f"no-op {n} x {n}")
    started = time.perf_counter()
    session.range(0, n, 1, n).repartition(n).write.format("noop").mode("overwrite").save()
    seconds = time.perf_counter() - started
    tracker = context.statusTracker()
    stages = sorted(
        stage
        for job in tracker.getJobIdsForGroup(group)
        for stage in tracker.getJobInfo(job).stageIds
    )
    tasks = [tracker.getStageInfo(stage).numTasks for stage in stages]
    if tasks != [n, n]:
        raise SystemExit(f"PySpark ran stages of {tasks} tasks, expected [{n}, {n}]")
    return seconds, tasks


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="parallelism of both vertices")
    parser.add_argument("--repeats", type=int, default=3, help="measured runs (median)")
    parser.add_argument(
        "--warmups",
        type=int,
        default=1,
        help="unmeasured runs of each before them; 0 measures cold runs",
    )
    parser.add_argument("--address", default=None, help="Ray cluster (default: local)")
    parser.add_argument("--baseline-only", action="store_true", help="run PySpark alone")
    parser.add_argument(
        "--pyspark-vertices",
        action="store_true",
        help="also run the job with PySpark vertices on the Tidal side",
    )
    parser.add_argument(
        "--sizes",
        default=None,
        help="comma-separated N: Tidal's seconds per task at each (no baseline)",
    )
    add_option_flag(parser)
    args = parser.parse_args(argv)
    config = parse_options(args.options)
    if args.n < 1 or args.repeats < 1 or args.warmups < 0:
        parser.error("--n and --repeats must be at least 1, --warmups at least 0")
    if args.sizes:
        try:
            sizes = [int(n) for n in args.sizes.split(",")]
        except ValueError:
            parser.error(f"--sizes takes numbers separated by commas, not {args.sizes!r}")
        if len(sizes) < 2 or min(sizes) < 1:
            parser.error("--sizes needs at least two sizes of at least 1")
        return growth(sizes, args, config)

    session = spark_session()
    client = None
    if not args.baseline_only:
        from jobmanager import Client

        client = Client(address=args.address)
    tidal_runs, spark_runs, pyspark_runs = [], [], []
    try:
        for run in range(args.warmups + args.repeats):
            measured = run >= args.warmups
            if client is not None:
                client.warm_up()
                seconds = run_tidal(client, args.n, config=config)
                if measured:
                    tidal_runs.append(seconds)
                client.warm_up()
                if args.pyspark_vertices:
                    seconds = run_tidal(client, args.n, pyspark=True, config=config)
                    if measured:
                        pyspark_runs.append(seconds)
                    client.warm_up()
            seconds, tasks = run_spark(session, args.n, run)
            if measured:
                spark_runs.append(seconds)
    finally:
        session.stop()
    spark = statistics.median(spark_runs)
    print(
        f"PySpark: {args.n} x {args.n}, stages of {tasks} tasks, "
        f"{[round(s, 2) for s in spark_runs]} s",
        flush=True,
    )
    tidal = statistics.median(tidal_runs) if tidal_runs else None
    if tidal is not None:
        print(f"Tidal:   {args.n} x {args.n}, {[round(s, 2) for s in tidal_runs]} s", flush=True)
    summary = {
        "benchmark": "noop_scale",
        "n": args.n,
        "tasks": 2 * args.n,
        "repeats": args.repeats,
        "warmups": args.warmups,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "tidal_seconds": None if tidal is None else round(tidal, 3),
        "spark_seconds": round(spark, 3),
        "target_ratio": TARGET_RATIO,
        "ratio": None if tidal is None else round(tidal / spark, 3),
    }
    if pyspark_runs:
        with_pyspark = statistics.median(pyspark_runs)
        print(
            f"Tidal, PySpark vertices: {args.n} x {args.n}, {[round(s, 2) for s in pyspark_runs]} s",
            flush=True,
        )
        summary["tidal_pyspark_vertices_seconds"] = round(with_pyspark, 3)
        summary["pyspark_vertices_ratio"] = round(with_pyspark / spark, 3)
    print(json.dumps(summary), flush=True)
    return summary


def growth(sizes: list[int], args, config: dict[str, str]) -> dict[str, object]:
    """Tidal's median seconds per task at each size, warm, in one process."""
    from jobmanager import Client

    client = Client(address=args.address)
    per_task = {}
    for n in sizes:
        runs = []
        for run in range(args.warmups + args.repeats):
            client.warm_up()
            seconds = run_tidal(client, n, config=config)
            if run >= args.warmups:
                runs.append(seconds)
        per_task[n] = statistics.median(runs) / (2 * n)
        print(
            f"Tidal:   {n} x {n}, {[round(s, 2) for s in runs]} s, "
            f"{per_task[n] * 1000:.3f} ms per task",
            flush=True,
        )
    summary = {
        "benchmark": "noop_scale_growth",
        "sizes": sizes,
        "seconds_per_task": {str(n): round(s, 6) for n, s in per_task.items()},
        "repeats": args.repeats,
        "warmups": args.warmups,
        "cpus": os.cpu_count(),
        "target_ratio": TARGET_GROWTH,
        "ratio": round(per_task[sizes[-1]] / per_task[sizes[0]], 3),
    }
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    main()
