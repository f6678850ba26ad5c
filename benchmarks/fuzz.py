"""A differential fuzzing run: random SQL queries and DataFrame programs, Tidal against PySpark.

Writes the fuzzer's random tables (``examples/fuzzing/tables.py``; the seed decides their rows
too), draws ``--queries`` cases of ``--seed`` (SQL queries, and a fifth of them DataFrame
programs; ``--families`` restricts them, by the names ``examples/fuzzing/families.py`` lists),
runs each in PySpark alone (``local[2]``, one session for the run) and in Tidal on a local Ray
cluster (the queries batched ``--batch`` to a job), and classifies each: ``same``,
``different``, ``refused`` (Tidal raised where PySpark answered) or ``skipped`` (PySpark
raised: not valid Spark; not counted). Each failure is printed with its case's name, its
family, what failed, and the query shrunk to the smallest that fails the same way
(``--shrink-checks`` checks at most, each running both engines; 0 prints it unshrunk).

``tidal_s`` is Tidal's planning and batched jobs until the answers are read back, ``pyspark_s``
PySpark's queries until their Arrow answers (``examples/fuzzing/runner.py``); ``ratio`` is
Tidal's over PySpark's. Prints human lines, then one JSON object as the last line.

    python benchmarks/fuzz.py --queries 50 --seed 1
    python benchmarks/fuzz.py --queries 200 --seed 7 --families joins aggregates windows
    python benchmarks/fuzz.py --queries 5 --seed 1 --shrink-checks 0 -D KEY=VALUE

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
import logging  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from pyspark.sql import SparkSession  # noqa: E402

from examples.fuzzing.families import FAMILIES, check_families  # noqa: E402
from examples.fuzzing.fuzzer import FuzzRun, draw_cases  # noqa: E402
from examples.fuzzing.runner import DIFFERENT, REFUSED  # noqa: E402
from examples.fuzzing.tables import write_tables  # noqa: E402
from examples.options import add_option_flag, parse_options  # noqa: E402


def spark_session() -> SparkSession:
    """The baseline: two local cores, two shuffle partitions (the tables are tiny), no UI;
    PySpark's own log of each query it rejects kept out of the output."""
    session = (
        SparkSession.builder.master("local[2]")
        .appName("tidal-benchmark-fuzz-baseline")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    return session


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=50, help="cases to draw and run")
    parser.add_argument("--seed", type=int, default=1, help="draws the tables and the cases")
    parser.add_argument(
        "--families",
        nargs="+",
        default=None,
        metavar="FAMILY",
        help=f"only these ({', '.join(FAMILIES)})",
    )
    parser.add_argument("--batch", type=int, default=20, help="queries per Tidal job")
    parser.add_argument(
        "--shrink-checks",
        type=int,
        default=40,
        help="most checks to shrink one failure with (0: none)",
    )
    parser.add_argument(
        "--address", default="local", help="Ray cluster (default: a new one in this process)"
    )
    add_option_flag(parser)
    args = parser.parse_args(argv)
    if args.queries < 1 or args.batch < 1 or args.shrink_checks < 0:
        parser.error("--queries and --batch must be at least 1, --shrink-checks at least 0")
    try:
        families = check_families(args.families) if args.families else None
    except ValueError as error:
        parser.error(str(error))
    import ray

    from jobmanager import Client

    started = time.perf_counter()
    session = spark_session()
    ours = not ray.is_initialized()  # a cluster started here is stopped here; a joined one not
    client = Client(address=args.address, dashboard=False)
    client.warm_up()
    try:
        figures = fuzz(args, families, session, client)
    finally:
        if ours:
            ray.shutdown()
    print(
        f"\n{figures['same']} same, {figures['different']} different, {figures['refused']} "
        f"refused, {figures['skipped']} skipped of {figures['queries']}; Tidal "
        f"{figures['tidal_s']} s, PySpark {figures['pyspark_s']} s, ratio {figures['ratio']} "
        f"({time.perf_counter() - started:.0f} s in all)"
    )
    print(json.dumps(figures), flush=True)
    return figures


def fuzz(args, families, session, client) -> dict[str, object]:
    """Write the tables, draw and run the cases, print each failure shrunk; the figures."""
    with tempfile.TemporaryDirectory(prefix="tidal-fuzz-") as directory:
        tables = write_tables(directory, args.seed)
        with FuzzRun(session, client, tables, parse_options(args.options), args.batch) as run:
            cases = draw_cases(args.seed, args.queries, families)
            print(
                f"{len(cases)} cases of seed {args.seed} over tables {sorted(tables)}", flush=True
            )
            outcomes, summary = run.run(cases, progress=lambda line: print(line, flush=True))
            for outcome in outcomes:
                if outcome.verdict not in (DIFFERENT, REFUSED):
                    continue
                why = f" ({outcome.why})" if outcome.why else ""
                print(
                    f"\n{outcome.case.name} [{outcome.case.family}, {outcome.variant}] "
                    f"{outcome.verdict}{why}: {outcome.detail}",
                    flush=True,
                )
                if args.shrink_checks and not outcome.case.is_program:
                    print(f"  shrunk: {run.shrunk(outcome, args.shrink_checks)}", flush=True)
                else:
                    print("  " + outcome.case.text.strip().replace("\n", "\n  "), flush=True)
    return summary.to_json()


if __name__ == "__main__":
    main()
