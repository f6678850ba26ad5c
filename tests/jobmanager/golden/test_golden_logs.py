"""Every golden event log (``logs/<version>/``, each written by the Tidal of that log format,
see ``make.py``) still replays, reports and recovers: a Tidal that changed its event format
without reading the old one fails here, not in a user's ``tidal report`` of an archived job.

Each log is of a real job on Ray: a task failed and restarted, a parallelism decided at run
time, a JobManager killed and taken over. What the live run said is in ``expected.json``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jobmanager.client.report.explain import explain_lines
from jobmanager.client.report.page import report_html
from jobmanager.client.report.stores import job_facts
from jobmanager.core.replay import new_state, replay
from jobmanager.messages import events as ev
from jobmanager.runtime.eventlog import FORMAT_VERSION, read_log, segments
from jobmanager.runtime.jobstore import JobStore
from jobmanager.runtime.recovery import replay_store

LOGS = Path(__file__).resolve().parent / "logs"
VERSIONS = sorted(p.name for p in LOGS.iterdir() if (p / "events").is_dir())


def test_there_is_a_golden_log_of_every_format_version():
    assert VERSIONS == [f"v{n}" for n in range(FORMAT_VERSION + 1)]


@pytest.fixture(params=VERSIONS)
def golden(request, tmp_path):
    """A copy of the golden store (a reader may repair a store: never the kept one), and what
    its live run said."""
    source = LOGS / request.param
    expected = json.loads((source / "expected.json").read_text())
    shutil.copytree(source, tmp_path / expected["job_id"])
    return JobStore(str(tmp_path), expected["job_id"]), expected


def successor_segment(store: JobStore) -> int:
    """The first segment the JobManager that took the job over wrote: it begins with its
    ``JobManagerRecovered``."""
    for number in segments(store.fs, f"{store.path}/events"):
        first = next(read_log(store.events_url, number), None)
        if first is not None and isinstance(first[1], ev.JobManagerRecovered):
            return number
    raise AssertionError("the golden log holds no take-over")


def vertex_counts(state) -> dict[str, tuple[int, int]]:
    """Each vertex (by the first name of its chain): its parallelism and finished tasks."""
    return {
        name.split(" -> ")[0]: (ejv.parallelism, len(ejv.vertices) - ejv.unfinished)
        for name, ejv in state.graph.job_vertices.items()
    }


def test_a_golden_log_replays_to_what_its_live_run_said(golden):
    store, expected = golden
    replayed = replay_store(store, expected["job_id"])
    assert replayed.from_snapshot == (Path(store.path) / "snapshots").is_dir()
    state = replayed.state
    assert state.ended == (expected["status"], "")
    assert state.recoveries == expected["recoveries"]
    tasks = {name: v["tasks"] for name, v in expected["vertices"].items()}
    counts = vertex_counts(state)  # the sink is chained to the sum
    assert counts == {name: (tasks[name], tasks[name]) for name in counts}
    # the whole log, from its start and not a snapshot, rebuilds the same state
    records = store.records(0)
    whole = replay(
        new_state(replayed.graph, records[0][1], expected["job_id"]),
        (event for _, event in records[1:]),
    )
    assert whole.describe() == state.describe()


def test_a_golden_log_renders_its_report(golden):
    store, expected = golden
    facts = job_facts(store, expected["job_id"])
    assert facts.status == expected["status"] and facts.recoveries == expected["recoveries"]
    for vertex in facts.vertices:
        live = expected["vertices"][vertex.name.split(" -> ")[0]]
        assert (vertex.tasks, vertex.finished, vertex.deployments) == (
            live["tasks"],
            live["tasks"],
            live["deployments"],
        ), vertex.name
    assert facts.vertex("flaky").deployments == facts.vertex("flaky").tasks + 1  # the restart
    assert facts.vertex("sum -> sink").origin == "decided"
    assert "golden" in report_html(facts)
    assert any("sum" in line for line in explain_lines(facts))


def test_a_jobmanager_takes_over_from_a_golden_log_cut_where_its_jobmanager_died(golden):
    """What the successor read: the first JobManager's segments. Replayed, the job is mid-way
    (the decided stage deployed, nothing of it finished); the successor's events then bring it
    to the same end as the whole log."""
    store, expected = golden
    cut = successor_segment(store)
    events = Path(store.path) / "events"
    later = [events / name for name in sorted(p.name for p in events.iterdir())][cut:]
    held = {path: path.read_bytes() for path in later}
    for path in later:
        path.unlink()
    shutil.rmtree(Path(store.path) / "snapshots", ignore_errors=True)  # the successor's
    taken = replay_store(store, expected["job_id"])
    state = taken.state
    assert state.ended is None and state.recoveries == expected["recoveries"] - 1
    counts = vertex_counts(state)
    assert counts["numbers"] == counts["flaky"] == (3, 3)
    assert counts["sum"] == (1, 0)
    assert taken.ledger.deployments["flaky"] == expected["vertices"]["flaky"]["deployments"]
    for path, data in held.items():
        path.write_bytes(data)
    replay(state, (event for _, event in read_log(store.events_url, cut)))
    assert state.ended == (expected["status"], "")
    assert state.describe() == replay_store(store, expected["job_id"]).state.describe()


@pytest.mark.parametrize("version", [v for v in VERSIONS if v != f"v{FORMAT_VERSION}"])
def test_a_jobmanager_of_today_takes_over_an_older_tidals_log(version, tmp_path):
    """An upgrade between a JobManager's death and its take-over: the old Tidal's segments,
    then today's writer appends what the successor did in today's format; the log reads as
    one, to the same end."""
    expected = json.loads((LOGS / version / "expected.json").read_text())
    shutil.copytree(LOGS / version, tmp_path / expected["job_id"])
    store = JobStore(str(tmp_path), expected["job_id"])
    whole = replay_store(store, expected["job_id"]).state.describe()
    cut = successor_segment(store)
    successors = list(read_log(store.events_url, cut))
    for path in sorted((Path(store.path) / "events").iterdir())[cut:]:
        path.unlink()
    shutil.rmtree(Path(store.path) / "snapshots", ignore_errors=True)
    log = store.open_log(1 << 20)
    for time_ms, event in successors:
        log.append(event, time_ms)
    log.close()
    assert replay_store(store, expected["job_id"]).state.describe() == whole
