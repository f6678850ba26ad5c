"""The TPC-H benchmark's cold figures (``--cold-queries``): a query's first run on a fresh local
Ray cluster against its first run in a fresh PySpark session, each side in a process of its own
(``benchmarks/tpch.py --cold-side``), with the start of the cluster or the session apart and the
machine's CPU time meanwhile (see ``benchmarks/tpch.py``'s docstring).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.tpch_figures import busy_cpu_seconds, query_name
from benchmarks.tpch_sides import run_spark, run_tidal, spark_session
from examples.options import parse_options
from examples.tpch_dbgen import queries

__all__ = ["cold", "cold_run"]

TPCH_SCRIPT = Path(__file__).with_name("tpch.py")  # its --cold-side runs one side of ``cold``


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
            str(TPCH_SCRIPT),
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
