"""TPC-H Q1 and Q3 in Tidal against the same queries in PySpark alone, in one run.

Generates TPC-H-shaped data at ``--scale`` (scale factor 1 by default; cached between runs, see
``examples/tpch_data.py``), then, for each query, runs ``--warmups`` unmeasured and
``--repeats`` measured runs of

- Tidal: the job of ``examples/tpch_queries.py`` (no parallelism set but the global order's
  one task: the adaptive scheduler sizes every other vertex, with the per-task volume of the
  baseline's adaptive execution, ``tidal_config``) submitted on a local Ray cluster, timed
  from submit until
  ``wait()`` returns with the result committed as Parquet;
- baseline: the same query written for PySpark alone, ``local[2]`` with adaptive query
  execution on, timed from planning until its Parquet output is written.

The two alternate run by run so both see the same machine, and both run warm: PySpark in a
started session, Tidal with its TaskManagers kept between jobs and its standby JobManager ready
(``Client.warm_up`` before each timed run of either side, and each Tidal job's JobManager
gone before the next, so neither shares the machine with a JobManager process starting or
leaving). Both JVMs keep getting faster for ten runs of a query and more while the JIT
compiles Spark's code paths (Q1, one measured session: Tidal 1.93 s at its fifth run and
1.22 s at its fourteenth, PySpark 2.10 s and 1.49 s), so the warm-up runs, the same number
for both, decide how warm "warm" is, and single runs swing by a few tenths of a second. Both
results are checked against each other (and the baseline against an independent pyarrow
computation), and the parallelism Tidal decided for each vertex is printed with its reason.
Each query's ratio is Tidal's median seconds over the baseline's; ``ratio`` is the larger of
the two (the target is at most 1.0).
Q3's job sends its small sides whole into the lineitem scan from the start, where adaptive
execution reaches that broadcast join only after shuffling the lines; so PySpark also runs
Q3 in the job's plan (a broadcast hint), alternating with the other two:
``q3_spark_job_plan_seconds`` and ``q3_job_plan_ratio`` say how much of the difference is the
plan and what Tidal's runtime costs against Spark's on the same plan. The target stays
against the baseline.
Each query also prints where the last run's task time went, per vertex and phase
(``taskmanager.timing``): its JSON gives the totals per phase.
Before the warm runs, a cold figure for each query (``--cold-queries`` names fewer, ``--no-cold``
none): the first run on
a fresh local Ray cluster (the job a user runs first: TaskManagers and their JVMs start inside
it) against the first run in a fresh PySpark session, each in a process of its own, with the
start of the cluster or the session printed apart. No target yet; the warm ratio is the target.
The TaskManager's JVM maps the class archive ``deploy/run`` made (``taskmanager.class_archive``);
the baseline's session starts as PySpark starts it, without one.
Prints human lines, then one JSON object as the last line. ``--baseline-only`` measures the
PySpark half alone (its ratio is null).

    python benchmarks/tpch.py                         # scale 1, 3 warm-ups, 3 repeats
    python benchmarks/tpch.py --scale 0.01 --warmups 0 --repeats 1
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
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from functools import partial  # noqa: E402

from pyspark.sql import SparkSession  # noqa: E402

from examples.compare import first_difference, read_result  # noqa: E402
from examples.options import add_option_flag, parse_options  # noqa: E402
from examples.tpch_data import generate  # noqa: E402
from examples.tpch_queries import (  # noqa: E402
    q1,
    q3,
    reference_q1,
    reference_q3,
    spark_q1,
    spark_q3,
)

QUERIES = {
    "q1": (q1, spark_q1, reference_q1),
    "q3": (q3, spark_q3, reference_q3),
}
# The plan a Tidal job runs, where it is not the one adaptive execution picks: measured beside
# the baseline, so the figures say what Tidal's plan and what its runtime account for.
AS_THE_JOB = {"q3": partial(spark_q3, as_the_job=True)}
TARGET_RATIO = 1.0
BASELINE_DRIVER_MEMORY = "4g"


def spark_session() -> SparkSession:
    """The baseline: two local cores, adaptive query execution on, no UI."""
    session = (
        SparkSession.builder.master("local[2]")
        .appName("tidal-benchmark-tpch-baseline")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.driver.memory", BASELINE_DRIVER_MEMORY)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def run_spark(session: SparkSession, query, data: str, out: str) -> float:
    started = time.perf_counter()
    query(session, data).write.mode("overwrite").parquet(out)
    return time.perf_counter() - started


def run_tidal(client, build, data: str, out: str, config: dict[str, str]):
    """Seconds from submit to a finished job, and the job's result; then, untimed, until the
    job's JobManager has left (a second after the job)."""
    started = time.perf_counter()
    handle = client.submit(build(data, out), config=config)
    result = handle.wait()
    seconds = time.perf_counter() - started
    if result.status != "FINISHED":
        raise SystemExit(f"Tidal job {build.__name__} {result.status.lower()}: {result.cause}")
    _until_gone(handle.actor)
    return seconds, result


