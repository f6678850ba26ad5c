"""Which edges chain (``jobmanager.model.chaining``), from small graphs, and the graph a chain
makes: one vertex with the head's inputs and sources and the tail's outputs."""

import pyarrow as pa
import pytest

from jobmanager import FileSource, JobGraph, ParquetSink, Partitioner, arrow, spark
from jobmanager.model.chaining import (
    ChainedOperator,
    chained_graph,
    decide_chains,
    one_task_candidates,
)


def ident(x):
    return x


def pipeline(**consumer) -> tuple[JobGraph, dict]:
    g = JobGraph("p")
    src = g.add_vertex("src", parallelism=2, operator=arrow(ident), sources=[FileSource("/d")])
    agg = g.add_vertex("agg", operator=spark(ident))
    top = g.add_vertex("top", operator=spark(ident), **consumer)
    sink = g.add_vertex("sink", operator=ParquetSink("/out"))
    g.connect(src, agg, Partitioner.hash("k"))
    g.connect(agg, top, Partitioner.FORWARD)
    g.connect(top, sink, Partitioner.FORWARD)
    return g, {"src": src, "agg": agg, "top": top, "sink": sink}


def test_forward_edges_between_single_producers_and_consumers_chain():
    g, _ = pipeline()
    assert decide_chains(g) == (("agg", "top", "sink"),)


def test_the_switch_turns_chaining_off():
    g, _ = pipeline()
    assert decide_chains(g, enabled=False) == ()
    assert chained_graph(g, ()) is g


def test_a_vertex_marked_as_a_chain_start_begins_a_new_chain():
    g, _ = pipeline(chain_start=True)
    assert decide_chains(g) == (("top", "sink"),)


def test_a_hash_or_broadcast_edge_never_chains():
    g = JobGraph("b")
    a = g.add_vertex("a", parallelism=2)
    b = g.add_vertex("b", parallelism=2)
    c = g.add_vertex("c", parallelism=2)
    g.connect(a, b, Partitioner.BROADCAST)
    g.connect(b, c, Partitioner.hash("k"))
    assert decide_chains(g) == ()


def test_a_second_consumer_or_a_second_input_prevents_it():
    g, v = pipeline()
    other = g.add_vertex("other", operator=arrow(ident))
    g.connect(v["agg"], other, Partitioner.REBALANCE)  # agg now feeds two vertices
    assert decide_chains(g) == (("top", "sink"),)
    g2, v2 = pipeline()
    side = g2.add_vertex("side", parallelism=2, operator=arrow(ident))
    g2.connect(side, v2["top"], Partitioner.BROADCAST)  # top now reads two inputs
    assert decide_chains(g2) == (("top", "sink"),)  # agg -> top broken; top may head a chain


def test_a_user_set_parallelism_that_differs_makes_no_forward_edge_and_no_chain():
    g = JobGraph("u")
    a = g.add_vertex("a", parallelism=2, operator=arrow(ident))
    b = g.add_vertex("b", parallelism=3, operator=arrow(ident))
    g.connect(a, b)  # left open: REBALANCE between different parallelisms
    assert decide_chains(g) == ()


def test_a_source_of_its_own_stops_a_chain():
    g = JobGraph("s")
    a = g.add_vertex("a", parallelism=2, operator=arrow(ident))
    b = g.add_vertex("b", parallelism=2, operator=arrow(ident), sources=[FileSource("/d")])
    g.connect(a, b, Partitioner.FORWARD)
    assert decide_chains(g) == ()


def test_the_chained_graph_has_one_vertex_per_chain_with_the_heads_inputs():
    g, _ = pipeline()
    physical = chained_graph(g, decide_chains(g))
    assert [v.name for v in physical.vertices] == ["src", "agg -> top -> sink"]
    chain = physical.vertex("agg -> top -> sink")
    assert isinstance(chain.operator, ChainedOperator)
    assert chain.operator.names == ("agg", "top", "sink") and chain.operator.sink == ParquetSink(
        "/out"
    )
    (edge,) = physical.edges
    assert (edge.source.name, edge.target.name, str(edge.partitioner)) == (
        "src",
        "agg -> top -> sink",
        "hash(k)",
    )
    physical.validate()


