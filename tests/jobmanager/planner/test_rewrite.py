"""The planner's one tree walk: each node rewritten once, a shared node staying one node."""

from __future__ import annotations

from dataclasses import replace

from jobmanager.planner.logical import Filter, Join, Node, OneRow, Project, col, nodes_of
from jobmanager.planner.rewrite import rewrite_down, rewrite_up
from jobmanager.planner.types import BIGINT


def leaf() -> Node:
    return OneRow((), "one row")


def project(child: Node, name: str) -> Project:
    return Project(((name, BIGINT),), name, child, ((name, col(name)),))


def shared_plan() -> tuple[Join, Node]:
    """A join of two projections of one shared projection (a CTE read twice)."""
    shared = project(leaf(), "x")
    left, right = project(shared, "a"), project(shared, "b")
    return Join(left.columns + right.columns, "join", left, right, "cross"), shared


def test_rewrite_up_rewrites_a_shared_node_once_and_keeps_it_one_node():
    root, _ = shared_plan()
    seen: list[str] = []

    def renamed(node: Node) -> Node:
        seen.append(node.origin)
        return replace(node, origin=node.origin.upper())

    result = rewrite_up(root, renamed)
    assert seen == ["one row", "x", "a", "b", "join"]  # children first, the shared node once
    left, right = result.children
    assert left.child is right.child  # still one node, read twice
    assert left.child.origin == "X" and result.origin == "JOIN"
    assert len(list(nodes_of(result))) == len(list(nodes_of(root)))


def test_rewrite_up_gives_fn_each_node_over_its_rewritten_children():
    root, _ = shared_plan()

    def filtered_leaf(node: Node) -> Node:
        if isinstance(node, OneRow):
            return Filter((), "filtered", node, col("x"))
        return node

    result = rewrite_up(root, filtered_leaf)
    assert isinstance(result.children[0].child.child, Filter)
    assert result.children[0].child is result.children[1].child


def test_rewrite_down_walks_the_children_a_parent_was_given():
    root, _ = shared_plan()
    seen: list[str] = []

    def swapped(node: Node) -> Node:
        seen.append(node.origin)
        if isinstance(node, Join):
            return replace(node, left=node.right, right=node.left)
        return node

    result = rewrite_down(root, swapped)
    assert seen == ["join", "b", "x", "one row", "a"]  # parents first, the shared node once
    assert [c.origin for c in result.children] == ["b", "a"]
    assert result.children[0].child is result.children[1].child
