"""How long a JobManager that takes a job over spends rebuilding its state from the event log,
for the job of ``tidal stress``: two vertices of ``--parallelism`` subtasks, all-to-all,
blocking (20,000 tasks at the default 10,000; issue 10 asks for under 2 s).

The scheduling core runs the job to the end against simulated TaskManagers (the baseline: the
live run that made the log), every event it applied is written to a real event log on disk
(lz4-compressed msgpack records, as the JobManager writes them), and the log is read back and
replayed into a fresh state ``--repeats`` times. Each replay reads and decodes the log from
disk and applies every event; the replayed state must equal the live one. ``ratio`` is the
median replay over the live run. Prints human lines, then one JSON object as the last line.

    python benchmarks/replay.py
    python benchmarks/replay.py --parallelism 100 --repeats 1
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
import gc  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from jobmanager.core.replay import new_state, replay  # noqa: E402
from jobmanager.core.state import JobManagerState  # noqa: E402
from jobmanager.messages import events as ev  # noqa: E402
from jobmanager.model.config import NUMBER_OF_TASK_SLOTS, Configuration  # noqa: E402
from jobmanager.runtime.eventlog import EventLog, read_log  # noqa: E402
from jobmanager.simulation.cluster import (  # noqa: E402
    SimulatedRun,
    SimulatedTaskManagers,
    uniform_bytes,
)
from jobmanager.simulation.stress import VOLUME_PER_TASK, build_stress_job  # noqa: E402

TARGET_SECONDS = 2.0


def live_run(parallelism: int):
    job = build_stress_job(parallelism, "all-to-all", "blocking")
    config = {NUMBER_OF_TASK_SLOTS.key: 100}
    submitted = ev.JobSubmitted(job.name, "", tuple(config.items()), 0.0, 2, ())
    gc.collect()
    started = time.perf_counter()
    state = JobManagerState(job, Configuration(config), job_id=job.name, cluster_slots=2)
    cluster = SimulatedTaskManagers(
        state.graph, uniform_bytes(VOLUME_PER_TASK), reports_running=True
    )
    run = SimulatedRun(state, cluster, record=True)
    terminated = run.run([ev.JobStarted()])
    seconds = time.perf_counter() - started
    if terminated is None or terminated.status != "FINISHED":
        raise SystemExit(f"the live run did not finish: {terminated}")
    return job, submitted, state, run.events, len(cluster.deployed), seconds


def replay_log(job, url: str) -> tuple[JobManagerState, float]:
    gc.collect()
    started = time.perf_counter()
    records = read_log(url)
    _, submitted = next(records)
    state = replay(new_state(job, submitted, job.name), (event for _, event in records))
    return state, time.perf_counter() - started


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parallelism", type=int, default=10_000, help="subtasks per vertex")
    parser.add_argument("--repeats", type=int, default=3, help="measured replays")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")

    job, submitted, live, events, tasks, live_seconds = live_run(args.parallelism)
    print(f"live run: {tasks} tasks, {len(events)} events in {live_seconds:.2f} s", flush=True)
    work = tempfile.mkdtemp(prefix="tidal-bench-replay-")
    try:
        url = os.path.join(work, "events")
        log = EventLog(url)
        started = time.perf_counter()
        log.append(submitted, 0)
        for event in events:
            log.append(event, 0)
        log.close()
        write_seconds = time.perf_counter() - started
        log_bytes = sum(os.path.getsize(os.path.join(url, n)) for n in os.listdir(url))
        print(f"log written: {log_bytes / 2**20:.1f} MiB in {write_seconds:.2f} s", flush=True)
        del events
        runs, same = [], True
        for _ in range(args.repeats):
            replayed, seconds = replay_log(job, url)
            runs.append(seconds)
            same &= replayed.describe() == live.describe()
            del replayed
            print(f"replay: {seconds:.2f} s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    median = statistics.median(runs)
    summary = {
        "benchmark": "replay",
        "parallelism": args.parallelism,
        "tasks": tasks,
        "events": live.events_applied,
        "log_bytes": log_bytes,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "live_seconds": round(live_seconds, 3),
        "write_seconds": round(write_seconds, 3),
        "replay_seconds": round(median, 3),
        "replay_runs": [round(r, 3) for r in runs],
        "same_state": same,
        "target_seconds": TARGET_SECONDS,
        "ratio": round(median / live_seconds, 3),
    }
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    sys.exit(0 if main()["same_state"] else 1)
