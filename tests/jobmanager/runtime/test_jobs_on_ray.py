"""Jobs on a real local Ray cluster, with real TaskManager processes and real partition files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest
import ray

from jobmanager import Client, FileSource, JobGraph, ParquetSink, Partitioner, arrow
from jobmanager.client.client import _named_job_manager
from jobmanager.core.replay import new_state, replay
from jobmanager.messages import events as ev
from jobmanager.errors import ConfigurationError, CyclicGraphError, JobGraphError
from jobmanager.runtime.jobrecords import job_record
from jobmanager.model.config import (
    FIXED_DELAY_ATTEMPTS,
    MAX_SLOTS,
    NUMBER_OF_TASK_SLOTS,
    OPERATOR_CHAINING,
    TASKMANAGER_IDLE_TIMEOUT,
    TMP_DIRS,
)
from tests.jobmanager.runtime.jobs import FAST, expected_sums, sum_job

pytestmark = pytest.mark.runtime


@pytest.fixture(scope="module")
def client(ray_cluster):
    return Client()


def read_sums(path) -> dict[int, int]:
    table = pq.read_table(path)
    return dict(zip(table.column("key").to_pylist(), table.column("value_sum").to_pylist()))


def test_an_arrow_job_runs_end_to_end_and_commits_its_output(client, tmp_path):
    out = tmp_path / "sums"
    handle = client.submit(sum_job(str(out)), config=FAST)
    result = handle.wait(timeout=120)
    assert result.status == "FINISHED", result.cause
    assert read_sums(out) == expected_sums(4, 1000)
    assert not any(p.name.startswith("sums.tidal-staging") for p in tmp_path.iterdir())
    sums = result.vertices["sum"]
    assert sums.parallelism >= 1 and "per task" in sums.explanation
    assert result.vertices["numbers"].rows_out == 4000

    # a second after the end its JobManager has left: release() is then the client's to do
    deadline = time.monotonic() + 60
    while _named_job_manager(handle.job_id) is not None:
        assert time.monotonic() < deadline, "the JobManager did not leave after the job's end"
        time.sleep(0.2)
    store = os.path.join(os.environ["TIDAL_HOME"], "jobs", handle.job_id)
    assert os.path.isdir(store) and job_record(handle.job_id) is not None
    handle.release()
    assert not os.path.exists(store) and job_record(handle.job_id) is None
    with pytest.raises(LookupError, match=handle.job_id):
        client.job(handle.job_id)


def test_the_event_log_of_a_finished_job_replays_to_the_same_graph(client, tmp_path):
    job = sum_job(str(tmp_path / "out"))
    handle = client.submit(job, config=FAST)
    result = handle.wait(timeout=120)
    assert result.status == "FINISHED", result.cause
    submitted, *events = handle.events()
    assert isinstance(submitted, ev.JobSubmitted) and submitted.name == "sums"
    replayed = replay(new_state(job, submitted, handle.job_id), events)
    live = handle.describe()
    assert replayed.describe()[2] == live[2]  # every subtask: state, attempt, slot
    assert replayed.describe()[-1] == live[-1]  # every decision the adaptive scheduler made
    assert replayed.ended == ("FINISHED", "")
    handle.release()


def test_one_slot_is_enough(client, tmp_path):
    config = {**FAST, MAX_SLOTS.key: 1}
    handle = client.submit(sum_job(str(tmp_path / "out"), sources=3), config=config)
    result = handle.wait(timeout=180)
    assert result.status == "FINISHED", result.cause
    assert result.max_running_tasks == 1
    assert read_sums(tmp_path / "out") == expected_sums(3, 1000)
    handle.release()


def test_eight_slots_run_regions_in_parallel(client, tmp_path):
    config = {**FAST, MAX_SLOTS.key: 8, NUMBER_OF_TASK_SLOTS.key: 4}
    job = sum_job(str(tmp_path / "out"), sources=8, pause=1.0, consumers=2)
    handle = client.submit(job, config=config)
    result = handle.wait(timeout=180)
    assert result.status == "FINISHED", result.cause
    assert result.max_running_tasks >= 4
    handle.release()


def test_a_killed_taskmanager_reruns_only_what_it_held(client, tmp_path):
    config = {**FAST, MAX_SLOTS.key: 6}
    job = sum_job(str(tmp_path / "out"), sources=6, pause=2.0, consumers=2)
    handle = client.submit(job, config=config)
    import ray

    deadline = time.time() + 60
    victim = None
    while victim is None and time.time() < deadline:
        status = handle.status()
        if status.vertices[0].running >= 3:
            victim = ray.get_actor(status.task_managers[0], namespace="tidal")
        time.sleep(0.1)
    assert victim is not None, "the sources never ran"
    os.kill(ray.get(victim.ping.remote()), signal.SIGKILL)
    result = handle.wait(timeout=180)
    assert result.status == "FINISHED", result.cause
    assert read_sums(tmp_path / "out") == expected_sums(6, 1000)
    numbers = result.vertices["numbers"]
    assert 6 < numbers.deployments < 12  # the killed TaskManager's task ran again, not all six
    handle.release()


def failing(table):
    raise ValueError("row 7 is not a number")


def test_a_raising_function_fails_the_job_with_its_traceback(client, tmp_path):
    g = JobGraph("broken")
    src = g.add_vertex(
        "numbers", parallelism=2, operator=arrow(lambda: __import__("pyarrow").table({"x": [1, 2]}))
    )
    bad = g.add_vertex("parse", parallelism=1, operator=arrow(failing))
    g.connect(src, bad, Partitioner.REBALANCE)
    config = {**FAST, FIXED_DELAY_ATTEMPTS.key: 1}
    healthy = client.submit(sum_job(str(tmp_path / "ok"), pause=1.0), config=FAST)
    handle = client.submit(g, config=config)
    result = handle.wait(timeout=120)
    assert result.status == "FAILED"
    assert "ValueError: row 7 is not a number" in result.cause
    assert "test_jobs_on_ray.py" in result.cause and "in failing" in result.cause
    assert result.vertices["parse"].deployments == 2  # one restart, then no more
    cli = subprocess.run(
        [sys.executable, "-m", "jobmanager", "status", handle.job_id],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "ValueError: row 7 is not a number" in cli.stdout + cli.stderr
    assert healthy.wait(timeout=120).status == "FINISHED"  # the other job is untouched
    handle.release()
    healthy.release()


def test_a_missing_input_file_fails_the_job_naming_the_path(client, tmp_path):
    g = JobGraph("missing")
    src = g.add_vertex("orders", sources=[FileSource(str(tmp_path / "no" / "such" / "orders"))])
    sink = g.add_vertex("sink", operator=ParquetSink(str(tmp_path / "out")))
    g.connect(src, sink, Partitioner.FORWARD)
    result = client.submit(g, config=FAST).wait(timeout=120)
    assert result.status == "FAILED"
    assert "'orders -> sink'" in result.cause  # the chained task the source vertex heads
    assert str(tmp_path / "no" / "such" / "orders") in result.cause


def test_submission_errors_name_the_culprit(client, tmp_path):
    import threading

    lock = threading.Lock()
    g = JobGraph("unserialisable")
    g.add_vertex("locked", parallelism=1, operator=arrow(lambda: lock))
    with pytest.raises(JobGraphError, match="vertex 'locked'.*cannot be serialised"):
        client.submit(g)
    with pytest.raises(ConfigurationError, match="'taskmanager.numberOfSlots': unknown option"):
        client.submit(sum_job(str(tmp_path / "x")), config={"taskmanager.numberOfSlots": 2})
    cyclic = JobGraph("cyclic")
    a, b = cyclic.add_vertex("a", 1), cyclic.add_vertex("b", 1)
    cyclic.connect(a, b)
    cyclic.connect(b, a)
    with pytest.raises(CyclicGraphError, match="a -> b -> a|b -> a -> b"):
        client.submit(cyclic)


def test_each_jobs_taskmanager_timeout_and_scratch_directory_take_effect(client, tmp_path):
    """The ResourceManager was started by an earlier job with the default 30 s; this job's
    own 1 s keeps its TaskManagers idle no longer, and its io.tmp.dirs holds their scratch, in
    a folder of this cluster's (another cluster on the machine has TaskManagers of the same
    names), removed when they are stopped."""
    from jobmanager.runtime.names import resource_manager_handle

    scratch = tmp_path / "scratch"
    config = {**FAST, TASKMANAGER_IDLE_TIMEOUT.key: "1 s", TMP_DIRS.key: str(scratch)}
    handle = client.submit(sum_job(str(tmp_path / "out"), sources=1), config=config)
    assert handle.wait(timeout=120).status == "FINISHED"
    ran_on = set(handle.status().task_managers)
    scratches = list((scratch / "tidal" / "taskmanagers").glob("*/tidal-tm-*"))
    assert ran_on and {path.name for path in scratches} == ran_on
    assert len({path.parent for path in scratches}) == 1
    deadline = time.monotonic() + 30
    while True:
        described = ray.get(resource_manager_handle().describe.remote())
        kept = [path for path in scratches if path.exists()]
        if not ran_on & {*described["idle"], *described["leased"]} and not kept:
            break
        assert time.monotonic() < deadline, f"{ran_on} still kept: {described}, {kept}"
        time.sleep(0.2)
    handle.release()


def doubled_but_first_stops_the_jvm(marker: str):
    """A PySpark function whose first attempt makes its TaskManager's Spark JVM exit, as an
    OutOfMemoryError makes Spark's handler do; later attempts double the values."""

    def run(frame):
        if not os.path.exists(marker):
            open(marker, "w").close()
            frame.sparkSession.sparkContext._jvm.java.lang.System.exit(1)
        return frame.selectExpr("key", "value * 2 AS value")

    return run


