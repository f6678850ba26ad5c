"""Speculative execution against a straggler: one task of a stage of 8 runs 10x slower on one
TaskManager, with speculation off and on, in one process.

The stage reads 8 Parquet files (one task each) and, per task, sleeps ``--task-seconds``; the
task reading part 3 sleeps ten times as long when it runs in the process that first ran it (an
injected sleep standing for a sick machine: a slow disk, a noisy neighbour). Its rows then go
to a Parquet sink. Without speculation the job waits for the straggler; with it
(``execution.batch.speculative.enabled``, the detector checking every 200 ms with a 500 ms
lower bound) the straggler gets a second attempt on another TaskManager, which finishes first.
Both runs must write the same rows. The local cluster gets 8 logical CPUs, so the 8 tasks run
at once on 2 cores (they sleep). Last line: JSON with both times and ``ratio`` (on / off,
target at most 0.5).

    python benchmarks/speculation.py
    python benchmarks/speculation.py --task-seconds 0.2 --repeats 1     # tiny
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(_ROOT)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from jobmanager import FileSource, JobGraph, ParquetSink, Partitioner, arrow  # noqa: E402
from jobmanager.model.config import (  # noqa: E402
    NUMBER_OF_TASK_SLOTS,
    SLOW_TASK_BASELINE_LOWER_BOUND,
    SLOW_TASK_CHECK_INTERVAL,
    SPECULATION_ENABLED,
)

TASKS = 8
SLOW_PART = 3
SLOWDOWN = 10
TARGET_RATIO = 0.5
SPECULATION = {
    SPECULATION_ENABLED.key: True,
    SLOW_TASK_CHECK_INTERVAL.key: "200 ms",
    SLOW_TASK_BASELINE_LOWER_BOUND.key: "500 ms",
}
SLOTS = {NUMBER_OF_TASK_SLOTS.key: 2}
OUTLAST_DEADLINE_S = 60.0


def write_parts(directory: str, rows: int = 1000) -> pa.Table:
    os.makedirs(directory, exist_ok=True)
    tables = []
    for part in range(TASKS):
        table = pa.table(
            {
                "part": pa.array([part] * rows, pa.int64()),
                "value": pa.array(range(part * rows, (part + 1) * rows), pa.int64()),
            }
        )
        pq.write_table(table, os.path.join(directory, f"part-{part}.parquet"))
        tables.append(table)
    return pa.concat_tables(tables)


def straggler(task_seconds: float, marker: str, outlast: bool = False):
    """Sleep ``task_seconds``; the task of part 3 sleeps ten times as long in the process that
    ran it first (the "slow TaskManager", named by ``marker``). With ``outlast`` (for tests, which
    must not race the detector against that sleep on a busy machine) the slow attempt goes on
    sleeping until another process has run part 3, and then ten times as long again; any other
    run of part 3 says so in ``marker.outrun``, and the slow one, when it wakes, in
    ``marker.woke``."""

    def work(table: pa.Table) -> pa.Table:
        slow = False
        if table.num_rows and table.column("part")[0].as_py() == SLOW_PART:
            try:
                with open(marker, "x") as claimed:
                    claimed.write(str(os.getpid()))
            except FileExistsError:
                pass
            with open(marker) as claimed:
                slow = claimed.read() == str(os.getpid())
        time.sleep(task_seconds * (SLOWDOWN if slow else 1))
        if slow and outlast:
            deadline = time.monotonic() + OUTLAST_DEADLINE_S
            while not os.path.exists(f"{marker}.outrun") and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(task_seconds * SLOWDOWN)
            open(f"{marker}.woke", "w").close()
        elif table.num_rows and table.column("part")[0].as_py() == SLOW_PART:
            open(f"{marker}.outrun", "w").close()
        return table

    return work


def straggler_job(
    data: str, out: str, task_seconds: float, marker: str, outlast: bool = False
) -> JobGraph:
    g = JobGraph("straggler")
    # one task per file, set: the files hold far less than a task's data volume
    stage = g.add_vertex(
        "stage",
        TASKS,
        sources=[FileSource(data)],
        operator=arrow(straggler(task_seconds, marker, outlast)),
    )
    sink = g.add_vertex("sink", operator=ParquetSink(out, overwrite=True))
    g.connect(stage, sink, Partitioner.FORWARD)
    return g


def run(client, data: str, out: str, task_seconds: float, speculative: bool, folder: str) -> dict:
    marker = tempfile.mktemp(prefix="slow-", dir=folder)
    config = {**SLOTS, **(SPECULATION if speculative else {})}
    client.warm_up()
    began = time.perf_counter()
    result = client.submit(straggler_job(data, out, task_seconds, marker), config=config).wait()
    seconds = time.perf_counter() - began
    if result.status != "FINISHED":
        raise SystemExit(f"the job {result.status.lower()}: {result.cause}")
    rows = pq.read_table(out).sort_by("value")
    return {"seconds": seconds, "deployments": result.vertices["stage"].deployments, "rows": rows}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task-seconds", type=float, default=1.0, help="a normal task's sleep")
    parser.add_argument("--repeats", type=int, default=3, help="measured runs of each (median)")
    args = parser.parse_args(argv)
    from jobmanager import Client

    folder = tempfile.mkdtemp(prefix="tidal-bench-speculation-")
    data = os.path.join(folder, "data")
    expected = write_parts(data).sort_by("value")
    client = Client(num_cpus=TASKS)
    run(client, data, os.path.join(folder, "warm"), 0.01, False, folder)  # TaskManagers up
    off, on = [], []
    for repeat in range(args.repeats):
        for speculative, runs in ((False, off), (True, on)):
            out = os.path.join(folder, f"out-{speculative}-{repeat}")
            figures = run(client, data, out, args.task_seconds, speculative, folder)
            if not figures["rows"].equals(expected):
                raise SystemExit(f"speculation {'on' if speculative else 'off'}: wrong result")
            runs.append(figures)
    off_s = statistics.median(f["seconds"] for f in off)
    on_s = statistics.median(f["seconds"] for f in on)
    print(
        f"speculation off: {[round(f['seconds'], 2) for f in off]} s, "
        f"{[f['deployments'] for f in off]} deployments",
        flush=True,
    )
    print(
        f"speculation on:  {[round(f['seconds'], 2) for f in on]} s, "
        f"{[f['deployments'] for f in on]} deployments",
        flush=True,
    )
    summary = {
        "benchmark": "speculation",
        "tasks": TASKS,
        "task_seconds": args.task_seconds,
        "slowdown": SLOWDOWN,
        "repeats": args.repeats,
        "off_seconds": round(off_s, 3),
        "on_seconds": round(on_s, 3),
        "on_deployments": [f["deployments"] for f in on],
        "same_result": True,
        "target_ratio": TARGET_RATIO,
        "ratio": round(on_s / off_s, 3),
    }
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    main()
