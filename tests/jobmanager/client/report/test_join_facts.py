"""What the report says of a join the JobManager turned into a broadcast join at run time:
the side read whole is not part of any task's share, the other side's whole producer outputs
are no skew cut, and a join whose parallelism the user set is the user's."""

from jobmanager.client.report import facts_from_log
from jobmanager.model.config import AVG_DATA_VOLUME_PER_TASK
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.model.joins import JoinInput
from tests.jobmanager.client.report.recorded import record
from tests.jobmanager.core.adaptive.test_runtime_joins import MiB, sized


def join_facts(join_parallelism=None):
    g = JobGraph("join")
    big, small = g.add_vertex("big", 4), g.add_vertex("small", 2)
    join, sink = g.add_vertex("join", join_parallelism), g.add_vertex("sink")
    g.connect(big, join, Partitioner.hash("k"), join=JoinInput("j1", "inner", "left", True))
    g.connect(small, join, Partitioner.hash("k"), join=JoinInput("j1", "inner", "right", True))
    g.connect(join, sink, Partitioner.FORWARD)
    config = {AVG_DATA_VOLUME_PER_TASK.key: "16 mb"}
    submitted, records, run = record(g, config, byte_model=sized({"big": 16 * MiB, "small": MiB}))
    return facts_from_log(g, submitted, records, "job-1"), run


def test_the_side_broadcast_at_run_time_is_in_no_tasks_share_and_the_other_is_not_cut():
    facts, run = join_facts()
    join = facts.vertex("join")
    assert (join.parallelism, join.origin) == (4, "decided")
    assert join.broadcast_bytes == 2 * MiB and "broadcast" in join.explanation
    assert join.task_bytes == (16 * MiB, 16 * MiB)  # one big producer's output each, no small side
    big = facts.result("big", "join")
    assert big.splits == () and big.consumer_ranges == ()


def test_a_join_whose_parallelism_the_user_set_is_the_users_though_its_join_was_decided():
    facts, _ = join_facts(join_parallelism=3)
    assert facts.vertex("join").origin == "user"
