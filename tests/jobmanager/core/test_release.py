from jobmanager.core.executiongraph import ExecutionGraph
from jobmanager.core.scheduler.regions import PipelinedRegions
from jobmanager.core.scheduler.release import RegionPartitionGroupReleaseStrategy
from jobmanager.model.jobgraph import JobGraph, Partitioner
from tests.builders import BLOCKING, PIPELINED


def build(job):
    graph = ExecutionGraph(job, dynamic=False)
    release = RegionPartitionGroupReleaseStrategy()
    graph.listeners += [PipelinedRegions(graph), release]
    graph.initialize(list(graph.job_vertices.values()))
    return graph, release


def ids(partitions):
    return sorted(str(p.id) for p in partitions)


def test_a_blocking_group_is_released_when_every_consumer_region_finished():
    g = JobGraph()
    g.connect(g.add_vertex("a", 2), g.add_vertex("b", 3), Partitioner.REBALANCE, BLOCKING)
    graph, release = build(g)
    for v in graph.job_vertex("a").vertices:
        assert release.vertex_finished(v) == []
    assert release.vertex_finished(graph.vertex("b", 0)) == []
    assert release.vertex_finished(graph.vertex("b", 2)) == []
    assert ids(release.vertex_finished(graph.vertex("b", 1))) == ["a->b#0", "a->b#1"]


def test_a_restarted_consumer_keeps_the_group_from_being_released():
    g = JobGraph()
    g.connect(g.add_vertex("a", 1), g.add_vertex("b", 2), Partitioner.REBALANCE, BLOCKING)
    graph, release = build(g)
    release.vertex_finished(graph.vertex("a", 0))
    release.vertex_finished(graph.vertex("b", 0))
    release.vertex_unfinished(graph.vertex("b", 0))
    assert release.vertex_finished(graph.vertex("b", 1)) == []
    assert ids(release.vertex_finished(graph.vertex("b", 0))) == ["a->b#0"]


def test_pipelined_partitions_are_not_the_schedulers_to_release():
    g = JobGraph()
    g.connect(g.add_vertex("a", 1), g.add_vertex("b", 1), Partitioner.FORWARD, PIPELINED)
    graph, release = build(g)
    assert release.vertex_finished(graph.vertex("a", 0)) == []
    assert release.vertex_finished(graph.vertex("b", 0)) == []


def test_pointwise_groups_are_released_one_by_one():
    g = JobGraph()
    g.connect(g.add_vertex("a", 2), g.add_vertex("b", 2), Partitioner.FORWARD, BLOCKING)
    graph, release = build(g)
    release.vertex_finished(graph.vertex("a", 0))
    release.vertex_finished(graph.vertex("a", 1))
    assert ids(release.vertex_finished(graph.vertex("b", 1))) == ["a->b#1"]
