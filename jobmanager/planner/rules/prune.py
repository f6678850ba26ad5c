"""Only the columns something reads are produced: a scan reads only those (its FileSource's
column list, so Parquet reads only their column chunks), and nothing is carried through a join
or an exchange that no one above needs.

What a node needs is the union of what its parents ask of it (a node two parents share gives
both what they ask), so the DAG is walked parents first, then rebuilt children first. A node
always keeps one column: a table read for ``count(*)`` still reads one, or it would have rows
Spark could not see.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from jobmanager.planner.logical import (
    OUTER,
    Aggregate,
    Expand,
    Filter,
    Join,
    Limit,
    Node,
    OneRow,
    Project,
    Scan,
    SetOp,
    Sort,
    SubqueryColumn,
    Values,
    WholeQuery,
    Window,
    col,
    nodes_of,
    references,
    substitute,
)

__all__ = ["prune_columns"]


def prune_columns(root: Node, trim: bool = True) -> Node:
    """``trim``: also drop, right above a join, filter or sort, the columns only it read
    (joins are ordered before that, while the join trees are whole)."""
    order = list(nodes_of(root))
    needed: dict[int, set[str]] = {id(root): set(root.ids)}
    parents: dict[int, int] = {}
    for node in reversed(order):  # parents before children
        wanted = needed.setdefault(id(node), set())
        for child, asked in _asks(node, wanted):
            needed.setdefault(id(child), set()).update(asked)
            parents[id(child)] = parents.get(id(child), 0) + 1
    rebuilt: dict[int, Node] = {}
    for node in order:  # children first
        made = _rebuild(node, needed[id(node)], rebuilt)
        if trim and isinstance(node, (Filter, Join, Sort, Limit)):
            made = _trimmed(made, needed[id(node)])
        if (
            isinstance(made, Project)
            and isinstance(made.child, Project)
            and parents.get(id(node.children[0]), 0) <= 1
        ):
            made = _merged(made)
        rebuilt[id(node)] = made
    return rebuilt[id(root)]


def _asks(node: Node, wanted: set[str]) -> list[tuple[Node, set[str]]]:
    """What ``node``, asked for ``wanted``, needs of each child (a leaf: nothing)."""
    ask = _ASKS.get(type(node))
    return ask(node, wanted) if ask is not None else []


def _uses(expressions) -> set[str]:
    return set().union(*(references(e) for e in expressions))


def _asks_filter(node: Filter, wanted: set[str]) -> list[tuple[Node, set[str]]]:
    return [(node.child, wanted | references(node.condition))]


def _asks_project(node: Project, wanted: set[str]) -> list[tuple[Node, set[str]]]:
    kept = [e for i, e in node.exprs if i in wanted] or [node.exprs[0][1]]
    return [(node.child, _uses(kept))]


def _asks_join(node: Join, wanted: set[str]) -> list[tuple[Node, set[str]]]:
    asked = wanted | (references(node.condition) if node.condition is not None else set())
    return [(node.left, asked & set(node.left.ids)), (node.right, asked & set(node.right.ids))]


def _asks_aggregate(node: Aggregate, wanted: set[str]) -> list[tuple[Node, set[str]]]:
    calls = [call for agg_id, call in node.aggs if agg_id in wanted]
    return [(node.child, _uses(e for _, e in node.groups) | _uses(calls))]


def _asks_window(node: Window, wanted: set[str]) -> list[tuple[Node, set[str]]]:
    used = (wanted - {i for i, _ in node.funcs}) | set(node.partition)
    used |= _uses(function for func_id, function in node.funcs if func_id in wanted)
    return [(node.child, used & set(node.child.ids))]


def _asks_sort(node: Sort, wanted: set[str]) -> list[tuple[Node, set[str]]]:
    return [(node.child, wanted | _uses(node.keys))]


def _asks_limit(node: Limit, wanted: set[str]) -> list[tuple[Node, set[str]]]:
    return [(node.child, wanted)]


def _asks_set_op(node: SetOp, wanted: set[str]) -> list[tuple[Node, set[str]]]:
    return [(child, set(child.ids)) for child in node.inputs]


def _asks_expand(node: Expand, wanted: set[str]) -> list[tuple[Node, set[str]]]:
    return [(node.child, (wanted & set(node.child.ids)) | _uses(k for _, k in node.keys))]


def _asks_subquery_column(node: SubqueryColumn, wanted: set[str]) -> list[tuple[Node, set[str]]]:
    """The child's columns read, and of each input the columns the subquery names (by name:
    its text is qualified, ``*`` expanded)."""
    read = {c.name for c in node.expression.find_all(exp.Column) if c.table == OUTER}
    named = {c.name.lower() for c in node.expression.find_all(exp.Column) if c.table != OUTER}
    asked = (wanted | read) & set(node.child.ids)
    return [(node.child, asked)] + [
        (i, {c for c, n in zip(i.ids, names) if n.lower() in named} or set(i.ids[:1]))
        for i, names in zip(node.inputs, node.names)
    ]


_ASKS = {
    Filter: _asks_filter,
    Project: _asks_project,
    Join: _asks_join,
    Aggregate: _asks_aggregate,
    Window: _asks_window,
    Sort: _asks_sort,
    Limit: _asks_limit,
    SetOp: _asks_set_op,
    WholeQuery: _asks_set_op,
    Expand: _asks_expand,
    SubqueryColumn: _asks_subquery_column,
}


def _rebuild(node: Node, wanted: set[str], rebuilt: dict[int, Node]) -> Node:
    """``node`` producing only ``wanted`` (at least one column), over its rebuilt children."""
    make = _REBUILDS.get(type(node))
    if make is None:
        raise TypeError(f"cannot prune {type(node).__name__}")
    return make(node, wanted, lambda of: rebuilt[id(of)])


def _rebuild_scan(node: Scan, wanted: set[str], child) -> Node:
    filtered = _uses(node.filters)
    keep = _at_least_one(wanted, node)
    mapping = tuple((i, c) for i, c in node.mapping if i in keep | filtered)
    columns = tuple((i, t) for i, t in node.columns if i in keep)
    return replace(node, columns=columns, mapping=mapping)


def _rebuild_leaf(node: Node, wanted: set[str], child) -> Node:
    return node


def _rebuild_passing(node: Filter | Sort | Limit, wanted: set[str], child) -> Node:
    """A node whose columns are its child's."""
    inner = child(node.child)
    return replace(node, columns=inner.columns, child=inner)


