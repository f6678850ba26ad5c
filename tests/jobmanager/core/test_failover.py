from jobmanager.core.executiongraph import ExecutionState, PartitionState
from jobmanager.core.scheduler.failover import RestartPipelinedRegionFailoverStrategy
from tests.builders import BLOCKING, PIPELINED, TopologyBuilder, finish


def labels(vertices):
    return [v.label for v in vertices]


def restart(graph, name, subtask):
    return labels(
        RestartPipelinedRegionFailoverStrategy().tasks_to_restart([graph.vertex(name, subtask)])
    )


def three_stage(result=BLOCKING):
    b = TopologyBuilder()
    a, m, s = b.add_vertices(2), b.add_vertices(2), b.add_vertices(2)
    b.connect_pointwise(a, m, result)
    b.connect_all_to_all(m, s, BLOCKING)
    graph, _ = b.build()
    return graph


def test_a_failed_consumer_restarts_only_its_region_when_inputs_are_available():
    graph = three_stage()
    for v in graph.vertices():
        if v.name in ("v0", "v1"):
            finish(v)
    assert restart(graph, "v2", 1) == ["v2[1]"]


def test_downstream_regions_restart_too():
    graph = three_stage()
    finish(graph.vertex("v0", 0))
    finish(graph.vertex("v0", 1))
    graph.vertex("v1", 1).state = ExecutionState.RUNNING
    # v1[0] fails: its region, and every consumer of what it produces (v2 reads all of v1)
    assert restart(graph, "v1", 0) == ["v1[0]", "v2[0]", "v2[1]"]


def test_producers_not_yet_deployed_are_restarted_with_their_consumers():
    # as in Flink, a partition whose producer was never deployed is not tracked, so not
    # available: its (idle) region joins the restart and is rescheduled with the others
    graph = three_stage()
    finish(graph.vertex("v0", 0))
    finish(graph.vertex("v0", 1))
    assert restart(graph, "v1", 0) == ["v1[0]", "v1[1]", "v2[0]", "v2[1]"]


def test_a_lost_input_partition_reruns_its_producer_region():
    graph = three_stage()
    for v in graph.vertices():
        if v.name in ("v0", "v1"):
            finish(v)
    graph.vertex("v1", 0).produced[0].state = PartitionState.LOST
    # the producer region reruns, and with it everything downstream of it
    assert restart(graph, "v2", 1) == ["v1[0]", "v2[0]", "v2[1]"]


def test_a_released_input_partition_also_needs_its_producer():
    graph = three_stage()
    for v in graph.vertices():
        if v.name in ("v0", "v1"):
            finish(v)
    graph.vertex("v0", 1).produced[0].state = PartitionState.RELEASED
    assert restart(graph, "v1", 1) == ["v0[1]", "v1[1]", "v2[0]", "v2[1]"]


def test_partitions_of_running_producers_count_as_available():
    graph = three_stage()
    finish(graph.vertex("v0", 0))
    graph.vertex("v0", 1).state = ExecutionState.RUNNING
    graph.vertex("v1", 1).state = ExecutionState.DEPLOYING
    assert restart(graph, "v1", 0) == ["v1[0]", "v2[0]", "v2[1]"]


def test_pipelined_inputs_are_never_reconsumable():
    graph = three_stage(PIPELINED)  # regions {v0[i], v1[i]}
    for v in graph.vertices():
        if v.name in ("v0", "v1"):
            v.state = ExecutionState.RUNNING
    assert restart(graph, "v1", 1) == ["v0[1]", "v1[1]", "v2[0]", "v2[1]"]


def test_failover_over_a_wide_all_to_all_visits_each_group_once():
    b = TopologyBuilder()
    b.connect_all_to_all(b.add_vertices(2000), b.add_vertices(2000))
    graph, _ = b.build()
    for v in graph.job_vertex("v0").vertices:
        finish(v)
    graph.vertex("v0", 7).produced[0].state = PartitionState.LOST
    regions = RestartPipelinedRegionFailoverStrategy().regions_to_restart(
        [graph.vertex("v1", 3).region]
    )
    assert len(regions) == 2001  # v0[7] and all 2000 consumers, found in O(n)