@pytest.mark.spark
def test_a_taskmanager_whose_spark_jvm_exited_leaves_and_the_job_finishes_elsewhere(
    client, tmp_path
):
    from jobmanager import spark

    g = JobGraph("jvm-lost")
    src = g.add_vertex(
        "numbers",
        parallelism=1,
        operator=arrow(
            lambda: __import__("pyarrow").table({"key": [1, 2, 3], "value": [10, 20, 30]})
        ),
    )
    double = g.add_vertex(
        "double",
        parallelism=1,
        operator=spark(doubled_but_first_stops_the_jvm(str(tmp_path / "m"))),
    )
    sink = g.add_vertex("sink", operator=ParquetSink(str(tmp_path / "out")))
    g.connect(src, double, Partitioner.FORWARD)
    g.connect(double, sink, Partitioner.FORWARD)
    config = {**FAST, OPERATOR_CHAINING.key: False}
    handle = client.submit(g, config=config)
    result = handle.wait(timeout=240)
    assert result.status == "FINISHED", result.cause
    table = pq.read_table(tmp_path / "out")
    assert sorted(table.column("value").to_pylist()) == [20, 40, 60]
    assert result.vertices["double"].deployments >= 2
    events = handle.events()[1:]
    lost = [e for e in events if isinstance(e, ev.TaskManagerLost)]
    assert lost, "the TaskManager with the dead JVM was not lost"
    handle.release()
