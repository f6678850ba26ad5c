"""From the user's text to a qualified sqlglot tree, or an error that says where it went wrong.

sqlglot reads Spark's dialect and qualifies the query against the catalogue's schemas: every
column gets its table's alias, ``*`` expands, ``GROUP BY 1`` and aliases in ``GROUP BY`` and
``ORDER BY`` resolve, ``USING`` becomes ``ON``. Its optimizer goes no further here: the rules
that would unnest subqueries rewrite ``EXISTS`` with a residual condition into an array
aggregate and anti joins into outer joins, and the rest is the planner's own
(``jobmanager.planner.frontend.translate`` on).

Each mistake comes back in Tidal's words, at submit, before anything runs: a syntax error with
its line, column and token; an unknown table with the known ones; an unknown or ambiguous
column with the closest match or the tables that have it.
"""

from __future__ import annotations

import difflib
import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError, TokenError
from sqlglot.optimizer.qualify import qualify

from jobmanager.errors import (
    SqlSyntaxError,
    UnknownColumnError,
    UnknownTableError,
    UnsupportedSqlError,
)
from jobmanager.planner.catalog import Catalog
from jobmanager.planner.frontend.scope import position

__all__ = ["SPARK_NAME", "parse", "projection_name", "qualified"]

SPARK_NAME = "tidal_spark_name"  # meta key: the name Spark gives an unaliased projection
_UNRESOLVED = re.compile(r"Column '(?P<name>[^']+)' could not be resolved")
_UNKNOWN = re.compile(r"Unknown column: (?P<name>\S+)")
_QUERY_TYPES = (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Subquery)


def parse(query: str) -> exp.Expression:
    """One query in Spark's dialect."""
    try:
        statements = [s for s in sqlglot.parse(query, read="spark") if s is not None]
    except ParseError as error:
        first = error.errors[0] if error.errors else {}
        token = first.get("highlight") or ""
        what = first.get("description") or str(error)
        column = first.get("col")
        if column is not None:  # sqlglot notes where the token ends
            column = max(1, column - len(token) + 1)
        raise SqlSyntaxError(
            f"syntax error at {token!r}: {_plain(what)}", first.get("line"), column
        ) from None
    except TokenError as error:
        raise SqlSyntaxError(f"syntax error: {error}") from None
    if not statements:
        raise SqlSyntaxError("the query is empty")
    if len(statements) > 1:
        raise UnsupportedSqlError(
            f"one query at a time: this text holds {len(statements)} statements"
        )
    statement = statements[0]
    if not isinstance(statement, _QUERY_TYPES):
        raise UnsupportedSqlError(
            f"only queries run here, not {statement.key.upper()} "
            "statements; write a result with output=... instead"
        )
    return statement


def qualified(tree: exp.Expression, catalog: Catalog) -> exp.Expression:
    """``tree`` qualified in place against the tables it reads."""
    _check_tables(tree, catalog)
    _remember_spark_names(tree)
    schema = {}
    for table in tree.find_all(exp.Table):
        if catalog.has(table.name) and table.name.lower() not in schema:
            described = catalog.table(table.name)
            schema[table.name.lower()] = {
                c.name.lower(): str(c.type) if c.type.is_known else "string"
                for c in described.columns
            }
    try:
        return qualify(
            tree,
            schema=schema,
            dialect="spark",
            expand_stars=True,
            validate_qualify_columns=True,
            identify=False,
        )
    except OptimizeError as error:
        raise _column_error(str(error), tree, schema) from None


def projection_name(projection: exp.Expression) -> str:
    """The name Spark gives a SELECT list item: its alias, its column's name, or its text."""
    inner = projection.this if isinstance(projection, exp.Alias) else projection
    if (
        isinstance(projection, exp.Alias)
        and projection.alias.startswith("_col_")
        and SPARK_NAME in inner.meta
    ):
        return inner.meta[SPARK_NAME]
    return projection.alias_or_name


def _check_tables(tree: exp.Expression, catalog: Catalog) -> None:
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        name = table.name
        if not name or name.lower() in ctes or catalog.has(name):
            if table.args.get("db"):
                raise UnsupportedSqlError(
                    f"table {table.sql(dialect='spark')}: database names "
                    "are not supported; name tables as given"
                )
            continue
        close = catalog.closest(name)
        hint = f"; did you mean {close!r}?" if close else ""
        known = ", ".join(catalog.names) or "none (pass tables={...} or --table name=path)"
        raise UnknownTableError(
            f"unknown table {name!r}{hint} The known tables are {known}", *position(table)
        )


def _remember_spark_names(tree: exp.Expression) -> None:
    """Spark names an unaliased projection by its text (``sum(l_quantity)``); qualification
    would call it ``_col_5``, so the text is kept on the expression before."""
    for select in tree.find_all(exp.Select):
        for projection in select.expressions:
            if not isinstance(projection, (exp.Alias, exp.Column, exp.Star)):
                projection.meta[SPARK_NAME] = projection.sql(
                    dialect="spark", normalize_functions="lower"
                )


def _column_error(message: str, tree: exp.Expression, schema: dict) -> Exception:
    match = _UNRESOLVED.search(message) or _UNKNOWN.search(message)
    if match is None:
        return UnsupportedSqlError(f"the query cannot be analysed: {message}")
    name = match.group("name").lower()
    line, column = _position_of(tree, name)
    having = sorted(
        {
            table.alias_or_name
            for table in tree.find_all(exp.Table)
            if name in schema.get(table.name.lower(), {})
        }
    )
    if len(having) > 1:
        return UnknownColumnError(
            f"ambiguous column {name!r}: tables {', '.join(having)} all "
            f"have it; qualify it, e.g. {having[0]}.{name}",
            line,
            column,
        )
    known = sorted({c for columns in schema.values() for c in columns})
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return UnknownColumnError(f"unknown column {name!r}{hint}", line, column)


def _position_of(tree: exp.Expression, name: str) -> tuple[int | None, int | None]:
    for found in tree.find_all(exp.Column):
        if found.name.lower() == name:
            return position(found.this)
    return None, None


def _plain(description: str) -> str:
    """sqlglot's words for what it expected, without its class names."""
    text = re.sub(r"<class 'sqlglot\.expressions\.(?:\w+\.)*(\w+)'>", r"\1", description)
    return text.replace("Required keyword: 'this' missing for", "expected an expression after")