def _keeping_columns(node: Node, kept: set[str], child, **fields) -> Node:
    """``node`` with only the columns whose ids are in ``kept``, over its child rebuilt, and
    ``fields`` replaced."""
    columns = tuple(c for c in node.columns if c[0] in kept)
    return replace(node, columns=columns, child=child(node.child), **fields)


def _rebuild_project(node: Project, wanted: set[str], child) -> Node:
    keep = _at_least_one(wanted, node)
    exprs = tuple((i, e) for i, e in node.exprs if i in keep)
    return _keeping_columns(node, keep, child, exprs=exprs)


def _rebuild_join(node: Join, wanted: set[str], child) -> Node:
    left, right = child(node.left), child(node.right)
    columns = left.columns if node.kind in ("semi", "anti") else left.columns + right.columns
    return replace(node, columns=columns, left=left, right=right)


def _rebuild_aggregate(node: Aggregate, wanted: set[str], child) -> Node:
    aggs = tuple((i, c) for i, c in node.aggs if i in wanted)
    if not node.groups and not aggs:
        aggs = node.aggs[:1]
    kept = {i for i, _ in node.groups} | {i for i, _ in aggs}
    return _keeping_columns(node, kept, child, aggs=aggs)


def _rebuild_window(node: Window, wanted: set[str], child) -> Node:
    inner = child(node.child)
    funcs = tuple((i, f) for i, f in node.funcs if i in wanted) or node.funcs[:1]
    kept = {i for i, _ in funcs}
    columns = inner.columns + tuple(c for c in node.columns if c[0] in kept)
    return replace(node, columns=columns, child=inner, funcs=funcs)


def _rebuild_set_op(node: SetOp, wanted: set[str], child) -> Node:
    return replace(node, inputs=tuple(child(c) for c in node.inputs))


def _rebuild_expand(node: Expand, wanted: set[str], child) -> Node:
    """The child's columns asked for, then every key, the id and the position: the sets'
    aggregate groups by all of them."""
    inner = child(node.child)
    added = node.columns[len(node.child.columns) :]
    return replace(node, columns=inner.columns + added, child=inner)


def _rebuild_subquery_column(node: SubqueryColumn, wanted: set[str], child) -> Node:
    inner = child(node.child)
    inputs = tuple(child(i) for i in node.inputs)
    names = tuple(
        tuple(dict(zip(old.ids, n))[c] for c in new.ids)
        for old, new, n in zip(node.inputs, inputs, node.names)
    )
    return replace(
        node, columns=inner.columns + node.columns[-1:], child=inner, inputs=inputs, names=names
    )


_REBUILDS = {
    Scan: _rebuild_scan,
    OneRow: _rebuild_leaf,
    Values: _rebuild_leaf,
    Filter: _rebuild_passing,
    Sort: _rebuild_passing,
    Limit: _rebuild_passing,
    Project: _rebuild_project,
    Join: _rebuild_join,
    Aggregate: _rebuild_aggregate,
    Window: _rebuild_window,
    SetOp: _rebuild_set_op,
    WholeQuery: _rebuild_set_op,
    Expand: _rebuild_expand,
    SubqueryColumn: _rebuild_subquery_column,
}


def _merged(node: Project) -> Project:
    """A projection of a projection, as one."""
    inner = dict(node.child.exprs)
    exprs = tuple((i, substitute(e, inner)) for i, e in node.exprs)
    return replace(node, child=node.child.child, exprs=exprs)


def _trimmed(node: Node, wanted: set[str]) -> Node:
    """``node`` with a projection on top dropping what only it read (a join's keys, a
    filter's columns), so no exchange above carries them."""
    keep = [c for c in node.columns if c[0] in wanted]
    if not keep or len(keep) == len(node.columns):
        return node
    return Project(tuple(keep), node.origin, node, tuple((i, col(i)) for i, _ in keep))


def _at_least_one(wanted: set[str], node: Node) -> set[str]:
    kept = wanted & set(node.ids)
    if kept:
        return kept
    if isinstance(node, Scan):
        sizes = {i: node.table.column(c).listed_bytes for i, c in node.mapping}
        return {min(node.ids, key=lambda i: (sizes.get(i, 0), i))}
    return {node.ids[0]}
