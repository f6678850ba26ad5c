"""The recovery benchmark's TPC-H half (``benchmarks/recovery.py``): dbgen's queries through
``Client.sql``, each run uninterrupted, with a TaskManager SIGKILLed and with its JobManager
SIGKILLed at half of the uninterrupted run's time; and ``--chaos``, seeded runs of random
queries each with a random kill. Every answer is checked against DuckDB's over the same files.

The kills and what they cost are ``benchmarks/kills.py``'s, read from each job afterwards, so
the figures say what the runtime did, whatever it does. The targets: a TaskManager kill costs at
most 1.5 s plus the running time its killed tasks had (the longest; they ran side by side) and
reruns no finished task; a JobManager kill costs at most 1 s.
"""

from __future__ import annotations

import random
import statistics
import time

from benchmarks.kills import (
    JOB_MANAGER,
    KINDS,
    TASK_MANAGER,
    after_fraction_of_tasks,
    after_seconds,
    kill_when,
    outcome,
)
from examples.compare import query_is_ordered, sql_difference
from examples.tpch_dbgen import duckdb_answer, queries

__all__ = ["TM_SLACK_SECONDS", "JM_TARGET_SECONDS", "chaos", "query_figures"]

TM_SLACK_SECONDS = 1.5
JM_TARGET_SECONDS = 1.0
JOB_TIMEOUT_S = 1800.0


def run_query(client, number: int, tables, expected, options, kind=None, ready=None) -> dict:
    """One run of query ``number``, with a kill of ``kind`` once ``ready`` (none without):
    its seconds from the call (planning included) to the result back, whether the answer is
    DuckDB's, and the kill's figures."""
    text = queries()[number]
    started = time.perf_counter()
    handle = client.sql(text, tables=tables, config=options)
    kill = None
    if kind is not None:
        kill = kill_when(handle, kind, ready, started, timeout=JOB_TIMEOUT_S)
    result = handle.wait(timeout=JOB_TIMEOUT_S)
    seconds = time.perf_counter() - started
    figures = {"seconds": seconds, "kind": kind}
    if result.status != "FINISHED":
        figures["error"] = f"{result.status}: {result.cause}"
    else:
        difference = sql_difference(result.to_arrow(), expected, query_is_ordered(text))
        if difference is not None:
            figures["error"] = f"differs from DuckDB's answer: {difference}"
    if kind is not None:
        figures["killed_at_seconds"] = kill.after_seconds if kill else None
        figures |= outcome(handle, kill) if kill else {"landed": False}
    handle.release()
    return figures


def query_figures(client, number: int, tables, data, repeats: int, warmups: int, options) -> dict:
    """Query ``number``: ``warmups`` unmeasured runs, then ``repeats`` rounds of an
    uninterrupted run and a run of each kill at half the uninterrupted runs' median so far."""
    expected = duckdb_answer(data, queries()[number])
    for _ in range(warmups):
        client.warm_up()
        run_query(client, number, tables, expected, options)
    runs: dict[str | None, list[dict]] = {None: [], TASK_MANAGER: [], JOB_MANAGER: []}
    for _ in range(repeats):
        client.warm_up()
        runs[None].append(run_query(client, number, tables, expected, options))
        _progress(number, runs[None][-1])
        half = statistics.median(r["seconds"] for r in runs[None]) / 2
        for kind in (TASK_MANAGER, JOB_MANAGER):
            client.warm_up()
            runs[kind].append(
                run_query(client, number, tables, expected, options, kind, after_seconds(half))
            )
            _progress(number, runs[kind][-1])
    figures = summarize(runs)
    _print(f"q{number:02d}", figures)
    for run in (r for kind_runs in runs.values() for r in kind_runs if "error" in r):
        print(f"q{number:02d} ({run['kind'] or 'uninterrupted'}): {run['error']}", flush=True)
    return figures


def _progress(number: int, run: dict) -> None:
    """One run's line as it ends: a run at scale 1 takes tens of seconds."""
    kill = ""
    if run["kind"] is not None:
        kill = (
            f", {run['kind']} killed at {run['killed_at_seconds']:.2f} s, "
            f"{run['finished_tasks_rerun']} of {run['finished_at_kill']} finished tasks rerun, "
            f"{run['killed_tasks']} killed tasks had run {run['killed_tasks_seconds']:.2f} s; "
            f"after the kill, seen {_s(run['seen_after_seconds'])}, a task running again "
            f"{_s(run['running_after_seconds'])}"
            if run["landed"]
            else f", the job never saw the {run['kind']} kill (it came after the end)"
        )
    print(f"q{number:02d} run: {run['seconds']:.2f} s{kill}", flush=True)