def _until_gone(actor, deadline_s: float = 30.0) -> None:
    """Ask the actor (without Ray's retries: a JobManager is restartable) until it is gone."""
    import ray

    deadline = time.monotonic() + deadline_s
    while actor is not None and (left := deadline - time.monotonic()) > 0:
        try:
            ray.get(actor.__ray_ready__.options(max_task_retries=0).remote(), timeout=left)
        except ray.exceptions.RayActorError:
            return
        except ray.exceptions.GetTimeoutError:
            break
        time.sleep(0.05)
    if actor is not None:
        print(f"the JobManager {actor} did not leave within {deadline_s:.0f} s", flush=True)


def _check(name: str, actual_dir: str, expected, against: str) -> bool:
    difference = first_difference(read_result(actual_dir), expected)
    if difference:
        print(f"{name}: result differs from {against}: {difference}", flush=True)
    return difference is None


def measure(name: str, args, data: str, work: Path, session, client) -> dict[str, object]:
    build, spark_query, reference = QUERIES[name]
    config = tidal_config(args)
    tidal_out, spark_out = str(work / f"{name}-tidal"), str(work / f"{name}-spark")
    as_the_job = AS_THE_JOB.get(name)
    tidal_runs, spark_runs, job_plan_runs, result = [], [], [], None
    for run in range(args.warmups + args.repeats):
        measured = run >= args.warmups
        if client is not None:
            client.warm_up()
            seconds, result = run_tidal(client, build, data, tidal_out, config)
            if measured:
                tidal_runs.append(seconds)
            client.warm_up()
        seconds = run_spark(session, spark_query, data, spark_out)
        if measured:
            spark_runs.append(seconds)
        if as_the_job is not None:
            seconds = run_spark(session, as_the_job, data, spark_out + "-as-the-job")
            if measured:
                job_plan_runs.append(seconds)
    same = _check(name, spark_out, reference(data), "the pyarrow reference")
    if as_the_job is not None:
        same &= _check(name, spark_out + "-as-the-job", read_result(spark_out), "PySpark's")
    if client is not None:
        same &= _check(name, tidal_out, read_result(spark_out), "PySpark's")
    figures: dict[str, object] = {
        f"{name}_spark_seconds": round(statistics.median(spark_runs), 3),
        f"{name}_tidal_seconds": None,
        f"{name}_ratio": None,
        f"{name}_same_result": same,
    }
    if job_plan_runs:
        figures[f"{name}_spark_job_plan_seconds"] = round(statistics.median(job_plan_runs), 3)
    if result is not None:
        tidal = statistics.median(tidal_runs)
        figures[f"{name}_tidal_seconds"] = round(tidal, 3)
        figures[f"{name}_ratio"] = round(tidal / statistics.median(spark_runs), 3)
        if job_plan_runs:
            figures[f"{name}_job_plan_ratio"] = round(tidal / statistics.median(job_plan_runs), 3)
        figures[f"{name}_parallelism"] = {v: r.parallelism for v, r in result.vertices.items()}
        print(f"{name}: parallelism decided by Tidal", flush=True)
        for vertex, decided in result.vertices.items():
            print(f"  {vertex:<20} {decided.parallelism:>4}  {decided.explanation}", flush=True)
        figures[f"{name}_breakdown_ms"] = breakdown(name, result)
    print(f"{name}: Tidal {_seconds(tidal_runs)}, PySpark {_seconds(spark_runs)}", flush=True)
    if job_plan_runs:
        print(f"{name}: PySpark in the plan of Tidal's job (not the target's baseline) "
              f"{_seconds(job_plan_runs)}", flush=True)  # fmt: skip
    return figures


def breakdown(name: str, result) -> dict[str, int]:
    """Print where the last run's task time went, per vertex (``taskmanager.timing``); return
    the job's totals per phase, with ``queued`` and the tasks' durations."""
    totals: dict[str, int] = {}
    print(f"{name}: where Tidal's task time went (last run, ms summed over each vertex's tasks)",
          flush=True)  # fmt: skip
    tasks = {report.chain or vertex: report for vertex, report in result.vertices.items()}
    for vertex, report in tasks.items():  # a chain's vertices share one report
        parts = {**report.phases_ms, "queued": report.queued_ms}
        for phase, ms in parts.items():
            totals[phase] = totals.get(phase, 0) + ms
        shown = ", ".join(f"{phase} {ms}" for phase, ms in parts.items() if ms)
        print(f"  {vertex:<20} {shown}", flush=True)
    return totals


