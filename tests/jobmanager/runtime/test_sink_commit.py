"""A finished job's sinks commit on a worker thread, not on the JobManager's main loop, and the
outcome comes back as a JobEnded event. No Ray: the executor is built without its cluster."""

import threading
from concurrent.futures import ThreadPoolExecutor

from jobmanager.core import commands as cmd
from jobmanager.messages import events as ev
from jobmanager.model.operators import ParquetSink
from jobmanager.runtime import executor as executor_module
from jobmanager.runtime.executor import HANDLERS, CommandExecutor


class OneSinkView:
    def __init__(self, sink: ParquetSink) -> None:
        self.sink = sink

    def final_attempts(self):
        return [("numbers", object(), {0: 0}), ("out", self.sink, {0: 2, 1: 0})]


def executor_without_ray(view, events: list) -> CommandExecutor:
    executor = CommandExecutor.__new__(CommandExecutor)
    executor.job_id, executor.view, executor.enqueue = "job", view, events.append
    executor._staged, executor._work = {}, ThreadPoolExecutor(1, thread_name_prefix="test-work")
    return executor


def test_the_commit_runs_off_the_loop_and_its_outcome_comes_back_as_jobended(monkeypatch, tmp_path):
    sink = ParquetSink(str(tmp_path / "out"))
    release, committed = threading.Event(), []

    def commit(target, job_id, finals):
        release.wait(10)  # the loop would be stuck here if the commit ran on it
        committed.append((target, job_id, finals, threading.current_thread().name))

    monkeypatch.setattr(executor_module.sinks, "commit", commit)
    events: list = []
    executor = executor_without_ray(OneSinkView(sink), events)
    HANDLERS[cmd.JobTerminated](executor, cmd.JobTerminated("FINISHED", ""))
    assert events == [] and committed == []  # the handler returned with the commit under way
    release.set()
    executor._work.shutdown(wait=True)
    (target, job_id, finals, thread) = committed[0]
    assert (target, job_id, finals) == (sink, "job", {0: 2, 1: 0}) and thread.startswith(
        "test-work"
    )
    assert events == [ev.JobEnded("FINISHED", "")]


def test_a_commit_that_fails_ends_the_job_failed_and_drops_the_staging(monkeypatch, tmp_path):
    sink = ParquetSink(str(tmp_path / "out"))
    aborted = []

    def commit(target, job_id, finals):
        raise OSError("disk full")

    monkeypatch.setattr(executor_module.sinks, "commit", commit)
    monkeypatch.setattr(executor_module.sinks, "abort", lambda s, j: aborted.append(s))
    events: list = []
    executor = executor_without_ray(OneSinkView(sink), events)
    HANDLERS[cmd.JobTerminated](executor, cmd.JobTerminated("FINISHED", ""))
    executor._work.shutdown(wait=True)
    assert aborted == [sink]
    assert events == [ev.JobEnded("FAILED", "committing the output of 'out' failed: disk full")]
