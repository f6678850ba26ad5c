"""One dispatch on a plan node's kind, for the walks that handle every kind differently
(cutting a plan into stages, writing a stage's SQL): each kind is a method named after its
class, as in Python's ``ast.NodeVisitor``, instead of a ladder of ``isinstance`` checks that
each walk writes again."""

from __future__ import annotations

from typing import Any

__all__ = ["PlanVisitor"]


class PlanVisitor:
    """``visit(node)`` calls ``visit_<Kind>(node)`` for a node of class ``Kind``, or of the
    nearest class it derives from that has a method; a kind with none raises ``TypeError``
    naming the walk and the kind."""

    def visit(self, node: Any) -> Any:
        for kind in type(node).__mro__:
            method = getattr(self, f"visit_{kind.__name__}", None)
            if method is not None:
                return method(node)
        raise TypeError(f"{type(self).__name__} has no case for a {type(node).__name__}")
