"""The README's demo: its PySpark script and a SQL query run on Tidal, each decision printed.

It generates small TPC-H-shaped tables, then runs the README's first example,
``examples/pipeline.py``, as ``tidal run examples/pipeline.py ORDERS OUT`` runs it (the same
``run_script``: the script unchanged, ``pyspark`` bound to Tidal, each action a job). Then it
runs a SQL query over four of the tables through ``Client.sql``. After each job it prints what
the scheduler decided: every vertex's parallelism and why, and how each join was done. Nothing
sets a parallelism; the JobManager decides each from the bytes the job really produced.

    python examples/demo.py                 # scale 0.5, on a Ray cluster started in-process
    python examples/demo.py --scale 2 -D execution.batch.adaptive.auto-parallelism.max-parallelism=8
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script: the repository root, not examples/, comes first
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse
import os
import tempfile

from examples.options import add_option_flag, parse_options
from examples.tpch_data import generate
from jobmanager.model.config import AVG_DATA_VOLUME_PER_TASK, SOURCE_DATA_VOLUME_PER_TASK

__all__ = ["PIPELINE", "QUERY", "SMALL_TASKS", "decision_lines", "main"]

PIPELINE = Path(__file__).resolve().parent / "pipeline.py"

QUERY = """
SELECT n_name AS nation, SUM(l_extendedprice * (1 - l_discount)) AS revenue
FROM customer
JOIN orders ON c_custkey = o_custkey
JOIN lineitem ON l_orderkey = o_orderkey
JOIN nation ON c_nationkey = n_nationkey
WHERE o_orderdate >= DATE '1994-01-01' AND o_orderdate < DATE '1995-01-01'
GROUP BY n_name
ORDER BY revenue DESC
"""


# The demo's data is small: at Tidal's defaults (64 MiB a task, 128 MiB a source task) every
# vertex would get one task. Smaller tasks show the decisions on a laptop's worth of data.
SMALL_TASKS = {
    AVG_DATA_VOLUME_PER_TASK.key: "4mb",
    SOURCE_DATA_VOLUME_PER_TASK.key: "8mb",
}


def decision_lines(result, facts) -> list[str]:
    """What the scheduler decided for one finished job: each vertex's parallelism with the
    reason its JobManager gave, then each join's strategy and the bytes it was decided on."""
    from jobmanager.client.report.explain import join_lines, sort_lines

    lines = [f"decisions of {facts.name} ({result.job_id}), {result.status.value}:"]
    shown = set()
    for name, vertex in result.vertices.items():
        task = vertex.chain or name  # vertices chained into one task share its decision
        if task in shown:
            continue
        shown.add(task)
        lines.append(f"  {task}: parallelism {vertex.parallelism}")
        lines += [f"      {reason}" for reason in _clauses(vertex.explanation)]
    if facts.joins:
        lines.append("  joins:")
        lines += [f"  {line}" for join in facts.joins for line in join_lines(join)]
    if facts.sorts:
        lines.append("  sorts:")
        lines += [f"  {line}" for sort in facts.sorts for line in sort_lines(sort)]
    return lines


def _clauses(explanation: str) -> list[str]:
    """The explanation cut at each "; " outside brackets, one reason a line."""
    clauses, depth, start = [], 0, 0
    for at, char in enumerate(explanation):
        depth += (char in "([") - (char in ")]")
        if depth == 0 and explanation.startswith("; ", at):
            clauses.append(explanation[start:at])
            start = at + 2
    return [*clauses, explanation[start:]]


def _print_decisions(client, job_ids: list[str]) -> bool:
    """Each job's decisions; whether all of them finished."""
    finished = True
    for job_id in job_ids:
        handle = client.job(job_id)
        result = handle.wait()
        print("\n" + "\n".join(decision_lines(result, handle.facts())))
        finished = finished and result.succeeded
    return finished


def _run_pipeline(client, options: dict, orders: str, out: str) -> tuple[int, list[str]]:
    """``tidal run examples/pipeline.py ORDERS OUT``, on this demo's client."""
    from jobmanager.client.scripts import run_script

    print(f"$ tidal run examples/pipeline.py {orders} {out}")
    return run_script(str(PIPELINE), [orders, out], options, lambda: client)


def _run_query(client, options: dict, tables: dict[str, str]):
    print("\n$ tidal sql " + " ".join(QUERY.split()))
    handle = client.sql(QUERY, tables=tables, config=options)
    rows = handle.wait().to_arrow()
    print(f"\n{'nation':<16}{'revenue':>20}")
    for row in rows.to_pylist():
        print(f"{row['nation']:<16}{row['revenue']:>20,.2f}")
    return handle.job_id


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=0.5, help="TPC-H scale factor")
    parser.add_argument(
        "--data",
        default=None,
        help="where the tables are generated (default: a per-scale folder in the temp dir)",
    )
    parser.add_argument(
        "--address",
        default="local",
        help="Ray cluster to join (default: start one in this process, even where one runs)",
    )
    add_option_flag(parser)
    args = parser.parse_args(argv)
    data = args.data or os.path.join(tempfile.gettempdir(), f"tidal-tpch-sf{args.scale:g}")
    options = {**SMALL_TASKS, **parse_options(args.options)}

    print("options: " + ", ".join(f"{key}={value}" for key, value in options.items()))
    print(f"generating TPC-H-shaped tables at scale {args.scale:g} under {data}")
    tables = generate(data, args.scale)

    from jobmanager import Client  # brings in Ray: a local cluster is started here if none runs

    client = Client(address=args.address, dashboard=False)
    out = os.path.join(data, "result", "by_priority")
    code, jobs = _run_pipeline(client, options, tables["orders"], out)
    if code != 0:
        print(f"the pipeline exited with {code}", file=sys.stderr)
        return 1
    finished = _print_decisions(client, jobs)
    query_job = _run_query(client, options, tables)
    finished = _print_decisions(client, [query_job]) and finished
    print(f"\nthe pipeline's result: {out}")
    print(
        f"any job again: tidal explain JOB, tidal report JOB (jobs {', '.join(jobs)}, {query_job})"
    )
    return 0 if finished else 1


if __name__ == "__main__":
    sys.exit(main())
