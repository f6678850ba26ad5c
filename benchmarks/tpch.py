"""The 22 TPC-H queries in Tidal's SQL against the same texts in PySpark alone, in one run.

Generates the real TPC-H tables at ``--scale`` (scale factor 1 by default; DuckDB's dbgen,
cached between runs, see ``examples/tpch_dbgen.py``) in the ``--layout`` given (``parts``:
64 MiB files of 8 MiB row groups; ``duckdb``: one file a table, as DuckDB, pandas or Polars
leave one), then, for each query (``--queries``
names some; all 22 by default), runs ``--warmups`` unmeasured and ``--repeats`` measured runs of

- Tidal: the query's text through ``Client.sql(text, tables=..., output=<dir>,
  overwrite=True)`` on a local Ray cluster, with no option set (``-D`` sets one): its
  defaults, as a new user's job runs, timed from the call, which plans the query, until
  ``wait()`` returns with the result committed as Parquet;
- baseline: the same text through ``spark.sql`` over temporary views of the same Parquet files
  (``examples/spark_sql.py``), ``local[2]`` with adaptive query execution on, tuned as a Spark
  user tunes it: the JVM options and heap Tidal's TaskManager gets on this machine
  (``taskmanager.spark.java_options``, ``taskmanager.heap``), and the views registered once
  per session, as a user running queries in a session does, so a warm run is timed from
  ``spark.sql`` until its Parquet output is written (a cold run, a fresh script, registers
  them inside its timer).

The two alternate run by run so both see the same machine, and both run warm: PySpark in a
started session, Tidal with its TaskManagers kept between jobs and its standby JobManager ready
(``Client.warm_up`` before each timed run of either side, and each Tidal job's JobManager
gone before the next, so neither shares the machine with a JobManager process starting or
leaving). Both JVMs keep getting faster for ten runs of a query and more while the JIT
compiles Spark's code paths, so the warm-up runs, the same number for both, decide how warm
"warm" is, and single runs swing by a few tenths of a second.

Every answer is checked: PySpark's written result against DuckDB's answer over the same files
(``tpch_dbgen.duckdb_answer``), Tidal's written result against PySpark's, both read back, in
order where the query orders its result (``examples.compare.sql_difference``). The parallelism
Tidal decided for each vertex is printed with its reason, and where the last run's task time
went, per vertex and phase (``taskmanager.timing``).

Each query's ratio is Tidal's median seconds over the baseline's; ``ratio`` is their geometric
mean (the target is at most 0.7, and no query above 1.1), and the queries slowest against
PySpark are printed last. Each Tidal job's wall time is split into Spark's work on its critical
path and Tidal's own (``benchmarks/wall_split.py``): per query the medians, and ``own_share``,
the geometric mean of Tidal's own part (the target is at most 10 %).
A third side, the same-plan control (``benchmarks/same_plan.py``), runs Tidal's planned job
composed into one Spark SQL query in the baseline's session, alternating with the other two:
each query's ``same_plan_ratio`` is Tidal's median over the control's, and the summary's
their geometric mean (the target is at most 1.0, no query above 1.15): what Tidal's runtime
(scheduling, deployment, shuffle, commit) costs or saves against Spark's own executor on the
same plan. Its answer is checked too.
``--join-strategy`` names the ``table.optimizer.adaptive-broadcast-join.strategy`` Tidal runs
with (``auto`` by default); given several (``--join-strategy auto none``), each is measured in
the same alternation, ``ratio`` is the first one's, ``ratio_by_strategy`` has each one's
geometric mean, and each query lists the joins the JobManager decided at run time (the
decisions in its event log) and each strategy's seconds.
``--cold-queries`` adds, before the warm runs, a cold figure for the queries it names: the first
run on a fresh local Ray cluster against the first run in a fresh PySpark session, each in a
process of its own, with the start of the cluster or the session apart (about a minute a query,
so none by default). Each start ends where its side can take a query without starting a JVM:
PySpark's with its session, Tidal's with ``Client.warm_up`` (a standby JobManager, and the
TaskManager the new cluster prepared with its Spark JVM up). Tidal's first job runs on that
TaskManager;
``cold_first_ratio`` is the sum of Tidal's first runs over PySpark's, ``cold_ratio`` the same
with the starts, and each query's ``cold_ratio`` its own start plus first run. On a machine
whose ``/proc/stat`` tells its busy time, each side's ``cold_{side}_cpu_seconds`` is what its
start and first run cost the machine's cores, every process counted (Ray's, the JVMs'), and
``cold_cpu_ratio`` Tidal's sum over PySpark's: both cores are busy through a cold start on two,
so CPU seconds are what a faster cold start has to save.
Prints human lines, then one JSON object as the last line. ``--baseline-only`` measures the
PySpark half alone (its ratios are null).

    python benchmarks/tpch.py                         # scale 1, all 22, 3 warm-ups, 3 repeats
    python benchmarks/tpch.py --scale 0.01 --warmups 0 --repeats 1 --queries 1 6
    python benchmarks/tpch.py --join-strategy auto none   # run-time join decisions against none
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
from typing import Mapping  # noqa: E402

from pyspark.sql import SparkSession  # noqa: E402

from examples.compare import query_is_ordered, read_result, sql_difference  # noqa: E402
from examples.options import add_option_flag, parse_options  # noqa: E402
from examples.spark_sql import spark_query  # noqa: E402
from examples.tpch_dbgen import LAYOUTS, duckdb_answer, generate, queries  # noqa: E402
from benchmarks.tpch_figures import (  # noqa: E402
    _seconds,
    breakdown,
    by_strategy,
    busy_cpu_seconds,
    cold_summary,
    geometric_mean,
    median_split,
    print_table,
    query_name,
    ratio_by_strategy,
)
from benchmarks.same_plan import planned_sql, register_views  # noqa: E402
from benchmarks.wall_split import split_wall  # noqa: E402
from jobmanager.model.config import ADAPTIVE_BROADCAST_JOIN_STRATEGY  # noqa: E402

QUERY_NUMBERS = range(1, 23)
JOIN_STRATEGIES = ("auto", "runtime_only", "none")
TARGET_RATIO = 0.7  # the geometric mean, warm
TARGET_QUERY_RATIO = 1.1  # every query, warm
TARGET_SAME_PLAN = 1.0  # Tidal against PySpark running Tidal's plan, geometric mean
TARGET_OWN_SHARE = 0.10  # Tidal's own part of a job's wall time, geometric mean
BASELINE_SLOTS = 2  # local[2], and the slots of Tidal's default TaskManager
SLOWEST_SHOWN = 5


def baseline_jvm() -> tuple[list[str], int]:
    """The baseline JVM's options and heap: those of Tidal's default TaskManager here."""
    from taskmanager.heap import default_heap_bytes
    from taskmanager.java import find_java
    from taskmanager.spark import java_options

    return java_options(find_java()[0]), default_heap_bytes(BASELINE_SLOTS)


def spark_session() -> SparkSession:
    """The baseline: two local cores, adaptive query execution on, no UI, the JVM as
    ``baseline_jvm`` says."""
    options, heap = baseline_jvm()
    session = (
        SparkSession.builder.master(f"local[{BASELINE_SLOTS}]")
        .appName("tidal-benchmark-tpch-baseline")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.driver.memory", f"{heap >> 20}m")
        .config("spark.driver.extraJavaOptions", " ".join(options))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def fresh_spark_session(session: SparkSession) -> SparkSession:
    """A new baseline session after a query PySpark failed. Its JVM may have died of it (out of
    memory: q04 at scale 10), and PySpark cannot stop a session whose JVM is gone (its stop
    asks the JVM, and raises); nor does it launch a new JVM while it holds the old gateway.
    So a dead JVM's gateway is dropped, its process reaped, and the session forgotten, and
    the new session launches a JVM of its own."""
    from py4j.protocol import Py4JError
    from pyspark import SparkContext
    from pyspark.sql.context import SQLContext

    try:
        session.stop()
    except (Py4JError, OSError):  # Py4J's words for a lost connection, or the socket's own
        gateway = SparkContext._gateway
        if gateway is not None:
            gateway.close()  # its sockets; the JVM at the other end is gone
            gateway.proc.stdin.close()
            gateway.proc.kill()  # a JVM that no longer answers: ended, if not yet
            gateway.proc.wait()
        SparkContext._gateway = SparkContext._jvm = SparkContext._active_spark_context = None
        SparkSession._instantiatedSession = SparkSession._activeSession = None
        SQLContext._instantiatedContext = None
    return spark_session()


class QueryFailed(Exception):
    """One side could not run a query (out of memory at scale 10, say): the run says so and
    goes on with the next query."""


def run_spark(
    session: SparkSession, text: str, tables: Mapping[str, str] | None, out: str
) -> float:
    """Seconds to run ``text`` and write its result; ``tables``: register the views it reads
    first, in the timer (a cold run), else they are (a warm one)."""
    started = time.perf_counter()
    try:
        frame = session.sql(text) if tables is None else spark_query(session, tables, text)
        frame.write.mode("overwrite").parquet(out)
    except Exception as error:
        first = (str(error).strip().splitlines() or [""])[0][:500]
        raise QueryFailed(f"PySpark failed: {type(error).__name__}: {first}") from error
    return time.perf_counter() - started


def run_tidal(
    client, name: str, text: str, tables: Mapping[str, str], out: str, config: dict[str, str]
):
    """Seconds from the call (planning included) to a finished job, the job's result, the
    join decisions its JobManager made at run time, in words, and its wall time split into
    Spark's work and Tidal's own (``wall_split``); then, untimed, until the job's JobManager
    has left (a second after the job)."""
    from jobmanager.runtime.eventlog import read_log

    started = time.perf_counter()
    handle = client.sql(text, tables=tables, output=out, overwrite=True, config=config)
    result = handle.wait()
    seconds = time.perf_counter() - started
    if result.status != "FINISHED":
        raise QueryFailed(f"Tidal's job {result.status.lower()}: {result.cause[:1000]}")
    joins = join_decisions(handle)
    split = split_wall(read_log(handle.event_log()), seconds)
    _until_gone(handle.actor)
    return seconds, result, joins, split


def join_decisions(handle) -> list[str]:
    """The join decisions in the job's event log, each as ``vertex: its text``."""
    from jobmanager.messages import events as ev

    return [
        f"{event.vertex}: {join.text}"
        for event in handle.events()
        if type(event) is ev.VertexParallelismDecided
        for join in event.joins
    ]


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


