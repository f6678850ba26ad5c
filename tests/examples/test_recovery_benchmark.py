"""Tiny runs of ``benchmarks/recovery.py``: a JobManager killed in the JobGraph Q3, each
process killed in a dbgen query and at random, and how its targets are figured."""

from __future__ import annotations

import json

import pytest

from tests.examples.test_benchmarks import ONE_TASKMANAGER, _last_line_json, load, tpch_dbgen

__all__ = ["tpch_dbgen"]  # the fixture, shared with test_benchmarks.py


@pytest.mark.runtime
@pytest.mark.spark
def test_recovery_benchmark_kills_a_jobmanager_and_loses_no_finished_task_at_a_tiny_size(
    tiny_data, ray_cluster, capsys
):
    summary = load("recovery").main(
        [
            "--scale",
            "0.002",
            "--data",
            str(tiny_data),
            "--warmups",
            "0",
            "--repeats",
            "1",
            "--no-baseline",
            "--queries",
            *ONE_TASKMANAGER,
        ]
    )
    assert _last_line_json(capsys) == summary
    assert summary["same_result"] is True
    assert summary["finished_tasks_rerun"] == 0
    assert 0 < summary["recovery_seconds"] < summary["crashed_seconds"]
    assert summary["ratio"] > 0 and summary["baseline_ratio"] is None
    assert "queries" not in summary and "chaos" not in summary  # ``--queries`` of none


@pytest.mark.runtime
@pytest.mark.spark
def test_recovery_benchmark_kills_each_process_in_a_dbgen_query_and_at_random_at_a_tiny_size(
    tpch_dbgen, ray_cluster, capsys
):
    """The dbgen half alone: q6 (one scan and its aggregate, the shortest) uninterrupted, with
    its TaskManager killed and with its JobManager killed, then one chaos run; every answer
    DuckDB's. Whether each kill landed depends on the run's speed, so only the kills that did
    are figured; the figures' shape is checked, not the runtime's costs."""
    summary = load("recovery").main(
        [
            "--scale",
            "0.01",
            "--dbgen-data",
            str(tpch_dbgen),
            "--skip-graph",
            "--warmups",
            "1",
            "--repeats",
            "1",
            "--queries",
            "6",
            "--chaos",
            "1",
            "--seed",
            "3",
            *ONE_TASKMANAGER,
        ]
    )
    out = capsys.readouterr().out
    assert json.loads(out.strip().splitlines()[-1]) == summary
    assert summary["same_result"] is True and summary["ratio"] is None
    q06 = summary["queries"]["q06"]
    assert q06["same_result"] is True and q06["uninterrupted_seconds"] > 0
    for short in ("tm", "jm"):
        assert q06[f"{short}_kills_landed"] in ("0 of 1", "1 of 1")
        if q06[f"{short}_kills_landed"] == "1 of 1":
            assert q06[f"{short}_killed_seconds"] > q06[f"{short}_killed_at_seconds"] > 0
            assert q06[f"{short}_finished_tasks_rerun"] >= 0
    assert summary["chaos"] == {
        "runs": 1,
        "right": 1,
        "landed": summary["chaos"]["landed"],
        "seed": 3,
    }
    assert "q06: uninterrupted" in out and "chaos: 1 of 1 answers right" in out


def test_recovery_targets_are_a_taskmanagers_running_tasks_plus_slack_and_a_second():
    """Costs are medians of the kills that landed, killed minus uninterrupted; a TaskManager's
    kill is within its target only with no finished task rerun."""
    from benchmarks.kills import JOB_MANAGER, TASK_MANAGER
    from benchmarks.recovery_queries import summarize

    def run(seconds, landed=True, rerun=0, running=0.0):
        return {
            "seconds": seconds,
            "landed": landed,
            "killed_at_seconds": 1.0,
            "finished_tasks_rerun": rerun,
            "killed_tasks_seconds": running,
            "seen_after_seconds": 0.5,
            "running_after_seconds": None,
        }

    figures = summarize(
        {
            None: [{"seconds": 2.0}, {"seconds": 4.0}, {"seconds": 3.0}],
            TASK_MANAGER: [run(6.0, running=2.0), run(99.0, landed=False)],
            JOB_MANAGER: [run(3.9), run(4.2)],
        }
    )
    assert figures["uninterrupted_seconds"] == 3.0 and figures["tm_cost_seconds"] == 3.0
    assert figures["killed_tasks_seconds"] == 2.0 and figures["tm_within_target"] is True
    assert figures["tm_kills_landed"] == "1 of 2" and figures["same_result"] is True
    assert figures["tm_seen_after_seconds"] == 0.5 and figures["tm_running_after_seconds"] is None
    assert (
        figures["jm_cost_seconds"] == pytest.approx(1.05) and figures["jm_within_target"] is False
    )
    rerun = summarize(
        {None: [{"seconds": 1.0}], TASK_MANAGER: [run(1.5, rerun=1)], JOB_MANAGER: []}
    )
    assert rerun["tm_within_target"] is False and rerun["tm_finished_tasks_rerun"] == 1
    assert rerun["jm_killed_seconds"] is None and rerun["jm_within_target"] is False
