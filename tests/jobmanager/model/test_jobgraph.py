import pytest

from jobmanager.errors import (
    CyclicGraphError,
    DuplicateNameError,
    InvalidEdgeError,
    InvalidParallelismError,
    JobGraphError,
)
from jobmanager.model.jobgraph import (
    DistributionPattern,
    JobGraph,
    Partitioner,
    ResultPartitionType,
)


def test_result_partition_types_carry_flinks_properties():
    blocking, pipelined = ResultPartitionType.BLOCKING, ResultPartitionType.PIPELINED
    assert blocking.is_reconsumable and not blocking.must_be_pipelined
    assert not blocking.can_be_pipelined and blocking.is_released_by_scheduler
    assert not pipelined.is_reconsumable and pipelined.must_be_pipelined
    assert pipelined.can_be_pipelined and not pipelined.is_released_by_scheduler


def test_partitioners_imply_their_distribution_pattern():
    assert Partitioner.FORWARD.distribution_pattern is DistributionPattern.POINTWISE
    assert Partitioner.RESCALE.distribution_pattern is DistributionPattern.POINTWISE
    for p in (Partitioner.REBALANCE, Partitioner.BROADCAST, Partitioner.hash("k")):
        assert p.distribution_pattern is DistributionPattern.ALL_TO_ALL
    assert str(Partitioner.hash("a", "b")) == "hash(a, b)"
    with pytest.raises(ValueError):
        Partitioner.hash()


def test_a_cycle_is_named_vertex_by_vertex():
    g = JobGraph("cyclic")
    a, b, c, d = (g.add_vertex(n, 1) for n in "abcd")
    g.connect(a, b)
    g.connect(b, c)
    g.connect(c, d)
    g.connect(d, b)
    with pytest.raises(CyclicGraphError) as info:
        g.validate()
    assert info.value.cycle in (["b", "c", "d", "b"], ["c", "d", "b", "c"], ["d", "b", "c", "d"])
    assert (
        "b -> c -> d" in str(info.value)
        or "c -> d -> b" in str(info.value)
        or ("d -> b -> c" in str(info.value))
    )


def test_a_self_loop_is_a_cycle():
    g = JobGraph()
    a = g.add_vertex("a", 1)
    g.connect(a, a)
    with pytest.raises(CyclicGraphError, match="a -> a"):
        g.validate()


@pytest.mark.parametrize("parallelism", [0, -3])
def test_parallelism_below_one_names_the_vertex(parallelism):
    with pytest.raises(InvalidParallelismError, match="vertex 'map'.*at least 1"):
        JobGraph().add_vertex("map", parallelism)


def test_max_parallelism_below_parallelism_names_the_vertex():
    with pytest.raises(InvalidParallelismError, match="vertex 'agg': max parallelism 2 is below"):
        JobGraph().add_vertex("agg", parallelism=4, max_parallelism=2)


def test_forward_between_different_fixed_parallelisms_names_the_edge():
    g = JobGraph()
    a, b = g.add_vertex("a", 2), g.add_vertex("b", 3)
    g.connect(a, b, Partitioner.FORWARD)
    with pytest.raises(InvalidEdgeError, match="edge 'a->b'.*'a' has 2 and 'b' has 3"):
        g.validate()


def test_forward_with_an_unset_parallelism_is_fine():
    g = JobGraph()
    g.connect(g.add_vertex("a", 2), g.add_vertex("b"), Partitioner.FORWARD)
    g.validate()


def test_edge_to_a_vertex_of_another_graph_names_the_edge():
    g, other = JobGraph("mine"), JobGraph("theirs")
    a, x = g.add_vertex("a"), other.add_vertex("x")
    with pytest.raises(InvalidEdgeError, match="edge 'a->x'.*belongs to job graph 'theirs'"):
        g.connect(a, x)


def test_duplicate_names_are_refused():
    g = JobGraph("j")
    g.add_vertex("src")
    with pytest.raises(DuplicateNameError, match="'src'"):
        g.add_vertex("src")


def test_contradicting_partitioner_and_pattern():
    g = JobGraph()
    a, b = g.add_vertex("a"), g.add_vertex("b")
    with pytest.raises(InvalidEdgeError, match="all_to_all, but the edge says pointwise"):
        g.connect(a, b, Partitioner.hash("k"), pattern=DistributionPattern.POINTWISE)


def test_empty_graph_is_invalid():
    with pytest.raises(JobGraphError, match="no vertices"):
        JobGraph("nothing").validate()


def test_topological_order_keeps_insertion_order_among_ties():
    g = JobGraph()
    c, a, b = g.add_vertex("c"), g.add_vertex("a"), g.add_vertex("b")
    g.connect(c, b)
    g.connect(a, b)
    assert [v.name for v in g.topological_order()] == ["c", "a", "b"]


def test_parallel_edges_get_distinct_ids():
    g = JobGraph()
    a, b = g.add_vertex("a"), g.add_vertex("b")
    assert [g.connect(a, b).id, g.connect(a, b).id] == ["a->b", "a->b#2"]


def test_unspecified_partitioner_resolves_like_flink():
    g = JobGraph()
    a, b, c = g.add_vertex("a", 2), g.add_vertex("b", 2), g.add_vertex("c", 3)
    ab, bc = g.connect(a, b), g.connect(b, c)
    assert ab.resolved(adaptive=False).partitioner == Partitioner.FORWARD
    assert bc.resolved(adaptive=False).partitioner == Partitioner.REBALANCE
    assert ab.resolved(adaptive=True).partitioner == Partitioner.RESCALE
    assert bc.resolved(adaptive=True).partitioner == Partitioner.RESCALE
