"""Write a golden event log: run the golden job (``job.py``) on a local Ray cluster through the
client, with its planned task failure and a JobManager killed and taken over mid-job, then keep
what a later Tidal must read back from the job's store, under ``logs/<name>/``:

    events/          the event log, every segment (the first JobManager's, then its successor's)
    snapshots/       the latest snapshot, if one was taken
    blobs/           the job graph's blob (its code, pickled as the client ships it)
    status.msgpack   the final JobDetails the JobManager wrote (status.json before them)
    expected.json    what the live run said: status, each vertex's tasks, recoveries, and the
                     segment the successor began (the log before it is a cut taken mid-job)

Run it whenever the event log's format version changes, naming the new version:

    deploy/run python -m tests.jobmanager.golden.make v1

Old golden logs are never rewritten: each is what some Tidal wrote, and every later one must
read it. The code that runs is whatever ``jobmanager`` imports, so a log of an older Tidal is
made by putting that Tidal's tree first on ``PYTHONPATH`` (its Ray processes inherit it).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from jobmanager.model.config import (
    FIXED_DELAY_ATTEMPTS,
    FIXED_DELAY_DELAY,
    HEARTBEAT_INTERVAL,
    NUMBER_OF_TASK_SLOTS,
    RESTART_STRATEGY,
    SNAPSHOT_MIN_PAUSE,
)

HERE = Path(__file__).resolve().parent
CONFIG = {
    HEARTBEAT_INTERVAL.key: "200 ms",
    RESTART_STRATEGY.key: "fixed-delay",
    FIXED_DELAY_ATTEMPTS.key: 3,
    FIXED_DELAY_DELAY.key: "100 ms",
    NUMBER_OF_TASK_SLOTS.key: 2,
    SNAPSHOT_MIN_PAUSE.key: "200 ms",
}


def _eventually(condition, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit(f"golden run: timed out waiting for {what}")


def run(work: Path):
    """Run the job; return its handle and result once it has finished."""
    import ray

    from jobmanager import Client
    from tests.jobmanager.golden.job import golden_job

    for folder in ("markers", "gate"):
        (work / folder).mkdir()
    ray.init(
        num_cpus=4,
        include_dashboard=False,
        namespace="tidal",
        logging_level=logging.WARNING,
        log_to_driver=False,
    )
    handle = Client().submit(golden_job(str(work)), config=CONFIG)
    gate = work / "gate"
    _eventually(
        lambda: any(p.name.startswith("started-") for p in gate.iterdir()),
        "the sum stage to reach its gate",
    )
    time.sleep(0.5)  # a snapshot of the state so far (min-pause 200 ms)
    os.kill(handle.status().pid, 9)
    _eventually(lambda: handle.status().recoveries == 1, "the JobManager's take-over")
    (gate / "open").touch()
    result = handle.wait(timeout=180)
    if result.status != "FINISHED":
        raise SystemExit(f"golden run: the job did not finish: {result.status} {result.cause}")
    return handle, result


def keep(handle, result, target: Path) -> None:
    from blob import FileSystemBlobStore
    from jobmanager.model.config import Configuration
    from jobmanager.runtime.jobstore import STATUS_FILE, JobStore, store_root

    store = JobStore(store_root(Configuration()), handle.job_id)
    source = Path(store.path)
    shutil.copytree(source / "events", target / "events")
    if (source / "snapshots").exists():
        shutil.copytree(source / "snapshots", target / "snapshots")
    shutil.copy(source / STATUS_FILE, target / STATUS_FILE)
    submitted = store.submitted()
    FileSystemBlobStore(str(target / "blobs")).put(store.blob(submitted.graph_key))
    segments = sorted(p.name for p in (target / "events").iterdir())
    expected = {
        "job_id": handle.job_id,
        "status": result.status,
        "vertices": {
            name: {"tasks": r.tasks, "deployments": r.deployments}
            for name, r in sorted(result.vertices.items())
        },
        "recoveries": handle.status().recoveries,
        "segments": segments,
        "python": sys.version.split()[0],
    }
    (target / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


def main(name: str) -> None:
    target = HERE / "logs" / name
    if target.exists():
        raise SystemExit(f"{target} exists: golden logs are never rewritten")
    work = Path(tempfile.mkdtemp(prefix="tidal-golden-"))
    os.environ["TIDAL_HOME"] = str(work / "home")  # before Ray starts: its processes inherit it
    try:
        handle, result = run(work)
        target.mkdir(parents=True)
        keep(handle, result, target)
        handle.release()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    print(f"golden log {name}: {size} bytes under {target}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m tests.jobmanager.golden.make <name, e.g. v1>")
    main(sys.argv[1])