@pytest.mark.parametrize("fixed", [None, 4])
def test_a_chain_keeps_a_fixed_parallelism_of_its_members(fixed):
    g = JobGraph("f")
    a = g.add_vertex("a", parallelism=2)
    b = g.add_vertex("b", parallelism=fixed, operator=arrow(ident))
    c = g.add_vertex("c", parallelism=fixed, operator=arrow(ident))
    g.connect(a, b, Partitioner.REBALANCE)
    g.connect(b, c, Partitioner.FORWARD)
    assert chained_graph(g, decide_chains(g)).vertex("b -> c").parallelism == fixed


def test_a_chain_names_the_member_whose_parallelism_the_user_set():
    """Its explanation says "set by the user on final": the source and the sink were not set."""
    g = one_task_pipeline(Partitioner.hash("k"))
    chain = chained_graph(g, decide_chains(g, one_task={"src"})).vertex("src -> final -> sink")
    assert (chain.parallelism, chain.operator.fixed_by) == (1, "final")
    g = one_task_pipeline(Partitioner.FORWARD, source_parallelism=3, final_parallelism=None)
    chain = chained_graph(g, decide_chains(g)).vertex("src -> final -> sink")
    assert (chain.parallelism, chain.operator.fixed_by) == (3, "src")


def one_task_pipeline(
    partitioner: Partitioner,
    source_parallelism: int | None = None,
    final_parallelism: int | None = 1,
) -> JobGraph:
    """Q1's shape: a source with a partial aggregate, an exchange, the final aggregate in one
    task, a sink."""
    g = JobGraph("one")
    src = g.add_vertex(
        "src", parallelism=source_parallelism, operator=spark(ident), sources=[FileSource("/d")]
    )
    final = g.add_vertex("final", parallelism=final_parallelism, operator=spark(ident))
    sink = g.add_vertex("sink", operator=ParquetSink("/out"))
    g.connect(src, final, partitioner)
    g.connect(final, sink, Partitioner.FORWARD)
    return g


@pytest.mark.parametrize(
    "partitioner", [Partitioner.hash("k"), Partitioner.REBALANCE, Partitioner.RESCALE]
)
def test_an_edge_between_two_one_task_vertices_chains_whatever_its_partitioner(partitioner):
    """One producer task sends all it has to one consumer task: FORWARD in effect."""
    inferred_one = one_task_pipeline(partitioner)
    assert decide_chains(inferred_one, one_task={"src"}) == (("src", "final", "sink"),)
    set_to_one = one_task_pipeline(partitioner, source_parallelism=1)
    assert decide_chains(set_to_one) == (("src", "final", "sink"),)
    physical = chained_graph(set_to_one, decide_chains(set_to_one))
    assert [v.name for v in physical.vertices] == ["src -> final -> sink"]
    assert physical.vertex("src -> final -> sink").parallelism == 1
    assert physical.vertex("src -> final -> sink").sources == (FileSource("/d"),)


def test_an_edge_from_a_source_of_more_tasks_or_unknown_tasks_does_not_chain():
    g = one_task_pipeline(Partitioner.hash("k"))
    assert decide_chains(g) == (("final", "sink"),)  # src's tasks not known: not chained
    assert decide_chains(one_task_pipeline(Partitioner.hash("k"), source_parallelism=2)) == (
        ("final", "sink"),
    )
    unset_consumer = one_task_pipeline(Partitioner.hash("k"), final_parallelism=None)
    assert decide_chains(unset_consumer, one_task={"src"}) == (("final", "sink"),)


def test_a_broadcast_edge_between_one_task_vertices_or_the_switch_prevent_it():
    g = one_task_pipeline(Partitioner.BROADCAST, source_parallelism=1)
    assert decide_chains(g) == (("final", "sink"),)
    assert (
        decide_chains(one_task_pipeline(Partitioner.hash("k"), source_parallelism=1), enabled=False)
        == ()
    )