def _s(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.2f} s"


def summarize(runs: dict[str | None, list[dict]]) -> dict:
    """Medians over the runs whose kill landed (a kill after the job's end measures nothing),
    the costs as killed minus uninterrupted, and whether each is within its target."""

    def median(values):
        values = [v for v in values if v is not None]
        return round(statistics.median(values), 3) if values else None

    plain = median(r["seconds"] for r in runs[None])
    figures = {"uninterrupted_seconds": plain, "same_result": True}
    for kind, short in ((TASK_MANAGER, "tm"), (JOB_MANAGER, "jm")):
        landed = [r for r in runs[kind] if r["landed"]]
        killed = median(r["seconds"] for r in landed)
        figures[f"{short}_killed_seconds"] = killed
        figures[f"{short}_cost_seconds"] = None if killed is None else round(killed - plain, 3)
        figures[f"{short}_killed_at_seconds"] = median(r["killed_at_seconds"] for r in landed)
        figures[f"{short}_finished_tasks_rerun"] = max(
            (r["finished_tasks_rerun"] for r in landed), default=None
        )
        figures[f"{short}_kills_landed"] = f"{len(landed)} of {len(runs[kind])}"
        for after in ("seen_after_seconds", "running_after_seconds"):
            figures[f"{short}_{after}"] = median(r[after] for r in landed)
    figures["killed_tasks_seconds"] = median(
        r["killed_tasks_seconds"] for r in runs[TASK_MANAGER] if r["landed"]
    )
    figures["same_result"] = not any("error" in r for rs in runs.values() for r in rs)
    tm_cost, jm_cost = figures["tm_cost_seconds"], figures["jm_cost_seconds"]
    figures["tm_within_target"] = (
        tm_cost is not None
        and tm_cost <= TM_SLACK_SECONDS + figures["killed_tasks_seconds"]
        and figures["tm_finished_tasks_rerun"] == 0
    )
    figures["jm_within_target"] = jm_cost is not None and jm_cost <= JM_TARGET_SECONDS
    return figures


def _print(name: str, f: dict) -> None:
    s = _s
    print(
        f"{name}: uninterrupted {s(f['uninterrupted_seconds'])}; "
        f"TaskManager killed at {s(f['tm_killed_at_seconds'])}: {s(f['tm_killed_seconds'])}, "
        f"cost {s(f['tm_cost_seconds'])} (its running tasks had run "
        f"{s(f['killed_tasks_seconds'])}), {f['tm_finished_tasks_rerun']} finished tasks "
        f"rerun, {'within' if f['tm_within_target'] else 'missed'} target "
        f"({f['tm_kills_landed']} kills landed; loss seen {_s(f['tm_seen_after_seconds'])} "
        f"and a task running {_s(f['tm_running_after_seconds'])} after the kill); "
        f"JobManager killed at "
        f"{s(f['jm_killed_at_seconds'])}: {s(f['jm_killed_seconds'])}, cost "
        f"{s(f['jm_cost_seconds'])}, {f['jm_finished_tasks_rerun']} finished tasks rerun, "
        f"{'within' if f['jm_within_target'] else 'missed'} target of {JM_TARGET_SECONDS:g} s "
        f"({f['jm_kills_landed']} kills landed; recovered {_s(f['jm_seen_after_seconds'])} "
        "after the kill)",
        flush=True,
    )


def chaos(client, runs: int, seed: int, tables, data, options) -> dict:
    """``runs`` seeded runs, each of a random query among the 22 with a random kill (kind, and
    point as a fraction of the tasks finished, so a fast run is not over before it)."""
    rng = random.Random(seed)
    right = landed = 0
    for run in range(runs):
        number, kind, point = rng.randint(1, 22), rng.choice(KINDS), rng.uniform(0.1, 0.9)
        expected = duckdb_answer(data, queries()[number])
        ready = after_fraction_of_tasks(point)
        figures = run_query(client, number, tables, expected, options, kind, ready)
        right += "error" not in figures
        landed += figures["landed"]
        print(
            f"chaos {run} (seed {seed}): q{number:02d}, {kind} killed at {point:.0%} of the "
            f"tasks finished: {figures.get('error', 'right')}, {figures['seconds']:.2f} s, "
            f"kill {'landed' if figures['landed'] else 'missed'}, "
            f"{figures.get('finished_tasks_rerun', 0)} finished tasks rerun",
            flush=True,
        )
    print(f"chaos: {right} of {runs} answers right ({landed} kills landed)", flush=True)
    return {"runs": runs, "right": right, "landed": landed, "seed": seed}
