"""A TaskManager killed by pid on a node that stays up costs what it was running: its finished
partition files are surveyed on the node, found whole, and read by the reruns of the tasks it
was running; no finished task runs again, and the job's details say so."""

from __future__ import annotations

import os
import signal
import time

import pyarrow as pa
import pytest
import ray

from jobmanager import Client, JobGraph, ParquetSink, Partitioner, arrow, spark
from jobmanager.model.config import MAX_SLOTS, NUMBER_OF_TASK_SLOTS
from jobmanager.runtime.names import resource_manager_handle
from tests.jobmanager.runtime.jobs import FAST, expected_sums, numbers
from tests.jobmanager.runtime.test_failover_on_ray import eventually
from tests.jobmanager.runtime.test_jobs_on_ray import read_sums

pytestmark = pytest.mark.runtime

SOURCES = 4


@pytest.fixture(scope="module")
def client(ray_cluster):
    return Client()


def gated_sums(out: str, gate: str) -> JobGraph:
    """Sum per key, each task waiting for ``gate/open`` once it has its input."""

    def wait_then_sum(table: pa.Table) -> pa.Table:
        while not os.path.exists(os.path.join(gate, "open")):
            time.sleep(0.02)
        return table.group_by("key").aggregate([("value", "sum")])

    g = JobGraph("gated-sums")
    src = g.add_vertex("numbers", parallelism=SOURCES, operator=arrow(numbers(1000)))
    agg = g.add_vertex("sum", parallelism=2, operator=arrow(wait_then_sum))
    sink = g.add_vertex("sink", operator=ParquetSink(out))
    g.connect(src, agg, Partitioner.hash("key"))
    g.connect(agg, sink, Partitioner.FORWARD)
    return g


def sums_running(handle):
    """The job's status once every source has finished and both sums run, else None."""
    status = handle.status()
    by_member = {member: v for v in status.vertices for member in v.members}
    done = by_member["numbers"].done and by_member["sum"].running == 2
    return status if done else None


def test_a_killed_taskmanager_costs_only_the_tasks_it_was_running(client, tmp_path):
    gate = tmp_path / "gate"
    gate.mkdir()
    config = {**FAST, MAX_SLOTS.key: 2, NUMBER_OF_TASK_SLOTS.key: 2}  # one TaskManager
    handle = client.submit(gated_sums(str(tmp_path / "out"), str(gate)), config=config)

    status = eventually(lambda: sums_running(handle), "every source finished and both sums running")
    (victim,) = status.task_managers
    os.kill(ray.get(ray.get_actor(victim, namespace="tidal").ping.remote()), signal.SIGKILL)
    eventually(lambda: handle.status().task_manager_losses, "the TaskManager's loss in the details")
    (gate / "open").touch()
    result = handle.wait(timeout=180)
    assert result.status == "FINISHED", result.cause
    assert read_sums(tmp_path / "out") == expected_sums(SOURCES, 1000)
    sources = result.vertices["numbers"]
    assert sources.deployments == sources.tasks == SOURCES  # no finished source ran again
    (loss,) = handle.status().task_manager_losses
    assert (loss.task_manager, loss.running, loss.rerun, loss.kept) == (victim, 2, 0, SOURCES)
    assert loss.recovered
    handle.release()


def test_the_replacement_adopts_the_killed_taskmanager_s_warm_jvm(client, tmp_path):
    """The killed TaskManager's Spark JVM outlives it, and its replacement, the spare
    TaskManager the last job's end started, runs the rerun tasks on that JVM, not a new one."""
    assert client.warm_up()
    spare = ray.get(resource_manager_handle().describe.remote())["spare"]
    assert spare is not None
    gate = tmp_path / "gate"
    gate.mkdir()
    opened = str(gate / "open")

    def wait_then_sum(frame):
        while not os.path.exists(opened):
            time.sleep(0.02)
        return frame.groupBy("key").sum("value").withColumnRenamed("sum(value)", "value_sum")

    g = JobGraph("gated-spark-sums")
    src = g.add_vertex("numbers", parallelism=SOURCES, operator=arrow(numbers(1000)))
    agg = g.add_vertex("sum", parallelism=2, operator=spark(wait_then_sum))
    sink = g.add_vertex("sink", operator=ParquetSink(str(tmp_path / "out")))
    g.connect(src, agg, Partitioner.hash("key"))
    g.connect(agg, sink, Partitioner.FORWARD)
    config = {**FAST, MAX_SLOTS.key: 2, NUMBER_OF_TASK_SLOTS.key: 2}
    handle = client.submit(g, config=config)
    status = eventually(lambda: sums_running(handle), "both sums running")
    (victim,) = status.task_managers
    actor = ray.get_actor(victim, namespace="tidal")
    described = eventually(
        lambda: (lambda d: d if d["spark_jvm"] else None)(ray.get(actor.describe.remote())),
        "the victim's Spark JVM up",
    )
    jvm_pid = described["spark_jvm"][0]
    os.kill(described["pid"], signal.SIGKILL)
    replacement = eventually(
        lambda: next((t for t in handle.status().task_managers if t != victim), None),
        "the reruns on a replacement",
    )
    jvm = eventually(
        lambda: ray.get(ray.get_actor(replacement, namespace="tidal").describe.remote())[
            "spark_jvm"
        ],
        "the replacement's Spark JVM up",
    )
    assert jvm == (jvm_pid, True)  # the same process, adopted
    assert replacement == spare
    described = ray.get(ray.get_actor(replacement, namespace="tidal").describe.remote())
    assert described["arrow_threads"] == 2  # its slots', though Ray started it with no CPUs
    (gate / "open").touch()
    result = handle.wait(timeout=180)
    assert result.status == "FINISHED", result.cause
    assert read_sums(tmp_path / "out") == expected_sums(SOURCES, 1000)
    handle.release()