def test_a_second_consumer_or_a_chain_start_prevents_a_one_task_chain():
    g = one_task_pipeline(Partitioner.hash("k"), source_parallelism=1)
    other = g.add_vertex("other", parallelism=1, operator=arrow(ident))
    g.connect(g.vertex("src"), other, Partitioner.hash("k"))
    assert ("src", "final", "sink") not in decide_chains(g)
    g2 = JobGraph("start")
    src = g2.add_vertex("src", parallelism=1, sources=[FileSource("/d")])
    final = g2.add_vertex("final", parallelism=1, operator=spark(ident), chain_start=True)
    g2.connect(src, final, Partitioner.hash("k"))
    assert decide_chains(g2) == ()


def test_the_sources_asked_when_the_job_is_taken_are_those_whose_edge_would_chain():
    """Only a source vertex with nothing set, whose one non-forward, non-broadcast edge leads
    to a vertex set to one task: no other job's sources are listed any earlier."""
    assert one_task_candidates(one_task_pipeline(Partitioner.hash("k"))) == ("src",)
    assert one_task_candidates(one_task_pipeline(Partitioner.hash("k")), enabled=False) == ()
    assert one_task_candidates(one_task_pipeline(Partitioner.hash("k"), source_parallelism=3)) == ()
    assert one_task_candidates(one_task_pipeline(Partitioner.hash("k"), final_parallelism=2)) == ()
    assert one_task_candidates(one_task_pipeline(Partitioner.BROADCAST)) == ()
    assert one_task_candidates(one_task_pipeline(Partitioner.FORWARD)) == ()  # a forward group
    g, _ = pipeline()
    assert one_task_candidates(g) == ()


def with_broadcast_input(
    partitioner: Partitioner = Partitioner.BROADCAST, dynamic_filtering: str | None = None
) -> JobGraph:
    """Q3's shape: a small side sent whole to the scan, which joins it and feeds one task."""
    g = one_task_pipeline(Partitioner.hash("k"))
    small = g.add_vertex("small", operator=spark(ident), sources=[FileSource("/s")])
    g.connect(small, g.vertex("src"), partitioner, dynamic_filtering=dynamic_filtering)
    return g


def test_a_scan_with_only_broadcast_inputs_is_asked_early_when_the_least_parallelism_is_one():
    """Broadcast bytes are not counted, so such a vertex gets the least parallelism from its
    inputs, and what its sources infer where that is 1: known before its inputs ran."""
    assert one_task_candidates(with_broadcast_input()) == ("src",)
    assert one_task_candidates(with_broadcast_input(), min_parallelism=2) == ()
    assert one_task_candidates(with_broadcast_input(Partitioner.hash("k"))) == ()
    assert one_task_candidates(with_broadcast_input(dynamic_filtering="k")) == ()
    chains = decide_chains(with_broadcast_input(), one_task={"src"})
    assert chains == (("src", "final", "sink"),)
    physical = chained_graph(with_broadcast_input(), chains)
    head = physical.vertex("src -> final -> sink")
    assert [edge.source.name for edge in head.inputs] == ["small"]
    assert head.inputs[0].partitioner.kind.value == "broadcast"
    assert head.parallelism == 1 and head.sources == (FileSource("/d"),)


def planned_global_aggregate() -> JobGraph:
    """A planned query's shape: a scan, its partial aggregate chained by a FORWARD edge, the
    final aggregate in one task, the sink."""
    g = JobGraph("planned")
    scan = g.add_vertex("scan", operator=spark(ident), sources=[FileSource("/d")])
    partial = g.add_vertex("partial", operator=spark(ident))
    final = g.add_vertex("final", parallelism=1, operator=spark(ident))
    sink = g.add_vertex("sink", operator=ParquetSink("/out"))
    g.connect(scan, partial, Partitioner.FORWARD)
    g.connect(partial, final, Partitioner.REBALANCE)
    g.connect(final, sink, Partitioner.FORWARD)
    return g


def test_a_source_whose_forward_chain_feeds_one_task_is_asked_and_chained_whole():
    """A forward group has one parallelism: a scan inferred to one task makes its partial
    aggregate one task too, and the edge after it chains into the final one."""
    g = planned_global_aggregate()
    assert one_task_candidates(g) == ("scan",)
    assert decide_chains(g, one_task={"scan"}) == (("scan", "partial", "final", "sink"),)
    assert decide_chains(g) == (("scan", "partial"), ("final", "sink"))  # scan not one task
    g.connect(
        g.vertex("partial"), g.add_vertex("other", operator=spark(ident)), Partitioner.REBALANCE
    )  # a second consumer: no chain past the partial
    assert one_task_candidates(g) == ()


