"""The logical plan: relational operators over columns with unique names.

Every column a plan produces has an id unique in the whole query (``l_orderkey``,
``l_orderkey_2`` for a second scan of lineitem, ``_g0`` for a computed group key), so an
expression names a column without saying which relation it came from, two sides of a join never
clash, and a piece of the plan cut out into a vertex can be rendered as SQL over views whose
columns carry those names. Expressions are sqlglot trees whose columns are ids (``col(id)``).

Nodes are immutable and compared by identity: a plan is a DAG, and a node two parents share (a
CTE used twice) is one vertex with two consumers. Join kinds are Spark's (inner, left, right,
full, semi, anti, cross) plus ``single``: the right side is one row at most (an uncorrelated
scalar subquery), appended to every left row, NULL when it has none.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Iterator, Sequence

from sqlglot import exp

from jobmanager.planner.catalog import Table
from jobmanager.planner.types import UNKNOWN, SqlType

__all__ = [
    "Aggregate",
    "Column",
    "Expand",
    "Filter",
    "IdAllocator",
    "Join",
    "Limit",
    "Node",
    "OneRow",
    "Project",
    "Scan",
    "SetOp",
    "Sort",
    "SubqueryColumn",
    "Values",
    "WholeQuery",
    "Window",
    "col",
    "conjoin",
    "conjuncts",
    "nodes_of",
    "paren",
    "references",
    "substitute",
    "with_children",
]

Column = tuple[str, SqlType]
JOIN_KINDS = ("inner", "cross", "left", "right", "full", "semi", "anti", "single")


def col(column_id: str) -> exp.Column:
    return exp.Column(this=exp.to_identifier(column_id, quoted=True))


def paren(expression: exp.Expression) -> exp.Expression:
    """``expression`` safe to put inside another: sqlglot prints trees as built, without
    adding the parentheses an operator's precedence needs (``(a + b) * c``)."""
    atomic = (
        exp.Column,
        exp.Literal,
        exp.Null,
        exp.Boolean,
        exp.Paren,
        exp.Func,
        exp.Cast,
        exp.Window,
        exp.Subquery,
    )
    return expression if isinstance(expression, atomic) else exp.Paren(this=expression)


def references(expression: exp.Expression) -> set[str]:
    """The ids of the columns ``expression`` reads."""
    return {c.name for c in expression.find_all(exp.Column)}


def substitute(expression: exp.Expression, mapping: dict[str, exp.Expression]) -> exp.Expression:
    """``expression`` with each column whose id ``mapping`` has replaced by a copy of its value."""

    def replace(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and node.name in mapping:
            return paren(mapping[node.name].copy())
        return node

    return expression.copy().transform(replace, copy=False)


def conjuncts(expression: exp.Expression | None) -> list[exp.Expression]:
    if expression is None:
        return []
    if isinstance(expression, exp.And):
        return conjuncts(expression.left) + conjuncts(expression.right)
    if isinstance(expression, exp.Paren):
        return conjuncts(expression.this)
    return [expression]


def conjoin(parts: Iterable[exp.Expression]) -> exp.Expression | None:
    parts = list(parts)
    if not parts:
        return None
    return exp.and_(*[p.copy() for p in parts], copy=False) if len(parts) > 1 else parts[0]


class IdAllocator:
    """Unique column ids, readable: a column keeps its name the first time, then ``_2``..."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._generated = 0

    def new(self, wanted: str | None = None) -> str:
        base = (wanted or "").lower()
        if not base or base.startswith("_col_") or not _plain(base):
            self._generated += 1
            base = f"_c{self._generated}"
        candidate, n = base, 2
        while candidate in self._used:
            candidate, n = f"{base}_{n}", n + 1
        self._used.add(candidate)
        return candidate


def _plain(name: str) -> bool:
    return name.replace("_", "a").isalnum() and not name[0].isdigit() and len(name) <= 40


@dataclass(frozen=True, eq=False)
class Node:
    """``columns``: what it produces, in order; ``origin``: the part of the user's query it
    came from, as text (for explain)."""

    columns: tuple[Column, ...]
    origin: str

    @property
    def children(self) -> tuple[Node, ...]:
        return ()

    @property
    def ids(self) -> list[str]:
        return [name for name, _ in self.columns]

    def type_of(self, column_id: str) -> SqlType:
        return next(kind for name, kind in self.columns if name == column_id)

    def typer(self):
        """The type of each of its columns by id, ``unknown`` for an id it does not have."""
        types = dict(self.columns)
        return lambda column_id: types.get(column_id, UNKNOWN)


@dataclass(frozen=True, eq=False)
class Scan(Node):
    """Reads ``table``; ``mapping`` pairs each output id with the column as the files spell it;
    ``filters`` hold for every row it gives (pushed into the scan)."""

    table: Table
    alias: str
    mapping: tuple[tuple[str, str], ...]
    filters: tuple[exp.Expression, ...] = ()


@dataclass(frozen=True, eq=False)
class OneRow(Node):
    """A SELECT without FROM: one row of no columns."""


@dataclass(frozen=True, eq=False)
class Values(Node):
    rows: tuple[tuple[exp.Expression, ...], ...] = ()


@dataclass(frozen=True, eq=False)
class Filter(Node):
    child: Node
    condition: exp.Expression

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)


@dataclass(frozen=True, eq=False)
class Project(Node):
    child: Node
    exprs: tuple[tuple[str, exp.Expression], ...]

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)


@dataclass(frozen=True, eq=False)
class Join(Node):
    left: Node
    right: Node
    kind: str
    condition: exp.Expression | None = None

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)


@dataclass(frozen=True, eq=False)
class Aggregate(Node):
    """GROUP BY ``groups`` (ids with their expressions), computing ``aggs`` (aggregate calls
    over the child's columns). No groups: one row, even from no input."""

    child: Node
    groups: tuple[tuple[str, exp.Expression], ...]
    aggs: tuple[tuple[str, exp.Expression], ...]

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)


@dataclass(frozen=True, eq=False)
class Expand(Node):
    """Each row of ``child`` once per grouping set: its own columns, then ``keys`` (ids with
    their expressions over the child), NULL where the set lacks them, then the grouping id
    ``gid`` (bit ``n - 1 - i`` set where the set lacks key ``i``, as Spark numbers them) and,
    where two sets are the same, the set's position ``pos`` to keep their groups apart."""

    child: Node
    keys: tuple[tuple[str, exp.Expression], ...]
    sets: tuple[tuple[int, ...], ...]
    gid: str
    pos: str | None = None

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)


