"""A part of the query the planner cannot cut runs whole, as Spark SQL in one task.

The translator plans what it knows operator by operator; a construct it does not (yet) plan
must not make a query Spark answers fail. So the smallest enclosing query that reads nothing
of the queries around it becomes a ``WholeQuery``: its own text, each table it reads a
``Scan`` of the catalogue's table and each CTE from outside it the CTE's one translation
(planned and cut as usual, shared with every other reader), run by Spark in one task of one
vertex, as Spark would run it. ``tidal explain`` shows the vertex with the reason.

The output's types are sqlglot's reading of the text where it knows them surely (not
decimals, whose precision Spark's rules set), else unknown, as for any expression the
planner's own typer cannot tell.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types

from jobmanager.planner.frontend.parse import projection_name
from jobmanager.planner.logical import IdAllocator, WholeQuery
from jobmanager.planner.types import UNKNOWN, SqlType, parse_type

if TYPE_CHECKING:
    from jobmanager.planner.frontend.relations import Relation, Relations

__all__ = ["output_types", "own_aliases", "reads_enclosing", "tables_as_inputs", "whole_query"]

PLACEHOLDER = "__tidal_whole_{}"
_SURE_TYPES = (
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "double",
    "float",
    "string",
    "boolean",
    "date",
    "timestamp",
)
_ORIGIN_LENGTH = 160


def whole_query(
    query: exp.Expression, reason: str, relations: Relations, ids: IdAllocator
) -> Relation:
    """``query`` (a qualified query or set operation) as one ``WholeQuery``."""
    from jobmanager.planner.frontend.relations import Relation

    tree = query.copy()
    inputs, placeholders, names = tables_as_inputs(tree, relations)
    output = output_names(tree)
    types = output_types(query, relations, len(output))
    columns = tuple((ids.new(name), kind) for name, kind in zip(output, types))
    text = _as_written(query)
    origin = text if len(text) <= _ORIGIN_LENGTH else text[: _ORIGIN_LENGTH - 3] + "..."
    node = WholeQuery(
        columns,
        f"{origin} (run whole by Spark: {reason})",
        tree,
        inputs,
        placeholders,
        names,
        reason,
    )
    return Relation(node, tuple(output))


def tables_as_inputs(
    tree: exp.Expression, relations: Relations
) -> tuple[tuple, tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """Each table ``tree`` reads (a CTE from outside it, or the catalogue's) replaced in place
    by a placeholder under the same alias: the inputs (one per table, however often read),
    their placeholders and their columns' names."""
    inner = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    inputs, placeholders, names, index = [], [], [], {}
    for table in list(tree.find_all(exp.Table)):
        key = table.name.lower()
        if not key or key in inner or not isinstance(table.this, exp.Identifier):
            continue
        if key not in index:
            node, columns = relations.read(table)
            index[key] = len(inputs)
            inputs.append(node)
            names.append(tuple(columns))
            placeholders.append(PLACEHOLDER.format(len(placeholders)))
        alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(table.name))
        table.replace(exp.Table(this=exp.to_identifier(placeholders[index[key]]), alias=alias))
    return tuple(inputs), tuple(placeholders), tuple(names)


def own_aliases(query: exp.Expression) -> set[str]:
    """The names relations inside ``query`` go by (lower case)."""
    own = {t.alias_or_name.lower() for t in query.find_all(exp.Table)}
    own |= {
        s.alias_or_name.lower() for s in query.find_all(exp.Subquery, exp.Values) if s.alias_or_name
    }
    own |= {
        u.alias_or_name.lower() for u in query.find_all(exp.Unnest, exp.Lateral) if u.alias_or_name
    }
    return own


def _as_written(query: exp.Expression) -> str:
    """``query``'s text without the names qualification gave unnamed columns (``_col_1``)."""

    def unnamed(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Alias) and node.alias.startswith("_col_"):
            return node.this
        return node

    return query.copy().transform(unnamed, copy=False).sql(dialect="spark")


def output_names(query: exp.Expression) -> list[str]:
    """The names of a query's columns: its first SELECT's, as a set operation's are."""
    while not isinstance(query, exp.Select):
        query = query.this
    return [projection_name(p) for p in query.expressions]


def reads_enclosing(query: exp.Expression) -> bool:
    """Whether ``query`` reads a column of a query around it: a column qualified by a name no
    relation inside it has (the tree is qualified: every column names its relation)."""
    own = own_aliases(query)
    lambdas = {p.name.lower() for lam in query.find_all(exp.Lambda) for p in lam.expressions}
    return any(
        c.table and c.table.lower() not in own and c.name.lower() not in lambdas
        for c in query.find_all(exp.Column)
    )


def output_types(query: exp.Expression, relations: Relations, width: int) -> list[SqlType]:
    schema = relations.schema(query)
    try:
        annotated = annotate_types(query.copy(), schema=schema, dialect="spark")
    except (SqlglotError, KeyError, ValueError, TypeError, AttributeError):
        return [UNKNOWN] * width
    while not isinstance(annotated, exp.Select):
        annotated = annotated.this
    types = []
    for projection in annotated.expressions:
        kind = projection.type
        text = kind.sql(dialect="spark") if isinstance(kind, exp.DataType) else ""
        parsed = parse_type(text) if text else UNKNOWN
        types.append(
            parsed
            if parsed.name in _SURE_TYPES and not isinstance(query, exp.SetOperation)
            else UNKNOWN
        )
    return types + [UNKNOWN] * (width - len(types))
