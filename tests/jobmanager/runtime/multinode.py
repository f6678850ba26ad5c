"""Tidal on a three-node Ray cluster (``ray.cluster_utils.Cluster``: a head and two workers, each
with CPUs for TaskManagers) with its data on a real S3 API server (moto's, on localhost):

- ``demo``: the revenue-by-nation example job (``examples/revenue_by_nation.py``, the one
  ``deploy/`` runs on a cluster) reads TPC-H data from ``s3://`` and writes its result there;
- ``node_lost``: a worker node removed while a job's consumers wait at a gate; only the
  producers of the partitions it held run again, and the S3 target holds one copy of the result;
- ``commit_killed``: the JobManager killed while it commits a result over an old one on S3; a
  reader sees the old result or the new one, and the new one, once, in the end.

Run by ``test_multinode.py`` in a PID namespace of its own; prints one JSON object.

    python -m tests.jobmanager.runtime.multinode WORK_DIR
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import time
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import ray
from ray.cluster_utils import Cluster

from jobmanager.model.config import (
    FIXED_DELAY_ATTEMPTS,
    FIXED_DELAY_DELAY,
    HEARTBEAT_INTERVAL,
    NUMBER_OF_TASK_SLOTS,
    RESTART_STRATEGY,
)

SCALE = 0.01
PARTS = 6
ROWS = 2000
CONFIG = {
    HEARTBEAT_INTERVAL.key: "200 ms",
    RESTART_STRATEGY.key: "fixed-delay",
    # a node removed on a busy machine is noticed late: until then a TaskManager placed there
    # dies at once, each such start a failed attempt (5 were spent so in one suite run)
    FIXED_DELAY_ATTEMPTS.key: 20,
    FIXED_DELAY_DELAY.key: "100 ms",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def eventually(condition, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def start_s3() -> None:
    from moto.server import ThreadedMotoServer

    port = free_port()
    ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False).start()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    # credentials and endpoint where every AWS library looks: the environment, inherited by
    # every Ray process the cluster starts below
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}",
    )
    fsspec.filesystem("s3").mkdir("tidal")


def node_of(task_manager: str) -> str:
    return ray.get(ray.get_actor(task_manager, namespace="tidal").describe.remote())["node"]


def objects(url: str) -> list[str]:
    fs, path = fsspec.core.url_to_fs(url)
    fs.invalidate_cache()
    return sorted(p.rsplit("/", 1)[-1] for p in fs.find(path))


def demo(client) -> dict:
    from examples.compare import first_difference, read_result
    from examples.revenue_by_nation import build, reference
    from examples.tpch_data import generate

    generate("s3://tidal/tpch", SCALE)
    out = "s3://tidal/revenue"
    handle = client.submit(
        build("s3://tidal/tpch", out), config={**CONFIG, NUMBER_OF_TASK_SLOTS.key: 2}
    )
    result = handle.wait(timeout=400)
    status = handle.status()
    return {
        "status": result.status,
        "cause": result.cause[-2000:],
        "difference": first_difference(read_result(out), reference("s3://tidal/tpch"))
        if result.succeeded
        else "not finished",
        "nodes": sorted({node_of(tm) for tm in status.task_managers}),
        "remote_bytes": sum(v.bytes_in_remote for v in result.vertices.values()),
        "objects": objects(out),
    }


def write_parts(url: str) -> dict[int, int]:
    fs, root = fsspec.core.url_to_fs(url)
    sums: dict[int, int] = {}
    for part in range(PARTS):
        values = pa.array(range(part * ROWS, (part + 1) * ROWS), pa.int64())
        table = pa.table({"key": pc.remainder(values, 7), "value": values})
        with fs.open(f"{root}/part-{part}.parquet", "wb") as file:
            pq.write_table(table, file)
        for value in values.to_pylist():
            sums[value % 7] = sums.get(value % 7, 0) + value
    return sums


def gated_job(data: str, out: str, gate: str):
    """Read ``PARTS`` files, the task of the first waiting at ``gate``; sum per key; write."""
    from jobmanager import FileSource, JobGraph, ParquetSink, Partitioner, arrow

    def read(table: pa.Table) -> pa.Table:
        if table.num_rows and pc.min(table.column("value")).as_py() < ROWS:
            open(os.path.join(gate, "started"), "w").close()
            while not os.path.exists(os.path.join(gate, "open")):
                time.sleep(0.02)
        return table

    g = JobGraph("node-lost")
    source = g.add_vertex("read", PARTS, sources=[FileSource(data)], operator=arrow(read))
    sums = g.add_vertex(
        "sum",
        parallelism=2,
        operator=arrow(lambda t: t.group_by("key").aggregate([("value", "sum")])),
    )
    sink = g.add_vertex("sink", operator=ParquetSink(out, overwrite=True))
    g.connect(source, sums, Partitioner.hash("key"))
    g.connect(sums, sink, Partitioner.FORWARD)
    return g


def read_sums(out: str) -> dict[int, int]:
    from examples.compare import read_result

    table = read_result(out)
    return dict(zip(table.column("key").to_pylist(), table.column("value_sum").to_pylist()))


def to_the_gate(client, work: Path, name: str):
    """Submit the gated job over its own data; wait until five sources finished and the sixth
    waits at the gate. Return the handle, the gate, the output, the expected sums, and which
    TaskManager holds each finished source's partition and runs each running source."""
    expected = write_parts(f"s3://tidal/parts-{name}")
    gate = work / f"gate-{name}"
    gate.mkdir()
    out = f"s3://tidal/sums-{name}"
    config = {**CONFIG, NUMBER_OF_TASK_SLOTS.key: 1}
    handle = client.submit(gated_job(f"s3://tidal/parts-{name}", out, str(gate)), config=config)

    def vertex(name):
        return next(v for v in handle.status().vertices if v.name == name)

    eventually(
        lambda: vertex("read").finished == PARTS - 1 and (gate / "started").exists(),
        "five sources finished and the sixth waiting at the gate",
        timeout=240,
    )
    described = handle.describe()
    held = {
        label: tm
        for label, state, tm in described[3]
        if label.startswith("read->") and state == "available"
    }
    running = {
        label: slot[0]
        for label, state, _, slot in described[2]
        if label.startswith("read[") and state == "running"
    }
    return handle, gate, out, expected, held, running