@dataclass(frozen=True, eq=False)
class Window(Node):
    """Window functions sharing ``partition`` (ids of the child's columns): the child's
    columns, then one per function."""

    child: Node
    partition: tuple[str, ...]
    funcs: tuple[tuple[str, exp.Expression], ...]

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)


@dataclass(frozen=True, eq=False)
class Sort(Node):
    """ORDER BY ``keys`` (``exp.Ordered`` over ids), then OFFSET/LIMIT if given."""

    child: Node
    keys: tuple[exp.Ordered, ...]
    limit: int | None = None
    offset: int = 0

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)


@dataclass(frozen=True, eq=False)
class Limit(Node):
    child: Node
    limit: int | None
    offset: int = 0

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)


@dataclass(frozen=True, eq=False)
class SetOp(Node):
    """UNION, INTERSECT or EXCEPT (``distinct`` False: the ALL form) of children whose
    columns, by position, become this node's (already widened to one type each)."""

    kind: str
    distinct: bool
    inputs: tuple[Node, ...] = field(default=())

    @property
    def children(self) -> tuple[Node, ...]:
        return self.inputs


@dataclass(frozen=True, eq=False)
class WholeQuery(Node):
    """A part of the query the planner does not cut, run whole by Spark in one task:
    ``query`` (a sqlglot tree in Spark's dialect) names its ``inputs`` as the tables
    ``placeholders`` (each input's columns under ``names``); ``reason``: why it runs whole, for
    explain."""

    query: exp.Expression | None = None
    inputs: tuple[Node, ...] = ()
    placeholders: tuple[str, ...] = ()
    names: tuple[tuple[str, ...], ...] = ()
    reason: str = ""

    @property
    def children(self) -> tuple[Node, ...]:
        return self.inputs


@dataclass(frozen=True, eq=False)
class SubqueryColumn(Node):
    """``child``'s columns and ``column_id``: a subquery expression (EXISTS, IN or a scalar
    subquery, with any correlation) that Spark evaluates for each row in the task, as its own
    plan does (an existence join, a decorrelation). ``expression`` reads the child's columns
    as ``OUTER.id`` and its ``inputs``, whole, as the tables ``placeholders`` (each input's
    columns under ``names``)."""

    child: Node | None = None
    column_id: str = ""
    expression: exp.Expression | None = None
    inputs: tuple[Node, ...] = ()
    placeholders: tuple[str, ...] = ()
    names: tuple[tuple[str, ...], ...] = ()

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child, *self.inputs)


OUTER = "tidal_outer"  # the alias a SubqueryColumn's expression reads its row's columns under


def with_children(node: Node, children: Sequence[Node]) -> Node:
    """``node`` over ``children`` in place of its own, in the order ``children`` gives them."""
    if isinstance(node, SubqueryColumn):
        return replace(node, child=children[0], inputs=tuple(children[1:]))
    if isinstance(node, (SetOp, WholeQuery)):
        return replace(node, inputs=tuple(children))
    if isinstance(node, Join):
        return replace(node, left=children[0], right=children[1])
    return replace(node, child=children[0]) if children else node


def nodes_of(root: Node) -> Iterator[Node]:
    """Every node of the DAG once, children before parents."""
    seen: set[int] = set()
    order: list[Node] = []
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(node.children))
    return iter(order)
