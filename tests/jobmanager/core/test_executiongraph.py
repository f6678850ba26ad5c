import pytest

from jobmanager.core.executiongraph import ExecutionGraph, FormulaInputInfo
from jobmanager.errors import JobGraphError
from jobmanager.model.jobgraph import DistributionPattern, JobGraph, Partitioner
from shuffle.ranges import IndexRange
from tests.builders import TopologyBuilder, finish


def consumed_partitions(vertex):
    return [[p.index for p in g.partitions] for g in vertex.consumed_groups]


def test_all_to_all_makes_one_group_each_way_shared_by_everyone():
    b = TopologyBuilder()
    up, down = b.add_vertices(4), b.add_vertices(3)
    b.connect_all_to_all(up, down)
    graph, _ = b.build()
    producers, consumers = graph.job_vertex("v0").vertices, graph.job_vertex("v1").vertices
    groups = {id(g) for v in consumers for g in v.consumed_groups}
    assert len(groups) == 1
    (group,) = consumers[0].consumed_groups
    assert [p.index for p in group.partitions] == [0, 1, 2, 3]
    consumer_groups = {id(cg) for v in producers for p in v.produced for cg in p.consumer_groups}
    assert len(consumer_groups) == 1
    assert [v.subtask for v in group.consumers.vertices] == [0, 1, 2]
    # identical subtasks share one tuple rather than holding a copy each
    assert len({id(v.consumed_groups) for v in consumers}) == 1


@pytest.mark.parametrize(
    "producers, consumers, expected",
    [
        (4, 4, [[0], [1], [2], [3]]),
        (6, 4, [[0], [1, 2], [3], [4, 5]]),  # S > T: [k*S/T, (k+1)*S/T)
        (7, 3, [[0, 1], [2, 3], [4, 5, 6]]),
        (2, 5, [[0], [0], [0], [1], [1]]),  # S < T: partition j -> [(jT+S-1)/S, ((j+1)T+S-1)/S)
        (3, 7, [[0], [0], [0], [1], [1], [2], [2]]),
    ],
)
def test_pointwise_follows_flinks_edge_manager_formulas(producers, consumers, expected):
    b = TopologyBuilder()
    up, down = b.add_vertices(producers), b.add_vertices(consumers)
    b.connect_pointwise(up, down)
    graph, _ = b.build()
    got = [consumed_partitions(v)[0] for v in graph.job_vertex("v1").vertices]
    assert got == expected
    for partition in graph.results["v0->v1"].partitions:
        readers = [v.subtask for g in partition.consumer_groups for v in g.vertices]
        assert readers == [k for k, parts in enumerate(expected) if partition.index in parts]


def test_pointwise_subpartition_ranges_on_a_static_graph():
    b = TopologyBuilder()
    up, down = b.add_vertices(2), b.add_vertices(5)
    b.connect_pointwise(up, down)
    graph, _ = b.build()
    result = graph.results["v0->v1"]
    assert [result.subpartition_count(j) for j in range(2)] == [3, 2]
    info = graph.job_vertex("v1").input_infos["v0->v1"]
    subs = [(info[k].slices[0].partitions, info[k].slices[0].subpartitions) for k in range(5)]
    assert subs == [
        (IndexRange(0, 0), IndexRange(0, 0)),
        (IndexRange(0, 0), IndexRange(1, 1)),
        (IndexRange(0, 0), IndexRange(2, 2)),
        (IndexRange(1, 1), IndexRange(0, 0)),
        (IndexRange(1, 1), IndexRange(1, 1)),
    ]


def test_all_to_all_static_ranges_give_each_consumer_its_own_subpartition():
    info = FormulaInputInfo(DistributionPattern.ALL_TO_ALL, False, 5, 3, lambda j: 3)
    assert [info[k].slices[0].subpartitions for k in range(3)] == [
        IndexRange(0, 0),
        IndexRange(1, 1),
        IndexRange(2, 2),
    ]
    assert all(info[k].slices[0].partitions == IndexRange(0, 4) for k in range(3))
    broadcast = FormulaInputInfo(DistributionPattern.ALL_TO_ALL, True, 5, 3, lambda j: 1)
    assert {broadcast[k].slices[0].subpartitions for k in range(3)} == {IndexRange(0, 0)}


def test_unfinished_partition_count_makes_all_finished_constant_time():
    b = TopologyBuilder()
    up, down = b.add_vertices(3), b.add_vertices(2)
    b.connect_all_to_all(up, down)
    graph, _ = b.build()
    (group,) = graph.vertex("v1", 0).consumed_groups
    assert group.unfinished == 3 and not group.all_finished
    for v in graph.job_vertex("v0").vertices:
        finish(v)
    assert group.all_finished
    graph.vertex("v0", 1).produced[0].reset()
    assert group.unfinished == 1


def test_dynamic_graph_grows_and_tells_listeners():
    g = JobGraph()
    src, agg = g.add_vertex("src", 3), g.add_vertex("agg", max_parallelism=10)
    g.connect(src, agg, Partitioner.hash("k"))
    graph = ExecutionGraph(g, dynamic=True)
    told = []

    class Listener:
        def on_topology_updated(self, update):
            told.append(
                ([j.name for j in update.new_job_vertices], [v.label for v in update.new_vertices])
            )

    graph.listeners.append(Listener())
    agg_ejv = graph.job_vertex("agg")
    assert not graph.can_initialize(agg_ejv)
    graph.initialize([graph.job_vertex("src")])
    # producers of a consumer whose parallelism is unknown write its max parallelism
    assert graph.results["src->agg"].subpartition_count(0) == 10
    with pytest.raises(JobGraphError, match="'agg' cannot be initialised"):
        graph.initialize([agg_ejv])
    agg_ejv.parallelism = 2
    graph.initialize([agg_ejv])
    assert told == [(["src"], ["src[0]", "src[1]", "src[2]"]), (["agg"], ["agg[0]", "agg[1]"])]
    assert graph.job_vertex("agg").input_infos["src->agg"][1].slices[0].subpartitions == (
        IndexRange(5, 9)
    )


def test_dynamic_broadcast_writes_one_subpartition():
    g = JobGraph()
    dim, fact, join = g.add_vertex("dim", 2), g.add_vertex("fact", 4), g.add_vertex("join")
    g.connect(dim, join, Partitioner.BROADCAST)
    g.connect(fact, join, Partitioner.hash("k"))
    graph = ExecutionGraph(g, dynamic=True, default_max_parallelism=8)
    graph.initialize([graph.job_vertex("dim"), graph.job_vertex("fact")])
    assert graph.results["dim->join"].subpartition_count(0) == 1
    assert graph.results["fact->join"].subpartition_count(0) == 8


def test_static_graph_fills_unset_parallelism_with_the_default():
    g = JobGraph()
    g.connect(g.add_vertex("a"), g.add_vertex("b", 4))
    graph = ExecutionGraph(g, dynamic=False, default_parallelism=3)
    assert graph.job_vertex("a").parallelism == 3
    assert g.vertex("a").parallelism is None  # the user's graph is untouched
