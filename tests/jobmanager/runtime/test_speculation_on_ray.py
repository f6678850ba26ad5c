"""Speculative execution on a real local Ray cluster: one task of a stage of 8 is ten times
slower in the TaskManager that ran it first (``benchmarks/speculation.py``'s injected sleep,
which here lasts until the second attempt has run, so no busy machine makes it race the
slow-task detector);
with speculation on, a second attempt on another TaskManager wins, the slow one is cancelled
and leaves no file behind, and the sink holds every row once."""

from __future__ import annotations

import glob
import os
import time

import pyarrow.parquet as pq
import pytest

from jobmanager import Client
from jobmanager.client.report import find_job, job_facts
from jobmanager.runtime.actor import work_directory
from jobmanager.model.config import Configuration
from tests.examples.test_benchmarks import load
from tests.jobmanager.runtime.test_failover_on_ray import eventually

pytestmark = pytest.mark.runtime

TASK_SECONDS = 0.3


def test_the_speculative_attempt_wins_and_the_slow_one_is_cancelled(ray_cluster, tmp_path):
    bench = load("speculation")
    expected = bench.write_parts(str(tmp_path / "data")).sort_by("value")
    marker = str(tmp_path / "slow-task-manager")
    graph = bench.straggler_job(
        str(tmp_path / "data"), str(tmp_path / "out"), TASK_SECONDS, marker, outlast=True
    )
    config = {**bench.SLOTS, **bench.SPECULATION}
    handle = Client().submit(graph, config=config)
    result = handle.wait(timeout=120)
    assert result.status == "FINISHED", result.cause

    assert pq.read_table(str(tmp_path / "out")).sort_by("value").equals(expected)  # each row once
    parts = [n for n in os.listdir(tmp_path / "out") if n.endswith(".parquet")]
    assert len(parts) == bench.TASKS
    stage = result.vertices["stage"]
    assert (stage.tasks, stage.deployments) == (bench.TASKS, bench.TASKS + 1)

    facts = job_facts(find_job(handle.job_id), handle.job_id)
    speculative = [a for a in facts.attempts if a.vertex == "stage -> sink" and a.attempt == 1]
    assert len(speculative) == 1 and speculative[0].outcome == "finished"  # it won
    slow = next(
        a
        for a in facts.attempts
        if (a.vertex, a.subtask, a.attempt) == ("stage -> sink", speculative[0].subtask, 0)
    )
    assert slow.outcome != "finished" and slow.task_manager != speculative[0].task_manager
    # the job did not wait for the slow attempt: it ended with the speculative one's finish
    # and before any end of the slow one (cancelled, it reports only once its sleep is over)
    assert speculative[0].ended_ms <= facts.ended_ms
    assert slow.ended_ms is None or facts.ended_ms <= slow.ended_ms, (slow, facts.ended_ms)
    assert "speculative attempt won" in handle.logs()["jobmanager"].decode()

    # once the slow attempt's sleep is over it notices its cancellation: nothing of it remains
    eventually(
        lambda: os.path.exists(f"{marker}.woke"),
        "the slow attempt to wake",
        bench.OUTLAST_DEADLINE_S + 30,
    )
    time.sleep(1)  # the woken attempt's last steps: its output is discarded, not written
    work = work_directory(Configuration(), handle.job_id)
    leftovers = glob.glob(
        os.path.join(work, "**", f"{slow.subtask}-0.tpf"), recursive=True
    ) + glob.glob(str(tmp_path / "**" / f"part-{slow.subtask}-0*"), recursive=True)
    assert not leftovers
    handle.release()
