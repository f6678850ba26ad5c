"""How the scheduling core scales: 1k, 4k and 10k x 10k all-to-all blocking, simulated.

Runs ``tidal stress``'s job at each size and prints time and memory per size. The baseline is
linear scaling from the smallest run, measured in the same process: ``ratio`` is the
JobManager state's bytes per subtask at the largest size divided by those at the smallest (1.0
is exactly linear; above 1 grows faster than the number of vertices).

    python benchmarks/scheduler_scale.py [--sizes 1000 4000 10000]
"""

from __future__ import annotations

import sys
from pathlib import Path

# benchmarks/shuffle.py shares its name with the shuffle package; run as a script, this folder
# comes first on sys.path and would shadow it, so the repository root takes its place.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402

import structlog  # noqa: E402

from jobmanager.simulation.stress import run_stress  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000, 10000])
    parser.add_argument("--pattern", default="all-to-all", choices=["all-to-all", "pointwise"])
    parser.add_argument("--result", default="blocking", choices=["blocking", "pipelined"])
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(30))
    rows = []
    for n in args.sizes:
        report = run_stress(n, args.pattern, args.result)
        total = sum(p["seconds"] for p in report.phases.values())
        rows.append(
            {
                "parallelism": n,
                "tasks": report.tasks,
                "regions": report.regions,
                "total_seconds": round(total, 4),
                "build_regions_seconds": report.phases["build_regions"]["seconds"],
                "execution_graph_retained_bytes": report.execution_graph_retained_bytes,
                "state_retained_bytes": report.state_retained_bytes,
                "state_bytes_per_task": round(report.state_retained_bytes / report.tasks, 1),
            }
        )
        print(
            f"{n:>6} x {n:<6} {args.pattern} {args.result}: {report.tasks} tasks, "
            f"{report.regions} regions, {total:.3f} s to finish, regions built in "
            f"{report.phases['build_regions']['seconds'] * 1000:.1f} ms; graph "
            f"{report.execution_graph_retained_bytes / 2**20:.2f} MiB, state "
            f"{report.state_retained_bytes / 2**20:.2f} MiB "
            f"({rows[-1]['state_bytes_per_task']} B per task)"
        )
    first, last = rows[0], rows[-1]
    ratio = last["state_bytes_per_task"] / first["state_bytes_per_task"]
    print(
        json.dumps(
            {
                "benchmark": "scheduler_scale",
                "baseline": f"linear scaling from parallelism {first['parallelism']}",
                "machine": f"{platform.machine()} {platform.python_implementation()} "
                f"{platform.python_version()}",
                "sizes": rows,
                "ratio": round(ratio, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
