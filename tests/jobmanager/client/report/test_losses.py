"""A TaskManager lost mid-job in the report and ``tidal explain``: the timeline's marker names
its node and the whole partition files surveyed there, and the job's summary and explanation
say what the loss cost (running tasks and finished tasks run again, finished outputs kept) and
whether the job recovered; built from a hand-written log replayed as ``tidal report`` does."""

from __future__ import annotations

from jobmanager.client.report import explain_lines, facts_from_log, report_html
from jobmanager.core import commands as cmd
from jobmanager.core.state import JobManagerState
from jobmanager.messages import events as ev
from jobmanager.model.config import (
    Configuration,
)
from jobmanager.model.jobgraph import JobGraph, Partitioner
from tests.builders import BLOCKING
from tests.jobmanager.core.test_task_manager_loss import CONFIG, file_on_disk, produced

START_MS = 1_700_000_000_000
NODE = "4f2a9c1d0e7b" + "0" * 44
RESULT = "v0->v1"


def lost_then_recovered(through_rerun: bool):
    """v0's two tasks finish on tm-a, v1 runs there when tm-a is killed; both of v0's files
    are whole on its node, so only v1 runs again, on tm-b. The events are those a real core
    answered (its restart timer fired, its end logged), so the replay takes each of them."""
    g = JobGraph("loss")
    v0, v1 = g.add_vertex("v0", 2), g.add_vertex("v1", 1)
    g.connect(v0, v1, Partitioner.REBALANCE, BLOCKING)
    state = JobManagerState(g, Configuration(CONFIG), job_id="j")
    events: list = []

    def feed(*fed):
        commands = []
        for event in fed:
            events.append(event)
            commands += state.handle(event).commands
        return commands

    feed(ev.JobStarted(), ev.TaskManagerRegistered("tm-a", 1, NODE, "/shuffle/tm-a"))
    for k in (0, 1):
        feed(ev.TaskRunning("v0", k, 0), ev.TaskFinished("v0", k, 0, produced(k)))
    feed(ev.TaskRunning("v1", 0, 0), ev.TaskManagerRegistered("tm-b", 1, NODE, "/shuffle/tm-b"))
    kept = (file_on_disk(0), file_on_disk(1))
    commands = feed(ev.TaskManagerLost("tm-a", "process killed", START_MS + 100, NODE, kept))
    if through_rerun:
        (timer,) = [c for c in commands if isinstance(c, cmd.StartTimer)]
        feed(ev.TimerFired(timer.token), ev.TaskRunning("v1", 0, 1))
        commands = feed(ev.TaskFinished("v1", 0, 1, ()))
        (ended,) = [c for c in commands if isinstance(c, cmd.JobTerminated)]
        feed(ev.JobEnded(ended.status, ended.cause))
    records = [(START_MS + 10 * (i + 1), e) for i, e in enumerate(events)]
    submitted = ev.JobSubmitted(
        g.name, "graph-key", tuple(Configuration(CONFIG).to_dict().items()), START_MS / 1000, 8, ()
    )
    return facts_from_log(g, submitted, records, "j")


def test_the_timeline_marks_the_loss_with_its_node_and_the_files_surveyed_there():
    facts = lost_then_recovered(through_rerun=True)
    (marker,) = [m for m in facts.markers if m.kind == "lost"]
    assert marker.text == (
        "TaskManager tm-a lost on node 4f2a9c1d…: process killed; "
        "2 whole partition files surveyed there"
    )


def test_explain_and_the_report_say_what_the_loss_cost_and_whether_it_recovered():
    running = lost_then_recovered(through_rerun=False)
    (loss,) = running.losses
    assert (loss.task_manager, loss.running, loss.rerun, loss.kept) == ("tm-a", 1, 0, 2)
    assert not loss.recovered
    assert explain_lines(running)[1:4] == [
        "",
        "TaskManagers lost:",
        "  tm-a on node 4f2a9c1d…: its 1 running task runs again, 2 finished outputs kept on "
        "its node, 0 finished tasks run again (outputs lost with it); not recovered yet",
    ]
    ended = lost_then_recovered(through_rerun=True)
    assert ended.status == "FINISHED" and ended.losses[0].recovered
    assert explain_lines(ended)[3].endswith("(outputs lost with it); recovered")
    assert (
        "<tr><td>TaskManager lost</td><td>tm-a on node 4f2a9c1d…: its 1 running task runs "
        "again, 2 finished outputs kept on its node, 0 finished tasks run again (outputs lost "
        "with it); recovered</td></tr>"
    ) in report_html(ended)