def pre_aggregated(**final) -> JobGraph:
    """A planned GROUP BY's shape: a scan, its partial aggregate through a FORWARD edge, a
    pre-aggregated hash edge into the final aggregate (its parallelism unset), a sink."""
    g = JobGraph("grouped")
    scan = g.add_vertex("scan", operator=spark(ident), sources=[FileSource("/d")])
    partial = g.add_vertex("partial", operator=spark(ident))
    final_ = g.add_vertex("final", operator=spark(ident), **final)
    sink = g.add_vertex("sink", operator=ParquetSink("/out"))
    g.connect(scan, partial, Partitioner.FORWARD)
    g.connect(partial, final_, Partitioner.hash("k"), pre_aggregated=True)
    g.connect(final_, sink, Partitioner.FORWARD)
    return g


def test_a_final_aggregate_runs_in_the_task_of_a_one_task_partial_one():
    """A partial aggregate's rows are at most one per group of what its task read: the scan's
    sources are asked when the job is taken, and if they infer one task, the final aggregate
    and the sink after it run in that task, one chain whose parallelism is the sources'."""
    g = pre_aggregated()
    assert one_task_candidates(g) == ("scan",)
    chains = decide_chains(g, one_task={"scan"})
    assert chains == (("scan", "partial", "final", "sink"),)
    (vertex,) = chained_graph(g, chains).vertices
    assert vertex.name == "scan -> partial -> final -> sink"
    assert vertex.parallelism is None and vertex.sources == (FileSource("/d"),)
    assert decide_chains(g) == (("scan", "partial"), ("final", "sink"))  # scan not one task


def test_a_final_aggregate_is_decided_from_its_bytes_when_more_is_asked_or_set():
    """More than one task asked for (a least parallelism above 1), a parallelism the user set,
    a second consumer of the partial aggregate or an edge not pre-aggregated: no chain over
    the exchange, and the final aggregate's own decision stands."""
    apart = (("scan", "partial"), ("final", "sink"))
    g = pre_aggregated()
    assert one_task_candidates(g, min_parallelism=2) == ()
    assert decide_chains(g, one_task={"scan"}, min_parallelism=2) == apart
    assert one_task_candidates(pre_aggregated(parallelism=3)) == ()
    assert decide_chains(pre_aggregated(parallelism=3), one_task={"scan"}) == apart
    plain = one_task_pipeline(Partitioner.hash("k"), final_parallelism=None)
    assert decide_chains(plain, one_task={"src"}) == (("final", "sink"),)
    g.connect(
        g.vertex("partial"),
        g.add_vertex("other", operator=spark(ident)),
        Partitioner.hash("k"),
        pre_aggregated=True,
    )
    assert one_task_candidates(g) == ()
    assert decide_chains(g, one_task={"scan"}) == apart


def test_only_the_pre_aggregated_edge_follows_its_producer_into_one_task():
    """After the chained final aggregate, a hash edge into a vertex whose parallelism is unset
    is an ordinary exchange: that vertex is decided from the bytes, not chained."""
    h = JobGraph("after")
    scan = h.add_vertex("scan", operator=spark(ident), sources=[FileSource("/d")])
    partial = h.add_vertex("partial", operator=spark(ident))
    final_ = h.add_vertex("final", operator=spark(ident))
    window = h.add_vertex("window", operator=spark(ident))
    sink = h.add_vertex("sink", operator=ParquetSink("/out"))
    h.connect(scan, partial, Partitioner.FORWARD)
    h.connect(partial, final_, Partitioner.hash("k"), pre_aggregated=True)
    h.connect(final_, window, Partitioner.hash("w"))
    h.connect(window, sink, Partitioner.FORWARD)
    assert decide_chains(h, one_task={"scan"}) == (("scan", "partial", "final"), ("window", "sink"))