def node_lost(client, cluster, workers, work: Path) -> dict:
    handle, gate, out, expected, held, running = to_the_gate(client, work, "node-lost")
    nodes = {tm: node_of(tm) for tm in {*held.values(), *running.values()}}
    victim = next((w for w in workers if w.node_id in {nodes[tm] for tm in held.values()}), None)
    if victim is None:
        return {"error": "no partition on a worker node", "nodes": nodes}
    lost = sorted(label for label, tm in held.items() if nodes[tm] == victim.node_id)
    gated_there = sorted(label for label, tm in running.items() if nodes[tm] == victim.node_id)
    cluster.remove_node(victim)
    (gate / "open").touch()
    result = handle.wait(timeout=240)
    attempts = {label: attempt for label, _, attempt, _ in handle.describe()[2]}
    return {
        "status": result.status,
        "cause": result.cause[-2000:],
        "sums_equal": result.succeeded and read_sums(out) == expected,
        "nodes_used": len(set(nodes.values())),
        "lost_partitions": lost,
        "gated_tasks_on_lost_node": gated_there,
        "read_rerun": sorted(
            label
            for label, attempt in attempts.items()
            if label.startswith("read[") and attempt > 0
        ),
        "read_deployments": result.vertices["read"].deployments,
        "read_tasks": result.vertices["read"].tasks,
        "objects": objects(out),
        "sink_tasks": result.vertices["sink"].tasks,
    }