def _check(name: str, actual, expected, ordered: bool, against: str) -> bool:
    if actual.num_rows == expected.num_rows == 0 and 0 in (
        actual.num_columns,
        expected.num_columns,
    ):
        return True  # no rows (q11 at scale 10): Spark writes no part file, so no columns
    difference = sql_difference(actual, expected, ordered)
    if difference:
        print(f"{name}: result differs from {against}: {difference}", flush=True)
    return difference is None


def measure(
    number: int, args, data: str, tables: dict[str, str], work: Path, session, client
) -> dict[str, object]:
    """The query's warm figures on both sides. A side that fails is ``error`` (its words,
    ``PySpark failed: ...`` or ``Tidal's job failed: ...``) and runs no more; the other goes
    on, its result checked against DuckDB's answer where PySpark has none."""
    name, text = query_name(number), queries()[number]
    strategies = args.join_strategy if client is not None else []
    configs = {
        s: {**parse_options(args.options), ADAPTIVE_BROADCAST_JOIN_STRATEGY.key: s.upper()}
        for s in strategies
    }
    tidal_out = {s: str(work / f"{name}-tidal-{s}") for s in strategies}
    spark_out = str(work / f"{name}-spark")
    plan_out = str(work / f"{name}-same-plan")
    same_plan = planned_sql(text, tables, configs[strategies[0]]) if strategies else None
    runs: dict[str, list[float]] = {s: [] for s in strategies}
    results, joins, spark_runs, plan_runs, splits, errors = {}, {}, [], [], [], {}
    for run in range(args.warmups + args.repeats):
        measured = run >= args.warmups
        for strategy in strategies if "tidal" not in errors else ():
            client.warm_up()
            try:
                seconds, results[strategy], joins[strategy], split = run_tidal(
                    client, name, text, tables, tidal_out[strategy], configs[strategy]
                )
            except QueryFailed as failure:
                errors["tidal"] = str(failure)
                break
            if measured:
                runs[strategy].append(seconds)
                if strategy == strategies[0]:
                    splits.append(split)
        if "spark" in errors:
            continue
        if client is not None:
            client.warm_up()
        try:
            seconds = run_spark(session, text, None, spark_out)
        except QueryFailed as failure:
            errors["spark"] = str(failure)
            continue
        if measured:
            spark_runs.append(seconds)
        if same_plan is None or "same plan" in errors:
            continue
        client.warm_up()
        try:
            seconds = run_spark(session, same_plan, None, plan_out)
        except QueryFailed as failure:
            errors["same plan"] = f"on Tidal's plan, {failure}"
            continue
        if measured:
            plan_runs.append(seconds)
    ordered = query_is_ordered(text)
    answer = duckdb_answer(data, text)
    if "spark" in errors:
        same, reference, against = True, answer, "DuckDB's answer"
    else:
        reference, against = read_result(spark_out), "PySpark's"
        same = _check(name, reference, answer, ordered, "DuckDB's answer")
    for strategy in strategies:
        same &= "tidal" not in errors and _check(
            f"{name} with {strategy}", read_result(tidal_out[strategy]), reference, ordered, against
        )
    if plan_runs:
        same &= _check(
            f"{name} on Tidal's plan", read_result(plan_out), reference, ordered, against
        )
    spark = statistics.median(spark_runs) if spark_runs else None
    tidal_runs = runs[strategies[0]] if strategies else []
    result = results.get(strategies[0]) if strategies and "tidal" not in errors else None
    figures: dict[str, object] = {
        "spark_seconds": None if spark is None else round(spark, 3),
        "tidal_seconds": None,
        "ratio": None,
        "same_result": same,
        "rows": reference.num_rows,
    }
    if errors:
        figures["error"] = "; ".join(errors.values())
        print(f"{name}: {figures['error']}", flush=True)
    if result is not None:
        tidal = statistics.median(tidal_runs)
        figures["tidal_seconds"] = round(tidal, 3)
        figures["ratio"] = None if spark is None else round(tidal / spark, 3)
        if plan_runs:
            figures["same_plan_seconds"] = round(statistics.median(plan_runs), 3)
            figures["same_plan_ratio"] = round(tidal / figures["same_plan_seconds"], 3)
        figures["parallelism"] = {v: r.parallelism for v, r in result.vertices.items()}
        print(f"{name}: parallelism decided by Tidal", flush=True)
        for vertex, decided in result.vertices.items():
            print(f"  {vertex:<20} {decided.parallelism:>4}  {decided.explanation}", flush=True)
        figures.update(median_split(name, splits))
        figures["breakdown_ms"] = breakdown(name, result)
        if spark is not None:
            figures["by_strategy"] = by_strategy(name, runs, spark, joins)
    print(
        f"{name}: Tidal {_seconds(tidal_runs)}, PySpark {_seconds(spark_runs)}, PySpark on "
        f"Tidal's plan {_seconds(plan_runs)}",
        flush=True,
    )
    return figures