def cold(name: str, args, data: str, work: Path) -> dict[str, object]:
    """The query's first run on each side, each in a new process: ``{side}_start`` is the
    cluster's or the session's start, ``{side}_first`` the query's first run after it."""
    figures: dict[str, object] = {}
    sides = ["spark"] if args.baseline_only else ["tidal", "spark"]
    for side in sides:
        command = [sys.executable, __file__, "--cold-side", side, "--queries", name,
                   "--data", data, "--dir", str(work), "--scale", str(args.scale),
                   *[f"-D{option}" for option in args.options or ()]]  # fmt: skip
        if args.no_dashboard:
            command.append("--no-dashboard")
        done = subprocess.run(command, capture_output=True, text=True, timeout=600,
                              env={**os.environ, "RAY_ADDRESS": ""})  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"{name}: the cold {side} run failed:\n{done.stderr[-3000:]}")
        start, first = json.loads(done.stdout.strip().splitlines()[-1])
        figures[f"{name}_cold_{side}_start_seconds"] = start
        figures[f"{name}_cold_{side}_first_seconds"] = first
    shown = "; ".join(f"{side}: start {figures[f'{name}_cold_{side}_start_seconds']:.2f} s, "
                      f"first run {figures[f'{name}_cold_{side}_first_seconds']:.2f} s"
                      for side in sides)  # fmt: skip
    print(f"{name} cold: {shown}", flush=True)
    return figures


def cold_run(args, data: str) -> None:
    """In the process ``cold`` started: start one side, run the query once, print both times."""
    name = args.queries[0]
    build, spark_query, _ = QUERIES[name]
    out = str(Path(args.dir) / f"{name}-cold-{args.cold_side}")
    started = time.perf_counter()
    if args.cold_side == "spark":
        session = spark_session()
        start = time.perf_counter() - started
        first = run_spark(session, spark_query, data, out)
    else:
        from jobmanager import Client

        client = Client(address="local", dashboard=not args.no_dashboard)
        start = time.perf_counter() - started
        first, _ = run_tidal(client, build, data, out, tidal_config(args))
    print(json.dumps([round(start, 3), round(first, 3)]), flush=True)


def tidal_config(args) -> dict[str, str]:
    """Tidal sized as the baseline's adaptive execution sizes its partitions: tasks of about
    ``spark.sql.adaptive.advisoryPartitionSizeInBytes`` (64 MiB); and the TaskManager's Spark
    JVM given the baseline's driver memory (4 GiB; Tidal's default is Spark's own, 1 GiB).
    Everything else is Tidal's default (the least parallelism 1, as Flink's). -D overrides any
    of them."""
    return {"execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task": "64 mb",
            "taskmanager.memory.spark-driver": BASELINE_DRIVER_MEMORY,
            **parse_options(args.options)}  # fmt: skip


def _seconds(runs: list[float]) -> str:
    if not runs:
        return "not run"
    return f"median {statistics.median(runs):.2f} s of {[round(r, 2) for r in runs]}"


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor")
    parser.add_argument("--repeats", type=int, default=3, help="measured runs per query")
    parser.add_argument("--warmups", type=int, default=3,
                        help="unmeasured runs per query before them, on both sides")
    parser.add_argument("--queries", nargs="+", choices=sorted(QUERIES), default=sorted(QUERIES))
    parser.add_argument("--data", default=None,
                        help="data directory (default: a per-scale folder in the temp dir)")
    parser.add_argument("--dir", default=None, help="where results go (default: temp)")
    parser.add_argument("--address", default=None, help="Ray cluster (default: local)")
    parser.add_argument("--baseline-only", action="store_true", help="run PySpark alone")
    parser.add_argument("--no-dashboard", action="store_true",
                        help="start the local Ray cluster without Ray's dashboard")
    parser.add_argument("--no-cold", action="store_true",
                        help="skip the first runs on a fresh cluster and a fresh session")
    parser.add_argument("--cold-queries", nargs="+", choices=sorted(QUERIES), default=None,
                        help="the queries with a cold figure (default: every query run)")
    parser.add_argument("--cold-side", choices=["tidal", "spark"], help=argparse.SUPPRESS)
    add_option_flag(parser)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.warmups < 0:
        parser.error("--warmups must be at least 0")

    data = args.data or os.path.join(tempfile.gettempdir(), f"tidal-tpch-sf{args.scale:g}")
    if args.cold_side:
        cold_run(args, data)
        return {"same_result": True}
    started = time.perf_counter()
    generate(data, args.scale)
    print(f"data: scale {args.scale:g} in {data} ({time.perf_counter() - started:.1f} s)",
          flush=True)
    work = Path(tempfile.mkdtemp(prefix="tidal-bench-tpch-", dir=args.dir))
    figures: dict[str, object] = {}
    if not args.no_cold:
        for name in args.cold_queries or args.queries:
            figures |= cold(name, args, data, work)
    session = spark_session()
    client = None
    if not args.baseline_only:
        from jobmanager import Client

        client = Client(address=args.address, dashboard=not args.no_dashboard)
    try:
        for name in args.queries:
            figures |= measure(name, args, data, work, session, client)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        session.stop()
    ratios = [figures[f"{name}_ratio"] for name in args.queries]
    summary = {
        "benchmark": "tpch",
        "scale": args.scale,
        "repeats": args.repeats,
        "warmups": args.warmups,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        **figures,
        "same_result": all(figures[f"{name}_same_result"] for name in args.queries),
        "target_ratio": TARGET_RATIO,
        "ratio": None if None in ratios else max(ratios),
    }
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    sys.exit(0 if main()["same_result"] else 1)
