"""The TPC-H benchmark's figures: per query and over the queries, printed as they come and
returned for its JSON line (``benchmarks/tpch.py``)."""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Mapping

__all__ = [
    "breakdown",
    "busy_cpu_seconds",
    "by_strategy",
    "cold_summary",
    "geometric_mean",
    "median_split",
    "print_table",
    "query_name",
    "ratio_by_strategy",
]


def median_split(name: str, splits: list[dict[str, float]]) -> dict[str, float]:
    """The wall time split (``wall_split``) of the measured run of median wall time (of an even
    number of runs, the faster middle one): ``spark_work_seconds``, ``own_seconds``,
    ``own_share``."""
    ordered = sorted(splits, key=lambda split: split["spark_seconds"] + split["own_seconds"])
    middle = ordered[(len(ordered) - 1) // 2]
    figures = {
        "spark_work_seconds": middle["spark_seconds"],
        "own_seconds": middle["own_seconds"],
        "own_share": middle["own_share"],
    }
    print(
        f"{name}: Spark's work on the critical path {figures['spark_work_seconds']:.2f} s, "
        f"Tidal's own {figures['own_seconds']:.2f} s ({figures['own_share']:.0%} of the job)",
        flush=True,
    )
    return figures


def by_strategy(
    name: str, runs: dict[str, list[float]], spark: float, joins: dict[str, list[str]]
) -> dict[str, dict]:
    """Each join strategy's median, ratio and run-time join decisions; printed when several."""
    figures = {}
    for strategy, seconds in runs.items():
        median = statistics.median(seconds)
        figures[strategy] = {
            "tidal_seconds": round(median, 3),
            "ratio": round(median / spark, 3),
            "joins": joins[strategy],
        }
        if len(runs) > 1:
            print(
                f"{name} with {strategy}: {_seconds(seconds)}; decided at run time: "
                f"{'; '.join(joins[strategy]) or 'nothing'}",
                flush=True,
            )
    return figures


def breakdown(name: str, result) -> dict[str, int]:
    """Print where the last run's task time went, per vertex (``taskmanager.timing``); return
    the job's totals per phase, with ``queued`` and the tasks' durations."""
    totals: dict[str, int] = {}
    print(
        f"{name}: where Tidal's task time went (last run, ms summed over each vertex's tasks)",
        flush=True,
    )
    tasks = {report.chain or vertex: report for vertex, report in result.vertices.items()}
    for vertex, report in tasks.items():  # a chain's vertices share one report
        parts = {**report.phases_ms, "queued": report.queued_ms}
        for phase, ms in parts.items():
            totals[phase] = totals.get(phase, 0) + ms
        shown = ", ".join(f"{phase} {ms}" for phase, ms in parts.items() if ms)
        print(f"  {vertex:<20} {shown}", flush=True)
    return totals


def busy_cpu_seconds() -> float | None:
    """The CPU seconds this machine's cores have been busy since it booted (``/proc/stat``:
    user, nice, system, irq, softirq and steal time); None where there is no such file. Read
    before and after a cold run on a machine that is the run's alone, the difference is what
    the run cost every process it started: Ray's, the JVMs', the interpreters'."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(value) for value in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def cold_summary(per_query: Mapping[str, dict], numbers: list[int]) -> dict[str, float]:
    """Over the queries run cold on both sides: ``cold_first_ratio``, the sum of Tidal's first
    runs over PySpark's, ``cold_ratio``, the same with each side's start added, and
    ``cold_cpu_ratio``, the CPU seconds of the two (start and first run) where measured."""
    cold = [per_query[query_name(n)] for n in numbers if "cold_ratio" in per_query[query_name(n)]]
    if not cold:
        return {}
    sides = ("tidal", "spark")
    first = {side: sum(f[f"cold_{side}_first_seconds"] for f in cold) for side in sides}
    whole = {
        side: first[side] + sum(f[f"cold_{side}_start_seconds"] for f in cold) for side in sides
    }
    figures = {
        "cold_first_ratio": round(first["tidal"] / first["spark"], 3),
        "cold_ratio": round(whole["tidal"] / whole["spark"], 3),
    }
    shown = (
        f"cold, {len(cold)} queries: first runs {first['tidal']:.1f} s against "
        f"{first['spark']:.1f} s ({figures['cold_first_ratio']:.2f}), with the starts "
        f"{whole['tidal']:.1f} s against {whole['spark']:.1f} s "
        f"({figures['cold_ratio']:.2f})"
    )
    if all(f"cold_{side}_cpu_seconds" in f for f in cold for side in sides):
        cpu = {side: sum(f[f"cold_{side}_cpu_seconds"] for f in cold) for side in sides}
        figures["cold_cpu_ratio"] = round(cpu["tidal"] / cpu["spark"], 3)
        shown += (
            f"; CPU {cpu['tidal']:.0f} s against {cpu['spark']:.0f} s "
            f"({figures['cold_cpu_ratio']:.2f})"
        )
    print(shown, flush=True)
    return figures


def geometric_mean(ratios: list[float]) -> float:
    """The mean that weighs a query twice as fast and one twice as slow alike."""
    return math.exp(statistics.fmean(math.log(ratio) for ratio in ratios))


def ratio_by_strategy(measured: Mapping[str, dict], strategies: list[str]) -> dict[str, float]:
    """Each join strategy's geometric mean of the queries' ratios with it (the first
    strategy's is the run's ``ratio``)."""
    return {
        strategy: round(
            geometric_mean(
                [
                    figures["by_strategy"][strategy]["ratio"]
                    for figures in measured.values()
                    if "by_strategy" in figures
                ]
            ),
            3,
        )
        for strategy in strategies
    }


def query_name(number: int) -> str:
    return f"q{number:02d}"


def _seconds(runs: list[float]) -> str:
    if not runs:
        return "not run"
    return f"median {statistics.median(runs):.2f} s of {[round(r, 2) for r in runs]}"


def print_table(per_query: dict[str, dict]) -> None:
    """Every query's medians and ratio, the slowest against PySpark first; the Spark work
    and Tidal's own share of Tidal's median run; the cold ratio where measured."""
    ranked = sorted(per_query.items(), key=lambda item: -(item[1]["ratio"] or 0))
    print(
        f"{'query':<6} {'Tidal s':>8} {'PySpark s':>10} {'ratio':>6} {'Spark s':>8} "
        f"{'own':>5} {'cold':>6}  same",
        flush=True,
    )
    for name, figures in ranked:
        print(
            f"{name:<6} {_shown(figures['tidal_seconds'], '.3f'):>8} "
            f"{_shown(figures['spark_seconds'], '.3f'):>10} {_shown(figures['ratio'], '.3f'):>6} "
            f"{_shown(figures.get('spark_work_seconds'), '.3f'):>8} "
            f"{_shown(figures.get('own_share'), '.0%'):>5} "
            f"{_shown(figures.get('cold_ratio'), '.2f'):>6}  "
            f"{'yes' if figures['same_result'] else 'NO'}",
            flush=True,
        )


def _shown(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)
