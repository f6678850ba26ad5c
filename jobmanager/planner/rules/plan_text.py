"""A logical plan as text, one node a line, so a rule's change can be shown as a diff."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from jobmanager.planner.logical import Aggregate, Filter, Join, Node, Project, Scan, Sort
from jobmanager.planner.rules.pushdown import parent_counts

__all__ = ["plan_diff", "plan_text"]


def plan_text(root: Node) -> str:
    """Each node indented under its parent: its kind and what it computes. A node with two
    parents is labelled ``#n`` where first shown and named by its label after."""
    shared = {key for key, count in parent_counts(root).items() if count > 1}
    labels: dict[int, int] = {}
    lines: list[str] = []

    def show(node: Node, depth: int) -> None:
        pad = "  " * depth
        if id(node) in labels:
            lines.append(f"{pad}-> #{labels[id(node)]}")
            return
        label = ""
        if id(node) in shared:
            labels[id(node)] = len(labels) + 1
            label = f"#{labels[id(node)]} "
        lines.append(f"{pad}{label}{_line(node)}")
        for child in node.children:
            show(child, depth + 1)

    show(root, 0)
    return "\n".join(lines) + "\n"


def plan_diff(before: str, after: str) -> list[str]:
    """The lines ``after`` drops (``-``) and adds (``+``) of ``before``, without context."""
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), n=0, lineterm="")
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("---", "+++")]


def _line(node: Node) -> str:
    describe = _DESCRIBED.get(type(node))
    what = describe(node) if describe else f"[{', '.join(node.ids)}]"
    return f"{type(node).__name__} {what}"


def _scan(node: Scan) -> str:
    where = f" where {' and '.join(_sql(f) for f in node.filters)}" if node.filters else ""
    return f"{node.table.name} [{', '.join(node.ids)}]{where}"


def _join(node: Join) -> str:
    return node.kind + (f" on {_sql(node.condition)}" if node.condition is not None else "")


_DESCRIBED: dict[type, Callable[[Any], str]] = {
    Scan: _scan,
    Filter: lambda node: _sql(node.condition),
    Project: lambda node: _assigned(node.exprs),
    Join: _join,
    Aggregate: lambda node: f"by [{_assigned(node.groups)}] [{_assigned(node.aggs)}]",
    Sort: lambda node: ", ".join(_sql(k) for k in node.keys),
}


def _assigned(pairs: tuple[tuple[str, exp.Expression], ...]) -> str:
    return ", ".join(
        name if isinstance(e, exp.Column) and e.name == name else f"{name} = {_sql(e)}"
        for name, e in pairs
    )


def _sql(expression: exp.Expression) -> str:
    return expression.sql(dialect="spark")
