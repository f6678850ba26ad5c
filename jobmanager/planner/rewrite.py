"""One tree walk for the planner's rewrites, so each rule says only what it does to a node.

A logical plan is a DAG (``jobmanager.planner.logical``): a node two parents share, a CTE read
twice, must be rewritten once and stay one node, or the plan would read it twice. Both walks
memoise by node identity and keep each node they were given alive while they run, so an id is
never reused by a node made during the walk.

- ``rewrite_up``: children first; ``fn`` gets each node already over its rewritten children
  and returns what replaces it (itself where nothing applies).
- ``rewrite_down``: parents first; ``fn`` gets each node as the walk meets it and returns what
  replaces it, whose children the walk then rewrites (so a rule may change a node's inputs
  before they are walked: ``joinfilters`` puts a semi join under a join's side).

Either walk rebuilds every node over its rewritten children (``with_children``), changed or
not, as the passes it replaced did: a rule sees only nodes of the plan being made.
"""

from __future__ import annotations

from collections.abc import Callable

from jobmanager.planner.logical import Node, with_children

__all__ = ["rewrite_down", "rewrite_up"]

Rewrite = Callable[[Node], Node]


def rewrite_up(root: Node, fn: Rewrite) -> Node:
    """``root`` with each node, over its rewritten children, replaced by ``fn`` of it."""
    done: dict[int, tuple[Node, Node]] = {}

    def walk(node: Node) -> Node:
        if id(node) not in done:
            rebuilt = with_children(node, [walk(child) for child in node.children])
            done[id(node)] = (node, fn(rebuilt))
        return done[id(node)][1]

    return walk(root)


def rewrite_down(root: Node, fn: Rewrite) -> Node:
    """``root`` with each node replaced by ``fn`` of it, then the replacement's children
    rewritten the same way."""
    done: dict[int, tuple[Node, Node]] = {}

    def walk(node: Node) -> Node:
        if id(node) not in done:
            replaced = fn(node)
            rebuilt = with_children(replaced, [walk(child) for child in replaced.children])
            done[id(node)] = (node, rebuilt)
        return done[id(node)][1]

    return walk(root)