def cold(number: int, args, data: str, work: Path) -> dict[str, float]:
    """The query's first run on each side, each in a new process: ``{side}_start_seconds`` is
    the cluster's or the session's start, ``{side}_first_seconds`` the query's first run,
    ``{side}_cpu_seconds`` the machine's CPU time meanwhile (see ``busy_cpu_seconds``); a
    side that failed is ``cold_{side}_error`` instead, its last line, and the run goes on."""
    name = query_name(number)
    figures: dict[str, float] = {}
    sides = ["spark"] if args.baseline_only else ["tidal", "spark"]
    for side in sides:
        command = [
            sys.executable,
            __file__,
            "--cold-side",
            side,
            "--queries",
            str(number),
            "--data",
            data,
            "--dir",
            str(work),
            "--scale",
            str(args.scale),
            "--layout",
            args.layout,
            *[f"-D{option}" for option in args.options or ()],
        ]
        command += ["--no-dashboard"] * args.no_dashboard
        busy = busy_cpu_seconds()
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "RAY_ADDRESS": ""},
        )
        spent = busy_cpu_seconds()
        if done.returncode != 0:
            error = (done.stderr.strip().splitlines() or ["no output"])[-1][:500]
            print(f"{name}: the cold {side} run failed: {error}", flush=True)
            figures[f"cold_{side}_error"] = error
            continue
        start, first = json.loads(done.stdout.strip().splitlines()[-1])
        figures[f"cold_{side}_start_seconds"] = start
        figures[f"cold_{side}_first_seconds"] = first
        if busy is not None and spent is not None:
            figures[f"cold_{side}_cpu_seconds"] = round(spent - busy, 1)
    ran = [side for side in sides if f"cold_{side}_error" not in figures]
    if len(ran) == 2:
        tidal, spark = (
            figures[f"cold_{side}_start_seconds"] + figures[f"cold_{side}_first_seconds"]
            for side in sides
        )
        figures["cold_ratio"] = round(tidal / spark, 3)
    shown = "; ".join(
        f"{side}: start {figures[f'cold_{side}_start_seconds']:.2f} s, "
        f"first run {figures[f'cold_{side}_first_seconds']:.2f} s"
        + (
            f", CPU {figures[f'cold_{side}_cpu_seconds']:.1f} s"
            if f"cold_{side}_cpu_seconds" in figures
            else ""
        )
        for side in ran
    )
    print(f"{name} cold: {shown}", flush=True)
    return figures


