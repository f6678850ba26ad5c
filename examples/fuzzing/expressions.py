"""Random typed scalar expressions and predicates over the columns a query may name, as sqlglot
trees (Spark's dialect).

Typed, because a comparison of a date with a string or a sum of booleans is not a finding but
a query Spark refuses, and refused queries are skipped, costing time and finding nothing.
Kinds are the tables' (``tables.COLUMN_TYPES``); numbers compare with numbers, dates with
dates and timestamps.

What is never generated, so that Spark's answer is determined and raises nothing (Spark 4 runs
in ANSI mode, where an overflow, a division by zero or a bad cast is an error, and an error
that depends on the order a plan evaluates filters in is not a difference between plans):
division and modulo by anything but a non-zero literal, casts of strings, arithmetic that could
leave its type's range, and functions whose result depends on anything but their arguments
(``rand``, ``current_date``, ``uuid``).
"""

from __future__ import annotations

import datetime
import random
from dataclasses import dataclass
from decimal import Decimal

from sqlglot import exp

from examples.fuzzing.tables import BASE_DATE, STRINGS

__all__ = ["NUMERIC", "Expressions", "Ref", "comparable"]

NUMERIC = ("int", "bigint", "double", "decimal")
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NullSafeEQ)
_PATTERNS = ("a%", "%a", "%b%", "_", "a_c", "A%", " %", "%", "ab\\%")


@dataclass(frozen=True, slots=True)
class Ref:
    """A column a query may name: the alias of the table (or derived table) it is read from,
    its name and its kind."""

    alias: str
    name: str
    kind: str

    def node(self) -> exp.Column:
        return exp.column(self.name, table=self.alias)


def comparable(kind: str) -> tuple[str, ...]:
    """The kinds a value of ``kind`` compares with without a cast Spark could refuse."""
    if kind in NUMERIC:
        return NUMERIC
    if kind in ("date", "timestamp"):
        return ("date", "timestamp")
    return (kind,)