def task_manager_killed(client, workers, work: Path) -> dict:
    """As ``node_lost``, but only a TaskManager holding finished partitions on a worker node
    is killed (SIGKILL by pid): its node stays up and serves its files."""
    handle, gate, out, expected, held, running = to_the_gate(client, work, "tm-killed")
    worker_nodes = {w.node_id for w in workers}
    victim = next((tm for tm in sorted(set(held.values())) if node_of(tm) in worker_nodes), None)
    if victim is None:
        return {"error": "no partition on a worker node"}
    actor = ray.get_actor(victim, namespace="tidal")
    os.kill(ray.get(actor.ping.remote()), 9)
    # the gate opens once the loss is recorded: opened sooner, the sums could read the dead
    # TaskManager's files before its loss is seen, and nothing would be left to keep
    eventually(lambda: handle.status().task_manager_losses, "the loss recorded", timeout=120)
    (gate / "open").touch()
    result = handle.wait(timeout=240)
    attempts = {label: attempt for label, _, attempt, _ in handle.describe()[2]}
    losses = handle.status().task_manager_losses
    return {
        "status": result.status,
        "cause": result.cause[-2000:],
        "sums_equal": result.succeeded and read_sums(out) == expected,
        "held_by_victim": sorted(label for label, tm in held.items() if tm == victim),
        "running_on_victim": sorted(label for label, tm in running.items() if tm == victim),
        "read_rerun": sorted(
            label
            for label, attempt in attempts.items()
            if label.startswith("read[") and attempt > 0
        ),
        "losses": [[loss.task_manager, loss.running, loss.rerun, loss.kept] for loss in losses],
        "victim": victim,
        "bytes_in_remote": sum(v.bytes_in_remote for v in result.vertices.values()),
    }


def commit_killed(client) -> dict:
    """An old result of many objects makes the commit's last step (removing it) long; the
    JobManager is killed as soon as the job's status says it is committing."""
    from jobmanager.messages.jobstatus import JobStatus
    from jobmanager.runtime.sinks import manifest

    fs = fsspec.filesystem("s3")
    old = {f"old-{n:04d}.parquet" for n in range(150)}
    written = pa.BufferOutputStream()
    pq.write_table(pa.table({"key": [1], "value_sum": [1]}), written)
    data = written.getvalue().to_pybytes()
    fs.pipe({f"tidal/killed/{name}": data for name in old})  # uploaded side by side
    expected = write_parts("s3://tidal/killed-input")
    from jobmanager import FileSource, JobGraph, ParquetSink, Partitioner, arrow

    g = JobGraph("commit-killed")
    read = g.add_vertex("read", PARTS, sources=[FileSource("s3://tidal/killed-input")])
    sums = g.add_vertex(
        "sum",
        parallelism=4,
        operator=arrow(lambda t: t.group_by("key").aggregate([("value", "sum")])),
    )
    sink = g.add_vertex("sink", operator=ParquetSink("s3://tidal/killed", overwrite=True))
    g.connect(read, sums, Partitioner.hash("key"))
    g.connect(sums, sink, Partitioner.FORWARD)
    handle = client.submit(g, config={**CONFIG, NUMBER_OF_TASK_SLOTS.key: 1})
    status = eventually(
        lambda: (lambda s: s.status is JobStatus.FINISHING and s)(handle.status()),
        "the commit",
        timeout=240,
    )
    os.kill(status.pid, 9)
    seen = manifest("s3://tidal/killed")
    at_kill = (
        "old"
        if seen is None or set(seen["files"]) == old
        else ("new" if seen.get("job") == handle.job_id else "neither")
    )
    result = handle.wait(timeout=240)
    return {
        "status": result.status,
        "cause": result.cause[-2000:],
        "at_kill": at_kill,
        "sums_equal": result.succeeded and read_sums("s3://tidal/killed") == expected,
        "objects": objects("s3://tidal/killed"),
        "sink_tasks": result.vertices["sink"].tasks,
        "recoveries": handle.status().recoveries,
        "job_id": handle.job_id,
    }


def main(work: str) -> None:
    start_s3()
    # no dashboard (nothing here asks it), and the workers started side by side
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False}
    )
    workers = [cluster.add_node(num_cpus=2, wait=False) for _ in range(2)]
    cluster.wait_for_nodes()
    ray.init(
        address=cluster.address,
        namespace="tidal",
        logging_level=logging.WARNING,
        log_to_driver=False,
    )
    from jobmanager import Client

    client = Client()
    report = {}
    scenarios = ["demo", "commit_killed", "task_manager_killed", "node_lost"]
    for name in sys.argv[2:] or scenarios:
        if name == "demo":
            report[name] = demo(client)
        elif name == "commit_killed":
            report[name] = commit_killed(client)
        elif name == "task_manager_killed":
            report[name] = task_manager_killed(client, workers, Path(work))
        else:
            report[name] = node_lost(client, cluster, workers, Path(work))
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
