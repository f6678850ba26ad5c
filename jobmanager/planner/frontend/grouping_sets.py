"""GROUP BY with ROLLUP, CUBE or GROUPING SETS, planned as Spark plans it.

Each row is expanded once per grouping set (``Expand``): the keys the set lacks become NULL,
and a grouping id tells the sets apart (bit ``n - 1 - i`` set where key ``i`` is absent, the
first key the highest bit, as Spark numbers them). The aggregate then groups by the keys and
the id like any other: its partial half runs before the exchange, its hash edge keyed by them,
so the adaptive parallelism and skew handling see an ordinary aggregate. Aggregate calls read
the row's own columns, never the nulled keys: ``count(dept)`` under ``ROLLUP(dept)`` counts
the department names even in the grand total's row. ``GROUPING(k)`` and ``GROUPING_ID(...)``
read bits of the id. Two equal sets (``GROUPING SETS ((a), (a))``) each give their groups, as
in Spark: a position column keeps them apart.
"""

from __future__ import annotations

from sqlglot import exp

from jobmanager.errors import SqlError
from jobmanager.planner.expressions import is_aggregate, rewrite_children, type_of
from jobmanager.planner.frontend.scope import position
from jobmanager.planner.logical import Expand, IdAllocator, Node, col, paren
from jobmanager.planner.types import SqlType

__all__ = ["expand", "grouping_sets", "over_sets"]

Sets = list[tuple[int, ...]]


def grouping_sets(group: exp.Group) -> tuple[list[exp.Expression], Sets] | None:
    """The keys (each once, in the order the clause first names them) and each grouping set
    as the positions of its keys; None for a plain GROUP BY."""
    parts = list(group.expressions)
    if group.args.get("rollup"):
        parts = [exp.Rollup(expressions=parts)]
    elif group.args.get("cube"):
        parts = [exp.Cube(expressions=parts)]
    elif not any(isinstance(p, (exp.Rollup, exp.Cube, exp.GroupingSets)) for p in parts):
        return None
    keys: list[exp.Expression] = []

    def index(expression: exp.Expression) -> int:
        for i, key in enumerate(keys):
            if key == expression:
                return i
        keys.append(expression)
        return len(keys) - 1

    sets: Sets = [()]
    for part in parts:
        options = [tuple(index(e) for e in option) for option in _options(part)]
        sets = [tuple(dict.fromkeys(s + o)) for s in sets for o in options]
    return keys, sets


def _options(part: exp.Expression) -> list[list[exp.Expression]]:
    """The key lists one part of a GROUP BY contributes, one of which each set takes."""
    if isinstance(part, exp.Rollup):
        members = [_members(e) for e in part.expressions]
        return [sum(members[:n], []) for n in range(len(members), -1, -1)]
    if isinstance(part, exp.Cube):
        cubes: list[list[exp.Expression]] = [[]]
        for member in reversed([_members(e) for e in part.expressions]):
            cubes = [member + c for c in cubes] + cubes
        return cubes
    if isinstance(part, exp.GroupingSets):
        return [_members(e) for e in part.expressions]
    return [[part]]


def _members(expression: exp.Expression) -> list[exp.Expression]:
    if isinstance(expression, exp.Tuple):
        return list(expression.expressions)
    if isinstance(expression, exp.Paren):
        return _members(expression.this)
    return [expression]


def expand(
    node: Node, keys: list[exp.Expression], sets: Sets, ids: IdAllocator, origin: str
) -> Expand:
    """``node``'s rows once per set, with the keys (bound over ``node``) and the id."""
    types = node.typer()
    key_ids = [ids.new(k.name if isinstance(k, exp.Column) else "_key") for k in keys]
    gid = ids.new("_gid")
    pos = ids.new("_gpos") if len(set(sets)) < len(sets) else None
    columns = node.columns + tuple((i, type_of(k, types)) for i, k in zip(key_ids, keys))
    columns += ((gid, SqlType("bigint")),) + (((pos, SqlType("int")),) if pos else ())
    return Expand(columns, origin, node, tuple(zip(key_ids, keys)), tuple(sets), gid, pos)


def over_sets(expression: exp.Expression, node: Expand) -> exp.Expression:
    """A SELECT, HAVING or ORDER BY expression over the expanded rows: GROUPING calls read
    the id, and each key outside an aggregate call reads its nulled column."""
    keys = [k for _, k in node.keys]
    grouped = _replace(expression, lambda e: _grouping_call(e, keys, node.gid))
    pairs = [(k, i) for i, k in node.keys]
    return _replace(grouped, lambda e: next((col(i) for k, i in pairs if e == k), None))


def _replace(expression: exp.Expression, rule) -> exp.Expression:
    """``expression`` with each subexpression ``rule`` gives a value for replaced by it, the
    outermost first; aggregate calls (and their FILTER) are left whole."""
    found = rule(expression)
    if found is not None:
        return found
    if _is_call(expression):
        return expression.copy()
    return rewrite_children(expression.copy(), lambda child: _replace(child, rule))


def _is_call(expression: exp.Expression) -> bool:
    if isinstance(expression, exp.Filter):
        return is_aggregate(expression.this)
    return is_aggregate(expression) and not isinstance(expression.parent, exp.Window)


def _grouping_call(
    expression: exp.Expression, keys: list[exp.Expression], gid: str
) -> exp.Expression | None:
    if not isinstance(expression, (exp.Grouping, exp.GroupingId)):
        return None
    arguments = list(expression.expressions)
    if isinstance(expression, exp.GroupingId) and (not arguments or arguments == keys):
        return col(gid)
    positions = []
    for argument in arguments:
        match = next((i for i, key in enumerate(keys) if key == argument), None)
        if match is None:
            raise SqlError(
                f"{expression.sql(dialect='spark')}: "
                f"{argument.sql(dialect='spark')} is not a grouping key",
                *position(expression),
            )
        positions.append(match)
    bits = [_bit(gid, len(keys) - 1 - p) for p in positions]
    if isinstance(expression, exp.Grouping):
        if len(bits) != 1:
            raise SqlError(
                f"{expression.sql(dialect='spark')}: grouping() takes one key",
                *position(expression),
            )
        return exp.Cast(this=bits[0], to=exp.DataType.build("TINYINT"))
    total = None
    for n, bit in enumerate(bits):
        shifted = exp.func("shiftleft", bit, exp.Literal.number(len(bits) - 1 - n))
        total = shifted if total is None else exp.Add(this=total, expression=shifted)
    return exp.Cast(this=paren(total), to=exp.DataType.build("BIGINT"))


def _bit(gid: str, shift: int) -> exp.Expression:
    shifted = exp.func("shiftright", col(gid), exp.Literal.number(shift))
    return paren(exp.BitwiseAnd(this=shifted, expression=exp.Literal.number(1)))
