"""What a JobManager crash costs: TPC-H Q3 run once uninterrupted and once with its JobManager
killed (``kill -9`` of the pid its status reports) once half of its vertices have finished,
against PySpark alone whose driver is killed at half of its own run time and which is then run
again from the start, as a Spark user has to.

Figures (medians over ``--repeats``):

- ``uninterrupted_seconds`` and ``crashed_seconds``: submit to a finished, committed job;
  ``ratio`` is crashed / uninterrupted (issue 10 asks for at most 1.3);
- ``recovery_seconds``: the kill to the job running again under a new JobManager (replay and
  reconciliation done; target under 5 s);
- ``finished_tasks_rerun``: tasks finished when the kill was sent that ran again (target 0:
  their partitions survive on the TaskManagers);
- ``baseline_ratio``: PySpark's (killed at that fraction of its time + a full rerun) / its
  uninterrupted run, each a fresh driver process (``local[2]``, adaptive execution on), as a
  Spark application is.

The results of every run are checked against the pyarrow reference.

Then, over dbgen's TPC-H at the same ``--scale`` (``benchmarks/recovery_queries.py``), each of
``--queries`` (Q3, Q9 and Q18 by default) through ``Client.sql``: uninterrupted, with a
TaskManager SIGKILLed and with its JobManager SIGKILLed at half of the uninterrupted run's
time, with each kill's cost, the killed tasks' running time and the finished tasks rerun
(under ``queries`` in the JSON). ``--chaos N`` adds N seeded runs of random queries with a
random kill (under ``chaos``). Their answers are checked against DuckDB's.

Prints human lines, then one JSON object as the last line; its ``ratio`` is the JobGraph Q3's
(None with ``--skip-graph``).

    python benchmarks/recovery.py                      # scale 1
    python benchmarks/recovery.py --scale 0.01 --warmups 0
    python benchmarks/recovery.py --skip-graph --no-baseline --queries 3 9 18 --chaos 10

``-D key=value`` sets a Tidal option for the Tidal runs.
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

from examples.compare import first_difference, read_result  # noqa: E402
from examples.options import add_option_flag, parse_options  # noqa: E402
from examples.tpch_data import generate  # noqa: E402
from examples.tpch_queries import q3, reference_q3  # noqa: E402
from examples.tpch_dbgen import generate as generate_dbgen  # noqa: E402
from benchmarks.recovery_queries import chaos, query_figures  # noqa: E402
from jobmanager.messages.jobstatus import JobStatus  # noqa: E402
from jobmanager.model.config import AVG_DATA_VOLUME_PER_TASK  # noqa: E402

TARGET_RATIO = 1.3
TARGET_RECOVERY_SECONDS = 5.0
CONFIG = {AVG_DATA_VOLUME_PER_TASK.key: "64 mb"}


def run_tidal(
    client, data: str, out: str, kill_at: float | None, options: dict[str, str] | None = None
) -> dict[str, object]:
    """Run Q3; with ``kill_at``, kill its JobManager once that fraction of its vertices has
    finished (placed by progress, not by time: a warm run can be over before a time taken from
    a cold one)."""
    started = time.perf_counter()
    handle = client.submit(q3(data, out), config={**CONFIG, **(options or {})})
    figures: dict[str, object] = {}
    if kill_at is not None:
        pid = _wait_for_progress(handle, kill_at)
        finished = {
            (label, attempt)
            for label, state, attempt, _ in handle.describe()[2]
            if state == "finished"
        }
        os.kill(pid, 9)
        killed = time.perf_counter()
        figures["killed_at_seconds"] = killed - started
        status = handle.status()
        while status.pid == pid or status.status is JobStatus.RECONCILING:
            time.sleep(0.02)
            status = handle.status()
        figures["recovery_seconds"] = time.perf_counter() - killed
    result = handle.wait()
    figures["seconds"] = time.perf_counter() - started
    if result.status != "FINISHED":
        raise SystemExit(f"Tidal Q3 {result.status.lower()}: {result.cause}")
    if kill_at is not None:
        attempts = {label: attempt for label, _, attempt, _ in handle.describe()[2]}
        figures["finished_tasks_rerun"] = sum(
            1 for label, attempt in finished if attempts[label] != attempt
        )
        figures["finished_at_kill"] = len(finished)
        figures["extra_deployments"] = sum(
            v.deployments - v.tasks for v in result.vertices.values()
        )
    handle.release()
    return figures


def _wait_for_progress(handle, fraction: float) -> int:
    """The JobManager's pid once ``fraction`` of the job's vertices finished all their tasks
    (at least one, and never all: the kill has to land while the job runs)."""
    while True:
        status = handle.status()
        vertices = status.vertices
        done = sum(1 for v in vertices if v.done)
        wanted = min(max(1, round(fraction * len(vertices))), len(vertices) - 1)
        if status.status not in (JobStatus.RUNNING, JobStatus.CREATED):
            raise SystemExit(
                f"Tidal Q3 reached {status.status.value} before the kill: "
                f"{status.cause or 'no cause given'}"
            )
        if vertices and done >= wanted:
            return status.pid
        time.sleep(0.01)


def run_spark_driver(data: str, out: str, kill_after: float | None) -> float:
    """Q3 in a fresh PySpark driver process; killed after ``kill_after`` s and run again."""
    command = [sys.executable, os.path.abspath(__file__), "--spark-driver", data, out]
    started = time.perf_counter()
    if kill_after is not None:
        driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            driver.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            os.kill(driver.pid, 9)
            driver.wait()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def spark_driver(data: str, out: str) -> None:
    from pyspark.sql import SparkSession

    from examples.tpch_queries import spark_q3

    session = (
        SparkSession.builder.master("local[2]")
        .appName("tidal-benchmark-recovery-baseline")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.driver.memory", "4g")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark_q3(session, data).write.mode("overwrite").parquet(out)
    session.stop()


def _check(what: str, out: str, expected) -> bool:
    difference = first_difference(read_result(out), expected)
    if difference:
        print(f"{what}: result differs from the pyarrow reference: {difference}", flush=True)
    return difference is None


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor")
    parser.add_argument("--repeats", type=int, default=3, help="measured pairs of runs")
    parser.add_argument("--warmups", type=int, default=2, help="unmeasured Tidal runs first")
    parser.add_argument(
        "--fraction",
        type=float,
        default=0.5,
        help="kill once this fraction of the job's vertices finished",
    )
    parser.add_argument(
        "--data", default=None, help="data directory (default: a per-scale folder in the temp dir)"
    )
    parser.add_argument("--no-baseline", action="store_true", help="skip the PySpark half")
    parser.add_argument("--skip-graph", action="store_true", help="skip the JobGraph Q3 half")
    parser.add_argument(
        "--queries",
        type=int,
        nargs="*",
        default=[3, 9, 18],
        metavar="N",
        help="dbgen queries killed at half their time (default: 3 9 18; none: skip)",
    )
    parser.add_argument("--chaos", type=int, default=0, metavar="N", help="random kill runs")
    parser.add_argument("--seed", type=int, default=0, help="the --chaos runs' seed")
    parser.add_argument(
        "--dbgen-data", default=None, help="dbgen's tables (default: a per-scale temp folder)"
    )
    parser.add_argument("--spark-driver", nargs=2, metavar=("DATA", "OUT"), help=argparse.SUPPRESS)
    add_option_flag(parser)
    args = parser.parse_args(argv)
    options = parse_options(args.options)
    if args.spark_driver:
        spark_driver(*args.spark_driver)
        return {}
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if any(not 1 <= n <= 22 for n in args.queries):
        parser.error("--queries are TPC-H's 1 to 22")

    from jobmanager import Client

    client = Client()
    summary: dict[str, object] = {
        "benchmark": "recovery",
        "scale": args.scale,
        "repeats": args.repeats,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    if not args.skip_graph:
        summary |= graph_figures(client, args, options)
    if args.queries or args.chaos:
        summary |= queries_figures(client, args, options)
    summary["same_result"] = all(
        summary.get(key, True)
        for key in ("graph_same_result", "queries_same_result", "chaos_same_result")
    )
    summary.setdefault("ratio", None)
    print(json.dumps(summary), flush=True)
    return summary


def queries_figures(client, args, options: dict[str, str]) -> dict[str, object]:
    """The dbgen half: each of ``--queries`` killed each way, then the ``--chaos`` runs."""
    data = args.dbgen_data or os.path.join(
        tempfile.gettempdir(), f"tidal-tpch-dbgen-sf{args.scale:g}"
    )
    tables = generate_dbgen(data, args.scale)
    figures: dict[str, object] = {"queries": {}}
    for number in args.queries:
        figures["queries"][f"q{number:02d}"] = query_figures(
            client, number, tables, data, args.repeats, args.warmups, options
        )
    figures["queries_same_result"] = all(q["same_result"] for q in figures["queries"].values())
    if args.chaos:
        figures["chaos"] = chaos(client, args.chaos, args.seed, tables, data, options)
        figures["chaos_same_result"] = figures["chaos"]["right"] == args.chaos
    return figures


def graph_figures(client, args, options: dict[str, str]) -> dict[str, object]:
    """The JobGraph Q3 half: its JobManager killed at ``--fraction`` of its vertices, and the
    PySpark baseline."""
    data = args.data or os.path.join(tempfile.gettempdir(), f"tidal-tpch-sf{args.scale:g}")
    generate(data, args.scale)
    expected = reference_q3(data)
    work = Path(tempfile.mkdtemp(prefix="tidal-bench-recovery-"))
    plain, crashed, spark_plain, spark_crashed = [], [], [], []
    same = True
    try:
        out = str(work / "q3")
        for _ in range(args.warmups):
            client.warm_up()
            run_tidal(client, data, out, None, options)
        for run in range(args.repeats):
            client.warm_up()
            plain.append(run_tidal(client, data, out, None, options))
            same &= _check("Tidal", out, expected)
            client.warm_up()
            crashed.append(run_tidal(client, data, out, args.fraction, options))
            same &= _check("Tidal after a crash", out, expected)
            print(
                f"run {run}: uninterrupted {plain[-1]['seconds']:.2f} s, JobManager killed "
                f"at {crashed[-1]['killed_at_seconds']:.2f} s: {crashed[-1]['seconds']:.2f} s, running again "
                f"{crashed[-1]['recovery_seconds']:.2f} s after the kill, "
                f"{crashed[-1]['finished_tasks_rerun']} of {crashed[-1]['finished_at_kill']} "
                "finished tasks ran again",
                flush=True,
            )
        # the baseline after Tidal's runs, not between them: its minute of PySpark would
        # outlast resourcemanager.taskmanager-timeout, and Tidal's warm TaskManagers with it
        for run in range(0 if args.no_baseline else args.repeats):
            spark_out = str(work / "q3-spark")
            spark_plain.append(run_spark_driver(data, spark_out, None))
            spark_crashed.append(run_spark_driver(data, spark_out, args.fraction * spark_plain[-1]))
            same &= _check("PySpark", spark_out, expected)
            print(
                f"run {run}: PySpark {spark_plain[-1]:.2f} s, driver killed and rerun "
                f"{spark_crashed[-1]:.2f} s",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def median(runs, key=None):
        return round(statistics.median(r[key] if key else r for r in runs), 3)

    uninterrupted, after_crash = median(plain, "seconds"), median(crashed, "seconds")
    return {
        "query": "tpch-q3",
        "kill_at_fraction": args.fraction,
        "uninterrupted_seconds": uninterrupted,
        "crashed_seconds": after_crash,
        "recovery_seconds": median(crashed, "recovery_seconds"),
        "finished_tasks_rerun": max(r["finished_tasks_rerun"] for r in crashed),
        "extra_deployments": max(r["extra_deployments"] for r in crashed),
        "spark_uninterrupted_seconds": median(spark_plain) if spark_plain else None,
        "spark_crashed_seconds": median(spark_crashed) if spark_crashed else None,
        "baseline_ratio": (
            round(median(spark_crashed) / median(spark_plain), 3) if spark_plain else None
        ),
        "graph_same_result": same,
        "target_ratio": TARGET_RATIO,
        "target_recovery_seconds": TARGET_RECOVERY_SECONDS,
        "ratio": round(after_crash / uninterrupted, 3),
    }


if __name__ == "__main__":
    sys.exit(0 if main().get("same_result", True) else 1)
