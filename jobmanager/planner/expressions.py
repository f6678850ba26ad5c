"""What an expression gives, by Spark's rules, and the type errors Spark's analysis would raise.

The planner types every expression it moves between vertices: a join key hashed on both sides
must be one type on both (``shuffle.hashing`` hashes a decimal by its stored bytes), a set
operation's inputs are widened to one type per column, and the final half of a split aggregate
casts back to what Spark's own aggregate gives. Expressions the planner does not know (a
function it has no rule for) are ``unknown``: never refused, and never split where the type
would decide the answer.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from jobmanager.errors import SqlTypeError
import jobmanager.planner.types as t
from jobmanager.planner.types import SqlType

__all__ = [
    "AGGREGATE_NAMES",
    "GENERATORS",
    "check_condition",
    "is_aggregate",
    "is_generator",
    "rewrite_children",
    "spark_sql",
    "type_of",
]

# a generator's rows replace its input row's: those sqlglot parses as their own kinds, and those
# it parses as anonymous calls, by name
GENERATORS = (exp.Explode, exp.ExplodeOuter, exp.Inline, exp.Stack, exp.Unnest)
_GENERATOR_NAMES = {
    "explode",
    "explode_outer",
    "posexplode",
    "posexplode_outer",
    "inline",
    "inline_outer",
    "stack",
    "json_tuple",
}


def rewrite_children(
    expression: exp.Expression, rewrite: Callable[[exp.Expression], exp.Expression]
) -> exp.Expression:
    """``expression`` with each child (an argument that is an expression, or one in an
    argument's list) set, in place, to ``rewrite(child)``: one step of a rewrite that decides
    for itself where to go deeper and where to stop."""
    for key, value in list(expression.args.items()):
        if isinstance(value, exp.Expression):
            expression.set(key, rewrite(value))
        elif isinstance(value, list):
            expression.set(key, [rewrite(v) if isinstance(v, exp.Expression) else v for v in value])
    return expression


def is_generator(node: exp.Expression) -> bool:
    """Whether ``node`` calls a generator (``EXPLODE``, ``POSEXPLODE``, ``INLINE``, ``STACK``,
    ``JSON_TUPLE``, ...)."""
    return isinstance(node, GENERATORS) or (
        isinstance(node, exp.Anonymous) and node.name.lower() in _GENERATOR_NAMES
    )


AGGREGATE_NAMES = {
    "every",
    "some",
    "bool_and",
    "bool_or",
    "any_value",
    "count_if",
    "collect_set",
    "median",
    "mode",
    "kurtosis",
    "skewness",
}
_STRING_FUNCTIONS = (
    exp.Substring,
    exp.Upper,
    exp.Lower,
    exp.Trim,
    exp.Concat,
    exp.ConcatWs,
    exp.Initcap,
    exp.Left,
    exp.Right,
    exp.Pad,
    exp.RegexpReplace,
    exp.RegexpExtract,
    exp.Replace,
    exp.Reverse,
    exp.Repeat,
)
_INT_FUNCTIONS = (
    exp.Extract,
    exp.Year,
    exp.Month,
    exp.Day,
    exp.Quarter,
    exp.DayOfWeek,
    exp.DayOfMonth,
    exp.DayOfYear,
    exp.WeekOfYear,
    exp.Length,
    exp.DateDiff,
    exp.StrPosition,
)
_DOUBLE_FUNCTIONS = (
    exp.Sqrt,
    exp.Ln,
    exp.Log,
    exp.Exp,
    exp.Pow,
    exp.Stddev,
    exp.StddevPop,
    exp.StddevSamp,
    exp.Variance,
    exp.VariancePop,
)
_BOOLEAN = (
    exp.Predicate,
    exp.Not,
    exp.And,
    exp.Or,
    exp.Xor,
    exp.Exists,
    exp.Boolean,
    exp.LogicalAnd,
    exp.LogicalOr,
)
_RANKING = (exp.RowNumber, exp.Rank, exp.DenseRank, exp.Ntile)
_ARITHMETIC = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%"}
_TEMPORAL = ("date", "timestamp", "timestamp_ntz")


def is_aggregate(node: exp.Expression) -> bool:
    """An aggregate call (not a window function's own call, which the caller tells apart)."""
    if isinstance(node, exp.AggFunc):
        return True
    if isinstance(node, exp.Anonymous):
        return node.name.lower() in AGGREGATE_NAMES
    return False


def type_of(node: exp.Expression, column: Callable[[str], SqlType]) -> SqlType:
    """``node``'s type; ``column(id)`` gives a column's. Raises ``SqlTypeError`` where Spark's
    analysis would refuse the expression."""
    return _Typer(column).of(node)


def check_condition(node: exp.Expression, column: Callable[[str], SqlType], clause: str) -> None:
    """A WHERE, HAVING or ON condition must be a boolean (Spark: FILTER_NOT_BOOLEAN)."""
    kind = type_of(node, column)
    if kind.is_known and kind.name not in ("boolean", "null"):
        raise SqlTypeError(
            f"the {clause} condition {spark_sql(node)} is of type {kind}, not a boolean"
        )


def spark_sql(node: exp.Expression) -> str:
    return node.sql(dialect="spark")


class _Typer:
    def __init__(self, column: Callable[[str], SqlType]) -> None:
        self.column = column

    def of(self, node: exp.Expression) -> SqlType:
        """``node``'s type, by the first rule of ``_RULES`` its class matches (they are
        tried in order: sqlglot's classes nest, ``exp.Predicate`` under the booleans)."""
        for kinds, rule in _RULES:
            if isinstance(node, kinds):
                return rule(self, node)
        return t.UNKNOWN

    def _arithmetic(self, node: exp.Binary) -> SqlType:
        left, right = self.of(node.left), self.of(node.right)
        operator = _ARITHMETIC[type(node)]
        if not (left.is_known and right.is_known) or "null" in (left.name, right.name):
            return (
                t.UNKNOWN
                if not (left.is_known and right.is_known)
                else (right if left.name == "null" else left)
            )
        if "string" in (left.name, right.name) and (
            left.is_numeric or right.is_numeric or left == right
        ):
            return t.DOUBLE if t.DOUBLE in (left, right) or operator == "/" else t.BIGINT
        if left.name in _TEMPORAL or right.name in _TEMPORAL:
            return self._temporal(node, operator, left, right)
        literals = (_int_literal(node.left), _int_literal(node.right))
        result = t.arithmetic(operator, left, right, literals)
        if result is None:
            raise _mismatch(node, left, right)
        return result

    def _temporal(self, node, operator: str, left: SqlType, right: SqlType) -> SqlType:
        if (
            operator in ("+", "-")
            and left.name in _TEMPORAL
            and (right.is_integral or right.name == "interval")
        ):
            return left
        if operator == "+" and right.name in _TEMPORAL and left.is_integral:
            return right
        if operator == "-" and left.name in _TEMPORAL and right.name in _TEMPORAL:
            return SqlType("interval")
        if isinstance(node.right, exp.Interval) or isinstance(node.left, exp.Interval):
            return left if left.name in _TEMPORAL else right
        raise _mismatch(node, left, right)

    def _predicate(self, node: exp.Expression) -> SqlType:
        kinds = [
            self.of(child)
            for child in node.iter_expressions()
            if not isinstance(child, (exp.Subquery, exp.Select))
        ]
        if isinstance(node, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)):
            left, right = kinds
            numeric_vs_temporal = (left.is_numeric and right.name in _TEMPORAL) or (
                right.is_numeric and left.name in _TEMPORAL
            )
            boolean_vs_other = "boolean" in (left.name, right.name) and (
                left.is_numeric or right.is_numeric
            )
            if numeric_vs_temporal or boolean_vs_other:
                raise _mismatch(node, left, right)
        return t.BOOLEAN

    def _widened(self, node: exp.Expression) -> SqlType:
        if isinstance(node, exp.Case):
            for branch in node.args.get("ifs") or []:
                self.of(branch.this)
            values = [branch.args["true"] for branch in node.args.get("ifs") or []]
            values += [node.args["default"]] if node.args.get("default") else []
        elif isinstance(node, exp.If):
            self.of(node.this)
            values = [node.args["true"]] + ([node.args["false"]] if node.args.get("false") else [])
        else:
            values = [node.this, *node.expressions]
        result = t.NULL
        for value in values:
            kind = self.of(value)
            widened = t.wider(result, kind)
            if widened is None:
                raise SqlTypeError(
                    f"{spark_sql(node)}: its branches have types {result} and "
                    f"{kind}, which Spark cannot bring to one type"
                )
            result = widened
        return result

    def _sum_or_avg(self, node: exp.Expression) -> SqlType:
        argument = node.this.expressions[0] if isinstance(node.this, exp.Distinct) else node.this
        kind = self.of(argument)
        if kind.name == "string":
            kind = t.DOUBLE
        if kind.is_known and not kind.is_numeric and kind.name not in ("null", "interval"):
            name = "SUM" if isinstance(node, exp.Sum) else "AVG"
            raise SqlTypeError(
                f"{spark_sql(node)}: {name} needs a number, but "
                f"{spark_sql(argument)} is of type {kind}"
            )
        return t.sum_type(kind) if isinstance(node, exp.Sum) else t.avg_type(kind)

    def _window(self, node: exp.Window) -> SqlType:
        function = node.this
        if isinstance(function, _RANKING):
            return t.INT
        if isinstance(function, (exp.PercentRank, exp.CumeDist)):
            return t.DOUBLE
        if isinstance(function, (exp.Lag, exp.Lead, exp.FirstValue, exp.LastValue, exp.NthValue)):
            return self.of(function.this)
        return self.of(function)


def _of_this(typer: _Typer, node: exp.Expression) -> SqlType:
    return typer.of(node.this)


def _constant(kind: SqlType) -> Callable[[_Typer, exp.Expression], SqlType]:
    return lambda typer, node: kind


def _of_cast(typer: _Typer, node: exp.Cast) -> SqlType:
    typer.of(node.this)  # its own type errors still count
    return t.parse_type(node.to.sql(dialect="spark"))


def _of_boolean(typer: _Typer, node: exp.Expression) -> SqlType:
    for child in node.iter_expressions():
        typer.of(child)
    return t.BOOLEAN


def _of_distinct(typer: _Typer, node: exp.Distinct) -> SqlType:
    kinds = [typer.of(e) for e in node.expressions]
    return kinds[0] if len(kinds) == 1 else t.UNKNOWN


def _of_anonymous(typer: _Typer, node: exp.Anonymous) -> SqlType:
    return t.BOOLEAN if node.name.lower() in ("every", "some", "bool_and", "bool_or") else t.UNKNOWN


_RULES: tuple[tuple[type | tuple[type, ...], Callable[[_Typer, exp.Expression], SqlType]], ...] = (
    (exp.Column, lambda typer, node: typer.column(node.name)),
    (exp.Paren, _of_this),
    (exp.Literal, lambda typer, node: _literal(node)),
    (exp.Null, _constant(t.NULL)),
    ((exp.Cast, exp.TryCast), _of_cast),
    (tuple(_ARITHMETIC), _Typer._arithmetic),
    (exp.IntDiv, _constant(t.BIGINT)),
    ((exp.Neg, exp.Abs), _of_this),
    (exp.Predicate, _Typer._predicate),
    (_BOOLEAN, _of_boolean),
    ((exp.Case, exp.If, exp.Coalesce), _Typer._widened),
    (exp.Nullif, _of_this),
    (exp.Window, _Typer._window),
    (exp.Filter, _of_this),
    ((exp.Sum, exp.Avg), _Typer._sum_or_avg),
    ((exp.Count, exp.CountIf, exp.ApproxDistinct), _constant(t.BIGINT)),
    ((exp.Min, exp.Max, exp.First, exp.Last, exp.AnyValue), _of_this),
    ((exp.BitwiseAndAgg, exp.BitwiseOrAgg, exp.BitwiseXorAgg), _of_this),
    (_DOUBLE_FUNCTIONS, _constant(t.DOUBLE)),
    (_STRING_FUNCTIONS, _constant(t.STRING)),
    (_INT_FUNCTIONS, _constant(t.INT)),
    (exp.Distinct, _of_distinct),
    (exp.Anonymous, _of_anonymous),
    ((exp.TsOrDsAdd, exp.DateAdd, exp.DateSub), _constant(t.DATE)),
)


def _literal(node: exp.Literal) -> SqlType:
    if node.is_string:
        return t.STRING
    text = node.this.lower()
    if "e" in text:
        return t.DOUBLE
    if text.endswith(("d", "f")):
        return t.DOUBLE
    if text.endswith("l"):
        return t.BIGINT
    if "." in text:
        whole, _, fraction = text.partition(".")
        digits = len(whole.lstrip("-").lstrip("0")) + len(fraction)
        return t.decimal(max(digits, len(fraction), 1), len(fraction))
    value = int(text)
    return (
        t.INT
        if -(2**31) <= value < 2**31
        else t.BIGINT
        if -(2**63) <= value < 2**63
        else t.decimal(len(text.lstrip("-")), 0)
    )


def _int_literal(node: exp.Expression) -> int | None:
    node = node.this if isinstance(node, exp.Paren) else node
    if isinstance(node, exp.Literal) and not node.is_string and node.this.lstrip("-").isdigit():
        return int(node.this)
    return None


def _mismatch(node: exp.Expression, left: SqlType, right: SqlType) -> SqlTypeError:
    return SqlTypeError(
        f"{spark_sql(node)}: the operands have incompatible types {left} and "
        f"{right} (Spark: DATATYPE_MISMATCH)"
    )
