"""Which side of a join the JobManager may broadcast, by the join's kind (FLIP-470's table)."""

import pytest

from jobmanager.errors import InvalidEdgeError
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.model.joins import JoinInput


@pytest.mark.parametrize(
    ("kind", "left", "right"),
    [
        ("inner", True, True),
        ("left", False, True),
        ("right", True, False),
        ("full", False, False),
        ("semi", False, True),
        ("anti", False, True),
    ],
)
def test_the_side_a_join_kind_keeps_unmatched_rows_of_is_never_broadcast(kind, left, right):
    assert JoinInput("j", kind, "left").may_be_broadcast is left
    assert JoinInput("j", kind, "right").may_be_broadcast is right


def test_a_join_input_of_an_unknown_kind_or_side_is_refused_by_name():
    with pytest.raises(InvalidEdgeError, match="'cross'"):
        JoinInput("j1", "cross", "left")
    with pytest.raises(InvalidEdgeError, match="'middle'"):
        JoinInput("j1", "inner", "middle")


def test_a_chained_graph_keeps_the_join_marks_of_its_edges():
    from jobmanager.model.chaining import chained_graph

    g = JobGraph("j")
    a, b, join, agg = (g.add_vertex(n) for n in ("a", "b", "join", "agg"))
    g.connect(a, join, Partitioner.hash("k"), join=JoinInput("j1", "inner", "left"))
    g.connect(b, join, Partitioner.hash("k"), join=JoinInput("j1", "inner", "right", True))
    g.connect(join, agg, Partitioner.FORWARD)
    chained = chained_graph(g, (("join", "agg"),))
    marks = {e.source.name: e.join for e in chained.edges}
    assert marks == {
        "a": JoinInput("j1", "inner", "left"),
        "b": JoinInput("j1", "inner", "right", True),
    }