class Expressions:
    """Draws expressions from ``rng``: ``value(kind, scope)`` an expression of that kind,
    ``predicate(scope)`` a condition, both over the columns of ``scope`` only."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    # --- leaves -----------------------------------------------------------------------------

    def column(self, scope: tuple[Ref, ...], kinds: tuple[str, ...] | None = None) -> Ref | None:
        fitting = [ref for ref in scope if kinds is None or ref.kind in kinds]
        return self.rng.choice(fitting) if fitting else None

    def literal(self, kind: str) -> exp.Expression:
        rng = self.rng
        if kind in ("int", "bigint"):
            return _number(rng.randint(-1, 8))
        if kind == "double":
            return exp.cast(_number(rng.randint(-40, 40) / 4), "double")
        if kind == "decimal":
            return exp.cast(_number(Decimal(rng.randint(-9999, 9999)).scaleb(-2)), "decimal(12,2)")
        if kind == "string":
            return exp.Literal.string(rng.choice(STRINGS))
        if kind == "date":
            day = BASE_DATE + datetime.timedelta(days=rng.randint(0, 45))
            return exp.cast(exp.Literal.string(day.isoformat()), "date")
        if kind == "timestamp":
            moment = datetime.datetime.combine(BASE_DATE, datetime.time()) + datetime.timedelta(
                days=rng.randint(0, 45), hours=rng.randint(0, 23)
            )
            return exp.cast(exp.Literal.string(moment.isoformat(sep=" ")), "timestamp")
        return exp.true() if rng.random() < 0.5 else exp.false()

    # --- values -----------------------------------------------------------------------------

    def value(self, kind: str, scope: tuple[Ref, ...], depth: int = 1) -> exp.Expression:
        """An expression of ``kind``: mostly a column of it, else a literal or a function of
        smaller expressions (``depth`` bounds the nesting)."""
        rng = self.rng
        ref = self.column(scope, (kind,))
        roll = rng.random()
        if ref is not None and (depth <= 0 or roll < 0.5):
            return ref.node()
        if ref is None and depth <= 0 or roll < 0.6:
            return self.literal(kind)
        if kind == "boolean":
            return self.predicate(scope, depth - 1)
        if rng.random() < 0.15:
            return self.case(kind, scope, depth - 1)
        if rng.random() < 0.15:
            return exp.func("coalesce", self.value(kind, scope, depth - 1), self.literal(kind))
        builder = getattr(self, f"_{kind}", None)
        return builder(scope, depth - 1) if builder else self.literal(kind)

    def case(self, kind: str, scope: tuple[Ref, ...], depth: int) -> exp.Expression:
        case = exp.Case()
        for _ in range(self.rng.randint(1, 2)):
            case = case.when(self.predicate(scope, depth), self.value(kind, scope, depth))
        if self.rng.random() < 0.7:
            case = case.else_(self.value(kind, scope, depth))
        return case

    def _int(self, scope, depth) -> exp.Expression:
        rng, pick = self.rng, self.rng.randrange(9)
        if pick == 0 and self.column(scope, ("string",)):
            return exp.func("length", self.value("string", scope, depth))
        if pick == 1 and self.column(scope, ("date", "timestamp")):
            date = self.value(rng.choice(["date", "timestamp"]), scope, depth)
            return exp.func(rng.choice(["year", "month", "dayofmonth"]), date)
        if pick == 2 and self.column(scope, ("date",)):
            return exp.func("datediff", self.value("date", scope, depth), self.literal("date"))
        if pick == 3:
            return exp.func("nullif", self.value("int", scope, depth), self.literal("int"))
        if pick == 4:
            return exp.Mod(
                this=exp.paren(self.value("int", scope, depth)),
                expression=_number(rng.randint(2, 4)),
            )
        if pick == 5:
            return exp.func("abs", self.value("int", scope, depth))
        if rng.random() < 0.3:  # a product of leaves: nested ones could overflow an int
            return exp.paren(
                exp.Mul(this=self.value("int", scope, 0), expression=self.value("int", scope, 0))
            )
        operator = rng.choice([exp.Add, exp.Sub])
        return exp.paren(
            operator(
                this=self.value("int", scope, depth), expression=self.value("int", scope, depth)
            )
        )

    def _bigint(self, scope, depth) -> exp.Expression:
        operator = self.rng.choice([exp.Add, exp.Sub])
        return exp.paren(
            operator(
                this=self.value("bigint", scope, depth), expression=self.value("int", scope, depth)
            )
        )

    def _double(self, scope, depth) -> exp.Expression:
        rng = self.rng
        if rng.random() < 0.2:
            return exp.func("abs", self.value("double", scope, depth))
        operator = rng.choice([exp.Add, exp.Sub, exp.Mul])
        other = self.value(rng.choice(["double", "int"]), scope, depth)
        return exp.paren(operator(this=self.value("double", scope, depth), expression=other))

    def _decimal(self, scope, depth) -> exp.Expression:
        """Decimal arithmetic: sums, differences, products and quotients by a non-zero literal
        (Spark's result types widen; nothing here can overflow decimal(38))."""
        rng, pick = self.rng, self.rng.randrange(6)
        if pick == 0:
            return exp.func(
                "round", self.value("decimal", scope, depth), _number(rng.randint(0, 1))
            )
        if pick == 1:
            return exp.paren(
                exp.Div(
                    this=self.value("decimal", scope, depth),
                    expression=_number(rng.choice([3, 4, 7])),
                )
            )
        if pick == 2:
            return exp.func("abs", self.value("decimal", scope, depth))
        operator = rng.choice([exp.Add, exp.Sub, exp.Mul])
        other = self.value(rng.choice(["decimal", "int"]), scope, 0)
        return exp.paren(operator(this=self.value("decimal", scope, depth), expression=other))

    def _string(self, scope, depth) -> exp.Expression:
        rng, pick = self.rng, self.rng.randrange(5)
        inner = self.value("string", scope, depth)
        if pick == 0:
            return exp.func(rng.choice(["upper", "lower", "trim", "ltrim", "rtrim"]), inner)
        if pick == 1:
            return exp.func(
                "substring", inner, _number(rng.randint(1, 2)), _number(rng.randint(1, 3))
            )
        if pick == 2:
            return exp.func("concat", inner, self.value("string", scope, depth))
        if pick == 3 and self.column(scope, ("int",)):
            return exp.func("concat", inner, exp.cast(self.value("int", scope, depth), "string"))
        return exp.func("nullif", inner, self.literal("string"))

    def _date(self, scope, depth) -> exp.Expression:
        rng = self.rng
        if self.column(scope, ("timestamp",)) and rng.random() < 0.2:
            return exp.cast(self.value("timestamp", scope, depth), "date")
        days = _number(rng.randint(-3, 10)) if rng.random() < 0.7 else self.value("int", scope, 0)
        return exp.func(
            rng.choice(["date_add", "date_sub"]), self.value("date", scope, depth), days
        )

    # --- conditions -------------------------------------------------------------------------

    def predicate(self, scope: tuple[Ref, ...], depth: int = 1) -> exp.Expression:
        """A condition over ``scope``: comparisons, null tests, BETWEEN, IN lists (some with a
        NULL, which NOT IN makes never true), LIKE, joined by AND, OR and NOT."""
        rng = self.rng
        if depth > 0 and rng.random() < 0.35:
            pick = rng.randrange(3)
            if pick == 0:
                return exp.not_(self.predicate(scope, depth - 1))
            parts = [self.predicate(scope, depth - 1) for _ in range(2)]
            return exp.or_(*parts) if pick == 1 else exp.and_(*parts)
        return self.atom(scope, depth)

    def atom(self, scope: tuple[Ref, ...], depth: int = 0) -> exp.Expression:
        rng = self.rng
        ref = self.column(scope)
        if ref is None:
            return exp.true()
        kind, pick = ref.kind, rng.randrange(10)
        if kind == "boolean":
            return ref.node() if pick < 6 else exp.Is(this=ref.node(), expression=exp.null())
        if pick == 0:
            null = exp.Is(this=self.value(kind, scope, depth), expression=exp.null())
            return exp.not_(null) if rng.random() < 0.5 else null
        if pick == 1 and kind != "timestamp":
            low, high = sorted([self.literal(kind), self.literal(kind)], key=lambda e: e.sql())
            return exp.Between(this=ref.node(), low=low, high=high)
        if pick == 2 and kind != "timestamp":
            items = [self.literal(kind) for _ in range(rng.randint(1, 3))]
            if rng.random() < 0.3:
                items.append(exp.null())
            found = exp.In(this=self.value(kind, scope, depth), expressions=items)
            return exp.not_(found) if rng.random() < 0.4 else found
        if pick == 3 and kind == "string":
            pattern = exp.Literal.string(rng.choice(_PATTERNS))
            like = exp.Like(this=self.value("string", scope, depth), expression=pattern)
            return exp.not_(like) if rng.random() < 0.3 else like
        other_kind = rng.choice(comparable(kind))
        other = (
            self.value(other_kind, scope, depth) if rng.random() < 0.4 else self.literal(other_kind)
        )
        return rng.choice(_COMPARISONS)(this=self.value(kind, scope, depth), expression=other)


def _number(value) -> exp.Expression:
    """A numeric literal; a negative one as Spark reads it back (a negated literal)."""
    if value < 0:
        return exp.Neg(this=exp.Literal.number(-value))
    return exp.Literal.number(value)
