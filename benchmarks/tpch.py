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
  them inside its timer). Each side's one run is ``benchmarks/tpch_sides.py``'s.

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
``--cold-queries`` adds, before the warm runs, a cold figure for the queries it names
(``benchmarks/tpch_cold.py``): the first run on a fresh local Ray cluster against the first
run in a fresh PySpark session, each in a process of its own, with the start of the cluster or
the session apart (about a minute a query, so none by default). Each start ends where its side
can take a query without starting a JVM: PySpark's with its session, Tidal's with
``Client.warm_up`` (a standby JobManager, and the TaskManager the new cluster prepared with its
Spark JVM up). Tidal's first job runs on that TaskManager;
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
import tempfile  # noqa: E402
import time  # noqa: E402


from examples.compare import query_is_ordered, read_result, sql_difference  # noqa: E402
from examples.options import add_option_flag, parse_options  # noqa: E402
from examples.tpch_dbgen import LAYOUTS, duckdb_answer, generate, queries  # noqa: E402
from benchmarks.tpch_figures import (  # noqa: E402
    _seconds,
    breakdown,
    by_strategy,
    cold_summary,
    geometric_mean,
    median_split,
    print_table,
    query_name,
    ratio_by_strategy,
)
from benchmarks.same_plan import planned_sql, register_views  # noqa: E402
from benchmarks.tpch_cold import cold, cold_run  # noqa: E402
from benchmarks.tpch_sides import (  # noqa: E402
    BASELINE_SLOTS,
    QueryFailed,
    baseline_jvm,
    fresh_spark_session,
    run_spark,
    run_tidal,
    spark_session,
)
from jobmanager.model.config import ADAPTIVE_BROADCAST_JOIN_STRATEGY  # noqa: E402

QUERY_NUMBERS = range(1, 23)
JOIN_STRATEGIES = ("auto", "runtime_only", "none")
TARGET_RATIO = 0.7  # the geometric mean, warm
TARGET_QUERY_RATIO = 1.1  # every query, warm
TARGET_SAME_PLAN = 1.0  # Tidal against PySpark running Tidal's plan, geometric mean
TARGET_OWN_SHARE = 0.10  # Tidal's own part of a job's wall time, geometric mean
SLOWEST_SHOWN = 5


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