def cold_run(args, tables: dict[str, str]) -> None:
    """In the process ``cold`` started: start one side, run the query once, print both times."""
    number = args.queries[0]
    name, text = query_name(number), queries()[number]
    out = str(Path(args.dir) / f"{name}-cold-{args.cold_side}")
    started = time.perf_counter()
    if args.cold_side == "spark":
        session = spark_session()
        start = time.perf_counter() - started
        first = run_spark(session, text, tables, out)
    else:
        from jobmanager import Client

        client = Client(address="local", dashboard=not args.no_dashboard)
        if not client.warm_up():
            raise SystemExit("the new cluster's JobManager or TaskManager did not start in time")
        start = time.perf_counter() - started
        first, _, _, _ = run_tidal(client, name, text, tables, out, parse_options(args.options))
    print(json.dumps([round(start, 3), round(first, 3)]), flush=True)


def _set(options) -> str:
    return f" and {', '.join(options)}" if options else ""


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor")
    parser.add_argument("--repeats", type=int, default=3, help="measured runs per query")
    parser.add_argument(
        "--warmups",
        type=int,
        default=3,
        help="unmeasured runs per query before them, on both sides",
    )
    parser.add_argument(
        "--queries",
        nargs="+",
        type=int,
        choices=QUERY_NUMBERS,
        default=list(QUERY_NUMBERS),
        metavar="N",
        help="TPC-H query numbers, 1 to 22 (default: all)",
    )
    parser.add_argument(
        "--data", default=None, help="data directory (default: a per-scale folder in the temp dir)"
    )
    parser.add_argument("--dir", default=None, help="where results go (default: temp)")
    parser.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="parts",
        help="the tables' files: parts (64 MiB files of 8 MiB row groups) or "
        "duckdb (one file a table, as DuckDB writes it)",
    )
    parser.add_argument("--address", default=None, help="Ray cluster (default: local)")
    parser.add_argument("--baseline-only", action="store_true", help="run PySpark alone")
    parser.add_argument(
        "--join-strategy",
        nargs="+",
        choices=JOIN_STRATEGIES,
        default=["auto"],
        help="Tidal's table.optimizer.adaptive-broadcast-join.strategy; several: "
        "each measured, the first gives the ratio",
    )
    parser.add_argument(
        "--no-dashboard",
        action="store_true",
        help="start the local Ray cluster without Ray's dashboard",
    )
    parser.add_argument(
        "--cold-queries",
        nargs="+",
        type=int,
        choices=QUERY_NUMBERS,
        default=[],
        metavar="N",
        help="queries with a cold figure, each side's first run (default: none)",
    )
    parser.add_argument("--cold-side", choices=["tidal", "spark"], help=argparse.SUPPRESS)
    add_option_flag(parser)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.warmups < 0:
        parser.error("--warmups must be at least 0")

    folder = f"tidal-tpch-dbgen-sf{args.scale:g}" + (
        "" if args.layout == "parts" else "-" + args.layout
    )
    data = args.data or os.path.join(tempfile.gettempdir(), folder)
    started = time.perf_counter()
    tables = generate(data, args.scale, layout=args.layout)
    if args.cold_side:
        cold_run(args, tables)
        return {"same_result": True}
    print(
        f"data: scale {args.scale:g} in {data} ({time.perf_counter() - started:.1f} s)", flush=True
    )
    work = Path(tempfile.mkdtemp(prefix="tidal-bench-tpch-", dir=args.dir))
    per_query: dict[str, dict] = {}
    for number in args.cold_queries:
        per_query.setdefault(query_name(number), {}).update(cold(number, args, data, work))
    session = spark_session()
    register_views(session, tables)
    options, heap = baseline_jvm()
    print(
        f"PySpark: local[{BASELINE_SLOTS}], a heap of {heap >> 20} MiB, JVM options "
        f"{' '.join(options)}; Tidal: its defaults{_set(args.options)}, a TaskManager's "
        f"Spark JVM with the same options and heap",
        flush=True,
    )
    client = None
    if not args.baseline_only:
        from jobmanager import Client

        client = Client(address=args.address, dashboard=not args.no_dashboard)
    try:
        for number in args.queries:
            figures = measure(number, args, data, tables, work, session, client)
            if "PySpark failed" in figures.get("error", ""):
                session = fresh_spark_session(session)
                register_views(session, tables)
            per_query.setdefault(query_name(number), {}).update(figures)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        session.stop()
    measured = {name: per_query[name] for name in map(query_name, args.queries)}
    print_table(measured)
    ratios = {name: figures["ratio"] for name, figures in measured.items()}
    failed = {name: figures["error"] for name, figures in measured.items() if "error" in figures}
    known = [ratio for ratio in ratios.values() if ratio is not None]
    mean = (
        round(geometric_mean(known), 3)
        if known and len(known) + len(failed) == len(ratios)
        else None
    )
    by_strategy_mean = {} if mean is None else ratio_by_strategy(measured, args.join_strategy)
    if len(by_strategy_mean) > 1:
        print(
            "geometric mean by join strategy: "
            + ", ".join(f"{strategy} {value:.3f}" for strategy, value in by_strategy_mean.items()),
            flush=True,
        )
    slowest = sorted((n for n in ratios if ratios[n] is not None), key=lambda name: -ratios[name])[
        :SLOWEST_SHOWN
    ]
    if mean is not None:
        print(
            f"geometric mean of the ratios {mean:.3f} (target {TARGET_RATIO}); slowest "
            f"against PySpark: {', '.join(f'{n} {ratios[n]:.2f}' for n in slowest)}",
            flush=True,
        )
    plan_ratios = [f["same_plan_ratio"] for f in measured.values() if f.get("same_plan_ratio")]
    same_plan = round(geometric_mean(plan_ratios), 3) if plan_ratios else None
    if same_plan is not None:
        worst = max(measured, key=lambda n: measured[n].get("same_plan_ratio") or 0)
        print(
            f"against PySpark on Tidal's plan, geometric mean {same_plan:.3f} (target "
            f"{TARGET_SAME_PLAN}); the highest {worst} "
            f"{measured[worst]['same_plan_ratio']:.2f}",
            flush=True,
        )
    shares = [f["own_share"] for f in measured.values() if f.get("own_share") is not None]
    own_share = (
        round(geometric_mean([max(share, 0.001) for share in shares]), 3) if shares else None
    )
    if own_share is not None:
        print(
            f"Tidal's own share of the wall time, geometric mean {own_share:.1%} "
            f"(target {TARGET_OWN_SHARE:.0%})",
            flush=True,
        )
    cold_figures = cold_summary(per_query, args.cold_queries)
    summary = {
        "benchmark": "tpch",
        "scale": args.scale,
        "layout": args.layout,
        "repeats": args.repeats,
        "warmups": args.warmups,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "queries": per_query,
        "ratios": ratios,
        "slowest": slowest if mean is not None else [],
        "spark_seconds_total": round(sum(f["spark_seconds"] or 0 for f in measured.values()), 3),
        "failed": failed,
        "same_result": all(figures["same_result"] for figures in measured.values()),
        "target_ratio": TARGET_RATIO,
        "target_query_ratio": TARGET_QUERY_RATIO,
        "own_share": own_share,
        "same_plan_ratio": same_plan,
        "baseline_jvm": {"options": baseline_jvm()[0], "heap_bytes": baseline_jvm()[1]},
        **cold_figures,
        **{f"{name}_ratio": ratio for name, ratio in ratios.items()},
        **{f"{name}_same_result": figures["same_result"] for name, figures in measured.items()},
        "join_strategies": args.join_strategy,
        "ratio_by_strategy": by_strategy_mean,
        "ratio": mean,
    }
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    sys.exit(0 if main()["same_result"] else 1)
