import pytest

from jobmanager.core.state import JobManagerState
from jobmanager.messages import events as ev
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.runtime.eventlog import EventLog, EventLogCorrupted, read_events
from jobmanager.simulation.cluster import SimulatedRun, SimulatedTaskManagers


def job():
    g = JobGraph("logged")
    g.connect(g.add_vertex("a", 3), g.add_vertex("b"), Partitioner.hash("k"))
    return g


@pytest.mark.parametrize("scheme", ["file", "memory"])
def test_a_finished_jobs_log_replays_into_the_same_state(tmp_path, scheme):
    url = str(tmp_path / "job" / "events.log") if scheme == "file" else "memory://tidal/events.log"
    log = EventLog(url, flush_bytes=256)
    state = JobManagerState(job(), job_id="logged")
    original = state.handle

    def logged(event):
        log.append(event)
        return original(event)

    state.handle = logged
    run = SimulatedRun(state, SimulatedTaskManagers(state.graph))
    assert run.run().status == "FINISHED"
    log.flush()
    replayed = JobManagerState(job(), job_id="logged")
    for event in read_events(url):
        replayed.handle(event)
    assert replayed.snapshot() == state.snapshot()
    assert replayed.graph.job_vertex("b").parallelism == state.graph.job_vertex("b").parallelism
    assert log.appended == sum(1 for _ in read_events(url))


def test_a_torn_tail_is_ignored_and_a_broken_middle_is_an_error(tmp_path):
    path = tmp_path / "events.log"
    log = EventLog(str(path))
    for token in range(3):
        log.append(ev.TimerFired(token))
    log.flush()
    whole = path.read_bytes()
    path.write_bytes(whole[:-3])
    assert [e.token for e in read_events(str(path))] == [0, 1]
    broken = bytearray(whole)
    broken[10] ^= 0xFF
    path.write_bytes(bytes(broken))
    with pytest.raises(EventLogCorrupted, match="record 0"):
        list(read_events(str(path)))
