"""The name Spark gives an unaliased column: ``sum(l_quantity)``, ``count(1)``, ``avg(x)``.

Spark names such a column after the expression's SQL as it prints it (its ``prettyName`` and
its arguments, columns unqualified), and a script reads the name back (``row["sum(x)"]``,
``df.columns``), so Tidal's session gives the same names where sqlframe would give
``sum__x__``.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.qualify import qualify

__all__ = ["auto_alias", "display_name", "spark_name", "unresolved_column"]

_PRETTY = {
    "mean": "avg",
    "countDistinct": "count",
    "count_distinct": "count",
    "sumDistinct": "sum",
    "sum_distinct": "sum",
    "std": "stddev",
    "stddev_samp": "stddev",
    "ceiling": "ceil",
    "substr": "substring",
    "lcase": "lower",
    "ucase": "upper",
}
_DISTINCT = {"countDistinct", "count_distinct", "sumDistinct", "sum_distinct"}


def auto_alias(expression: exp.Expression, function: str) -> bool:
    """Whether ``expression`` carries sqlframe's own alias for ``function``'s result."""
    return (
        isinstance(expression, exp.Alias)
        and re.fullmatch(r"[a-z_]+__\w*__", expression.alias or "") is not None
    )


def spark_name(expression: exp.Expression, function: str) -> str:
    """``function``'s result ``expression`` as Spark names it."""
    pretty = _PRETTY.get(function, function).lower()
    arguments = [a for a in _arguments(expression)]
    if pretty == "count" and (not arguments or isinstance(arguments[0], exp.Star)):
        return "count(1)"
    text = ", ".join(_text(a) for a in arguments)
    if function in _DISTINCT:
        text = f"DISTINCT {text}"
    return f"{pretty}({text})"


def display_name(expression: exp.Expression) -> str:
    """The name Spark shows for a selected ``expression``: its alias, else its SQL as Spark
    prints it."""
    if isinstance(expression, exp.Alias):
        return expression.alias
    return _text(expression)


def _arguments(expression: exp.Expression) -> list[exp.Expression]:
    if isinstance(expression, exp.Anonymous):
        return list(expression.expressions)
    found = []
    for key in expression.arg_types:
        value = expression.args.get(key)
        if isinstance(value, exp.Distinct):
            found.extend(value.expressions)
        elif isinstance(value, list):
            found.extend(v for v in value if isinstance(v, exp.Expression))
        elif isinstance(value, exp.Expression):
            found.append(value)
    return found


def _text(expression: exp.Expression) -> str:
    """An argument as Spark prints it: a column by its name, a literal by its value."""
    if isinstance(expression, exp.Column):
        return expression.name
    if isinstance(expression, exp.Literal):
        return expression.this
    if isinstance(expression, exp.Star):
        return "*"
    if isinstance(expression, exp.Boolean):
        return "true" if expression.this else "false"
    if isinstance(expression, exp.Null):
        return "NULL"
    if isinstance(expression, exp.Func):
        return spark_name(expression, expression.sql_name().lower())
    if isinstance(expression, exp.Binary):
        return f"({_text(expression.left)} {_operator(expression)} {_text(expression.right)})"
    if isinstance(expression, exp.Paren):
        return _text(expression.this)
    return expression.sql(dialect="spark")


def _operator(expression: exp.Binary) -> str:
    return {
        exp.Add: "+",
        exp.Sub: "-",
        exp.Mul: "*",
        exp.Div: "/",
        exp.Mod: "%",
        exp.EQ: "=",
        exp.NEQ: "!=",
        exp.GT: ">",
        exp.GTE: ">=",
        exp.LT: "<",
        exp.LTE: "<=",
        exp.And: "AND",
        exp.Or: "OR",
    }.get(type(expression), "?")


_UNRESOLVED = re.compile(r"Column '\"?([^'\"]+)\"?' could not be resolved")


def unresolved_column(expression: exp.Expression, schema) -> str | None:
    """The first column ``expression`` names that its tables do not have, if any (sqlglot
    qualifies it against the session's tables)."""
    try:
        qualify(
            expression.copy(),
            schema=schema,
            dialect="spark",
            validate_qualify_columns=True,
            quote_identifiers=False,
            identify=False,
        )
    except OptimizeError as error:
        found = _UNRESOLVED.search(str(error))
        if found is None or found.group(1) in _lambda_parameters(expression):
            return None  # sqlglot does not see a lambda's parameters (transform(a, x -> x))
        return found.group(1)
    return None


def _lambda_parameters(expression: exp.Expression) -> set[str]:
    return {p.name for lam in expression.find_all(exp.Lambda) for p in lam.expressions}
