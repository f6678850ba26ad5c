import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobmanager.core.executiongraph import ExecutionGraph
from jobmanager.core.scheduler.regions import (
    PipelinedRegions,
    compute_logical_regions,
    strongly_connected_components,
)
from jobmanager.errors import JobGraphError
from jobmanager.model.jobgraph import JobGraph, Partitioner
from tests.builders import BLOCKING, PIPELINED, TopologyBuilder


def region_labels(regions):
    return sorted(sorted(v.label for v in r.vertices) for r in regions)


def test_blocking_all_to_all_gives_one_region_per_subtask():
    b = TopologyBuilder()
    b.connect_all_to_all(b.add_vertices(3), b.add_vertices(2), BLOCKING)
    _, regions = b.build()
    assert len(regions) == 5
    assert all(len(r) == 1 for r in regions)


def test_pipelined_all_to_all_is_one_region():
    b = TopologyBuilder()
    b.connect_all_to_all(b.add_vertices(3), b.add_vertices(2), PIPELINED)
    _, regions = b.build()
    assert region_labels(regions) == [["v0[0]", "v0[1]", "v0[2]", "v1[0]", "v1[1]"]]


def test_blocking_all_to_all_inside_a_pipelined_region_merges_everything():
    # a -pipelined-> b, a -blocking all-to-all-> b: the blocking edge lies inside the logical
    # region, so its subtasks would wait on each other; one scheduling region
    b = TopologyBuilder()
    a, c = b.add_vertices(2), b.add_vertices(2)
    b.connect_pointwise(a, c, PIPELINED)
    b.connect_all_to_all(a, c, BLOCKING)
    _, regions = b.build()
    assert len(regions) == 1


def test_pipelined_pointwise_chains_form_one_region_per_lane():
    b = TopologyBuilder()
    a, m, s = b.add_vertices(3), b.add_vertices(3), b.add_vertices(3)
    b.connect_pointwise(a, m, PIPELINED)
    b.connect_pointwise(m, s, PIPELINED)
    _, regions = b.build()
    assert region_labels(regions) == [
        ["v0[0]", "v1[0]", "v2[0]"],
        ["v0[1]", "v1[1]", "v2[1]"],
        ["v0[2]", "v1[2]", "v2[2]"],
    ]


def test_cycles_between_regions_over_blocking_pointwise_edges_are_merged():
    # lane regions {a0,c0} and {a1,c1} from a -pipelined-> c; a blocking pointwise edge
    # b -> c with b fed by a pipelined from ... build the FLINK-17330 shape:
    # a -pipelined-> b (pointwise, 2 -> 1): region {a0, a1, b0}
    # a -blocking-> c (pointwise), c -pipelined-> b? would be a job cycle; instead:
    # x -pipelined-> y (pointwise 1:1) and x -blocking-> y (pointwise 2 -> 1) inside one region
    b = TopologyBuilder()
    x, y = b.add_vertices(2), b.add_vertices(1)
    b.connect_pointwise(x, y, PIPELINED)
    b.connect_pointwise(x, y, BLOCKING)
    _, regions = b.build()
    assert region_labels(regions) == [["v0[0]", "v0[1]", "v1[0]"]]


def test_strongly_connected_components():
    # 0 <-> 1 form a cycle, 1 -> 2 -> 3 -> 2 another, 4 is alone
    components = strongly_connected_components([[1], [0, 2], [3], [2], []])
    assert sorted(sorted(c) for c in components) == [[0, 1], [2, 3], [4]]


def test_logical_regions_waiting_on_each_other_through_blocking_edges_merge():
    # a -pipelined-> c and a -blocking-> b -blocking-> c: logical regions {a, c} and {b} wait
    # on each other. Flink would deadlock; Tidal merges them.
    g = JobGraph()
    a, bb, c = g.add_vertex("a", 1), g.add_vertex("b", 1), g.add_vertex("c", 1)
    g.connect(a, c, Partitioner.FORWARD, PIPELINED)
    g.connect(a, bb, Partitioner.FORWARD, BLOCKING)
    g.connect(bb, c, Partitioner.FORWARD, BLOCKING)
    logical = compute_logical_regions(g, lambda e: e.distribution_pattern)
    assert logical["a"] is logical["b"] is logical["c"]
    graph = ExecutionGraph(g, dynamic=False)
    regions = PipelinedRegions(graph)
    graph.listeners.append(regions)
    graph.initialize(list(graph.job_vertices.values()))
    # at the subtask level {a0, c0} and {b0} wait on each other; Tarjan merges them
    assert region_labels(regions) == [["a[0]", "b[0]", "c[0]"]]


def test_scc_of_a_long_chain_does_not_recurse():
    n = 50_000
    edges = [[i + 1] for i in range(n - 1)] + [[0]]
    (component,) = strongly_connected_components(edges)
    assert sorted(component) == list(range(n))


def test_regions_are_added_incrementally_and_never_change():
    g = JobGraph()
    a, bb = g.add_vertex("a", 2), g.add_vertex("b", 3)
    g.connect(a, bb, Partitioner.REBALANCE, BLOCKING)
    graph = ExecutionGraph(g, dynamic=True)
    regions = PipelinedRegions(graph)
    graph.listeners.append(regions)
    graph.initialize([graph.job_vertex("a")])
    first = list(regions)
    graph.initialize([graph.job_vertex("b")])
    assert list(regions)[:2] == first and len(regions) == 5
    assert [r.id for r in regions] == [0, 1, 2, 3, 4]


def test_pipelined_neighbours_must_be_initialised_together():
    g = JobGraph()
    a, bb = g.add_vertex("a", 2), g.add_vertex("b", 2)
    g.connect(a, bb, Partitioner.FORWARD, PIPELINED)
    graph = ExecutionGraph(g, dynamic=True)
    graph.listeners.append(PipelinedRegions(graph))
    with pytest.raises(JobGraphError, match="must be initialised together"):
        graph.initialize([graph.job_vertex("a")])


@st.composite
def random_jobs(draw):
    n = draw(st.integers(1, 6))
    g = JobGraph("random")
    vertices = [g.add_vertex(f"v{i}", draw(st.integers(1, 5))) for i in range(n)]
    for j in range(1, n):
        for i in draw(st.lists(st.integers(0, j - 1), max_size=2, unique=True)):
            partitioner = draw(st.sampled_from([Partitioner.REBALANCE, Partitioner.RESCALE]))
            result = draw(st.sampled_from([BLOCKING, PIPELINED]))
            g.connect(vertices[i], vertices[j], partitioner, result)
    return g


@settings(max_examples=150, deadline=None)
@given(random_jobs())
def test_regions_partition_the_subtasks(job):
    graph = ExecutionGraph(job, dynamic=False)
    regions = PipelinedRegions(graph)
    graph.listeners.append(regions)
    graph.initialize(list(graph.job_vertices.values()))
    seen = [v.index for r in regions for v in r.vertices]
    assert sorted(seen) == list(range(graph.num_vertices))  # every subtask exactly once
    for v in graph.vertices():
        assert v in v.region
        for group in v.consumed_groups:
            if group.result.result_type.must_be_pipelined:
                assert all(p.producer.region is v.region for p in group.partitions)
    # no two regions wait on each other: the region graph over blocking inputs is acyclic
    edges = [[] for _ in regions]
    for r in regions:
        for g in r.blocking_groups:
            for p in g.partitions:
                if p.producer.region is not r:
                    edges[p.producer.region.id].append(r.id)
    assert all(len(c) == 1 for c in strongly_connected_components(edges))
