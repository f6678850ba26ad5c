from jobmanager.core.executiongraph import ExecutionGraph, ExecutionState, TopologyUpdate
from jobmanager.core.scheduler.regions import PipelinedRegions
from jobmanager.core.scheduler.strategy import (
    PipelinedRegionSchedulingStrategy,
    VertexwiseSchedulingStrategy,
)
from jobmanager.model.jobgraph import JobGraph, Partitioner
from tests.builders import BLOCKING, PIPELINED, RecordingOperations, TopologyBuilder, finish


def region_strategy(builder):
    ops = RecordingOperations()
    graph, regions = builder.build()
    strategy = PipelinedRegionSchedulingStrategy(ops, regions)
    strategy.on_topology_updated(
        TopologyUpdate(graph, list(graph.job_vertices.values()), list(graph.vertices()))
    )
    return graph, strategy, ops


def test_sources_start_and_consumers_wait_for_every_blocking_input():
    b = TopologyBuilder()
    b.connect_all_to_all(b.add_vertices(2), b.add_vertices(2), BLOCKING)
    graph, strategy, ops = region_strategy(b)
    strategy.start_scheduling()
    assert ops.bulks == [["v0[0]"], ["v0[1]"]]
    ops.clear()
    finish(graph.vertex("v0", 0))
    strategy.on_vertex_finished(graph.vertex("v0", 0))
    assert ops.bulks == []  # half the group is not enough
    finish(graph.vertex("v0", 1))
    strategy.on_vertex_finished(graph.vertex("v0", 1))
    assert ops.bulks == [["v1[0]"], ["v1[1]"]]


def test_a_pipelined_region_is_deployed_as_one_bulk():
    b = TopologyBuilder()
    src, mid = b.add_vertices(2), b.add_vertices(2)
    b.connect_pointwise(src, mid, PIPELINED)
    b.connect_all_to_all(mid, b.add_vertices(1), BLOCKING)
    graph, strategy, ops = region_strategy(b)
    strategy.start_scheduling()
    assert ops.bulks == [["v0[0]", "v1[0]"], ["v0[1]", "v1[1]"]]


def test_regions_are_scheduled_in_topological_order():
    b = TopologyBuilder()
    a, c = b.add_vertices(1), b.add_vertices(1)
    d = b.add_vertices(1)
    b.connect_all_to_all(a, d)
    b.connect_all_to_all(c, d)
    graph, strategy, ops = region_strategy(b)
    strategy.start_scheduling()
    assert ops.deployed == ["v0[0]", "v1[0]"]


def test_a_vertex_with_two_inputs_waits_for_both():
    b = TopologyBuilder()
    a, c, d = b.add_vertices(1), b.add_vertices(1), b.add_vertices(1)
    b.connect_all_to_all(a, d)
    b.connect_all_to_all(c, d)
    graph, strategy, ops = region_strategy(b)
    strategy.start_scheduling()
    ops.clear()
    finish(graph.vertex("v0", 0))
    strategy.on_vertex_finished(graph.vertex("v0", 0))
    assert ops.deployed == []
    finish(graph.vertex("v1", 0))
    strategy.on_vertex_finished(graph.vertex("v1", 0))
    assert ops.deployed == ["v2[0]"]


def test_restarted_regions_are_scheduled_again_when_their_inputs_are_ready():
    b = TopologyBuilder()
    b.connect_all_to_all(b.add_vertices(1), b.add_vertices(2))
    graph, strategy, ops = region_strategy(b)
    strategy.start_scheduling()
    finish(graph.vertex("v0", 0))
    strategy.on_vertex_finished(graph.vertex("v0", 0))
    ops.clear()
    consumer = graph.vertex("v1", 1)
    consumer.state = ExecutionState.CREATED
    strategy.restart_tasks([consumer])
    assert ops.deployed == ["v1[1]"]


def test_finishing_a_producer_of_a_huge_all_to_all_only_checks_consumers_once():
    b = TopologyBuilder()
    b.connect_all_to_all(b.add_vertices(300), b.add_vertices(300))
    graph, strategy, ops = region_strategy(b)
    strategy.start_scheduling()
    ops.clear()
    checked = []
    original = strategy._inputs_consumable
    strategy._inputs_consumable = lambda r, c: checked.append(r.id) or original(r, c)
    for v in graph.job_vertex("v0").vertices:
        finish(v)
        strategy.on_vertex_finished(v)
    assert len(checked) == 300  # only when the group completes, not 300 x 300
    assert len(ops.deployed) == 300


def vertexwise(builder_job, dynamic=True):
    graph = ExecutionGraph(builder_job, dynamic=dynamic)
    regions = PipelinedRegions(graph)
    ops = RecordingOperations()
    strategy = VertexwiseSchedulingStrategy(ops)
    graph.listeners += [regions, strategy]
    return graph, strategy, ops


def test_vertexwise_schedules_consumers_added_after_their_producers_finished():
    g = JobGraph()
    src, agg = g.add_vertex("src", 2), g.add_vertex("agg")
    g.connect(src, agg, Partitioner.hash("k"))
    graph, strategy, ops = vertexwise(g)
    graph.initialize([graph.job_vertex("src")])
    strategy.start_scheduling()
    assert ops.deployed == ["src[0]", "src[1]"]
    for v in graph.job_vertex("src").vertices:
        finish(v)
        strategy.on_vertex_finished(v)
    ops.clear()
    graph.job_vertex("agg").parallelism = 3
    graph.initialize([graph.job_vertex("agg")])  # added after every producer finished
    strategy.schedule_newly_added()
    assert ops.deployed == ["agg[0]", "agg[1]", "agg[2]"]


def test_vertexwise_waits_for_the_whole_group():
    g = JobGraph()
    src, agg = g.add_vertex("src", 2), g.add_vertex("agg", 1)
    g.connect(src, agg, Partitioner.hash("k"))
    graph, strategy, ops = vertexwise(g)
    graph.initialize(list(graph.job_vertices.values()))
    strategy.start_scheduling()
    ops.clear()
    finish(graph.vertex("src", 1))
    strategy.on_vertex_finished(graph.vertex("src", 1))
    assert ops.deployed == []
    finish(graph.vertex("src", 0))
    strategy.on_vertex_finished(graph.vertex("src", 0))
    assert ops.deployed == ["agg[0]"]
    assert all(len(bulk) == 1 for bulk in ops.bulks)


def test_vertexwise_deploys_the_subtasks_of_a_pass_largest_first():
    """Three sources on fewer slots: the one known to read the most asks for a slot first,
    the small ones fill in beside it; subtasks of unknown size follow in graph order."""
    g = JobGraph()
    for name, parallelism in (("customer", 1), ("orders", 1), ("lineitem", 2), ("nation", 1)):
        g.add_vertex(name, parallelism)
    graph, strategy, ops = vertexwise(g)
    ops.sizes.update(customer=1 << 20, orders=14 << 20, lineitem=31 << 20)
    graph.initialize(list(graph.job_vertices.values()))
    strategy.start_scheduling()
    assert ops.deployed == ["lineitem[0]", "lineitem[1]", "orders[0]", "customer[0]", "nation[0]"]
