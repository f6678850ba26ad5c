"""An aggregate in two halves: a partial one in the producer's task, a final one after the
exchange, together giving exactly what Spark's one aggregate gives, types included.

What each call becomes (partial state -> final merge -> result):

- ``SUM(x)``: ``SUM(x)`` -> ``SUM`` -> cast back to Spark's ``decimal(p + 10, s)`` (a sum of
  sums would widen it again); ``COUNT``: ``COUNT`` -> ``SUM``, 0 when empty;
  ``MIN``, ``MAX``, ``BOOL_AND``/``EVERY``, ``BOOL_OR``/``SOME``, ``BIT_AND``/``OR``/``XOR``:
  the same function again;
- ``AVG(x)``: its sum and count -> summed -> divided as Spark's ``Average`` divides: a decimal
  sum by the count as ``decimal(20, 0)``, cast to ``decimal(p + 4, s + 4)``; a double otherwise;
  NULL for no values;
- ``VAR_SAMP``, ``VAR_POP``, ``STDDEV``..: each task's count, mean and sum of squared
  deviations, merged with Chan's formula over the group's mean (a window in the final task),
  not from sums of squares, which would lose every digit of a small variance of large values;
- ``COUNT(DISTINCT a)`` (and SUM/AVG of DISTINCT), as Spark rewrites it: the partial groups by
  the keys and ``a`` (each task sends each distinct value once), the final counts the distinct
  ``a`` per key; the other aggregates of the same query ride along as partial states of the
  (keys, a) groups. Distinct aggregates over two different arguments are not split.

Anything else (``collect_list``, ``percentile``, a FILTER on a distinct aggregate, a type the
planner cannot tell) is not split: its rows cross the exchange and one aggregate runs after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from sqlglot import exp

from jobmanager.planner.expressions import type_of
from jobmanager.planner.logical import (
    Aggregate,
    Column,
    IdAllocator,
    Node,
    Project,
    Window,
    col,
    paren,
)
from jobmanager.planner.types import BIGINT, DOUBLE, UNKNOWN, SqlType, bounded

__all__ = ["SplitAggregate", "split_aggregate"]

_SAME_AGAIN = (
    exp.Min,
    exp.Max,
    exp.LogicalAnd,
    exp.LogicalOr,
    exp.BitwiseAndAgg,
    exp.BitwiseOrAgg,
    exp.BitwiseXorAgg,
)
_SAME_AGAIN_NAMES = {"every", "some", "bool_and", "bool_or"}
_MOMENTS = {
    exp.Variance: "samp",
    exp.VariancePop: "pop",
    exp.Stddev: "samp_sqrt",
    exp.StddevSamp: "samp_sqrt",
    exp.StddevPop: "pop_sqrt",
}


@dataclass(frozen=True)
class SplitAggregate:
    """The partial aggregate's groups and states (over the child's columns), the hash keys of
    the exchange (the partial's group ids), and how the final half is built over an input of
    the partial's columns; the final gives the original aggregate's columns, ids and types."""

    groups: tuple[tuple[str, exp.Expression], ...]
    states: tuple[tuple[str, exp.Expression], ...]
    columns: tuple[Column, ...]
    keys: tuple[str, ...]
    final: Callable[[Node], Node]


def split_aggregate(node: Aggregate, ids: IdAllocator) -> SplitAggregate | None:
    child_types = node.child.typer()

    def kind(expression: exp.Expression) -> SqlType:
        return type_of(expression, child_types)

    distinct = [(i, c) for i, c in node.aggs if _distinct_argument(c) is not None]
    arguments = {_distinct_argument(c) for _, c in distinct}
    if len(arguments) > 1 or any(isinstance(c, exp.Filter) for _, c in distinct):
        return None
    extra_groups: list[tuple[str, exp.Expression]] = []
    if distinct:
        (argument,) = arguments
        for value in argument:
            extra_groups.append((ids.new("_d"), value))
    plan = _Plan(ids, kind)
    for agg_id, call in node.aggs:
        if (agg_id, call) in distinct:
            plan.distinct(agg_id, call, node.type_of(agg_id), extra_groups)
        elif not plan.add(agg_id, call, node.type_of(agg_id)):
            return None
    groups = node.groups + tuple(extra_groups)
    columns = tuple((g, kind(e)) for g, e in groups) + tuple(plan.state_columns)
    keys = tuple(g for g, _ in node.groups)

    def final(leaf: Node) -> Node:
        return plan.final(leaf, node, extra_groups)

    return SplitAggregate(groups, tuple(plan.states), columns, keys, final)


class _Plan:
    def __init__(self, ids: IdAllocator, kind: Callable[[exp.Expression], SqlType]) -> None:
        self.ids = ids
        self.kind = kind
        self.states: list[tuple[str, exp.Expression]] = []
        self.state_columns: list[Column] = []
        self.merges: list[tuple[str, exp.Expression, SqlType]] = []  # over the partial's columns
        self.results: list[tuple[str, exp.Expression]] = []  # over the merges' columns
        self.moments: list[tuple[str, str, str, str]] = []  # (n, mean, m2, group mean) ids

    def _state(self, expression: exp.Expression, kind: SqlType) -> str:
        state_id = self.ids.new("_p")
        self.states.append((state_id, expression))
        self.state_columns.append((state_id, kind))
        return state_id

    def _merge(self, expression: exp.Expression, kind: SqlType) -> str:
        merge_id = self.ids.new("_m")
        self.merges.append((merge_id, expression, kind))
        return merge_id

    def add(self, agg_id: str, call: exp.Expression, result: SqlType) -> bool:
        """Plan one non-distinct call; False if it cannot be split."""
        inner = call.this if isinstance(call, exp.Filter) else call

        def filtered(expression: exp.Expression) -> exp.Expression:
            if isinstance(call, exp.Filter):
                return exp.Filter(this=expression, expression=call.expression.copy())
            return expression

        if isinstance(inner, exp.Count):
            state = self._state(filtered(inner.copy()), BIGINT)
            merged = self._merge(exp.Sum(this=col(state)), BIGINT)
            self.results.append(
                (agg_id, exp.Coalesce(this=col(merged), expressions=[exp.Literal.number(0)]))
            )
            return True
        if isinstance(inner, exp.Sum):
            argument = self.kind(inner.this)
            if not argument.is_known or not (argument.is_numeric or argument.name == "string"):
                return False
            state = self._state(filtered(inner.copy()), result)
            merged = self._merge(exp.Sum(this=col(state)), UNKNOWN)
            self.results.append(
                (agg_id, _cast(col(merged), result) if result.is_decimal else col(merged))
            )
            return True
        if isinstance(inner, _SAME_AGAIN) or (
            isinstance(inner, exp.Anonymous) and inner.name.lower() in _SAME_AGAIN_NAMES
        ):
            state = self._state(filtered(inner.copy()), result)
            if isinstance(inner, exp.Anonymous):
                again = exp.Anonymous(this=inner.name, expressions=[col(state)])
            else:
                again = inner.copy()
                again.set("this", col(state))
            merged = self._merge(again, result)
            self.results.append((agg_id, col(merged)))
            return True
        if isinstance(inner, exp.Avg):
            return self._average(agg_id, inner, result, filtered)
        if type(inner) in _MOMENTS:
            return self._moment(agg_id, inner, _MOMENTS[type(inner)], filtered)
        return False

    def _average(self, agg_id, inner: exp.Avg, result: SqlType, filtered) -> bool:
        argument = self.kind(inner.this)
        if not argument.is_known or not argument.is_numeric:
            return False
        if argument.is_decimal:
            summed_type = bounded(argument.precision + 10, argument.scale)
            summed = self._state(filtered(exp.Sum(this=inner.this.copy())), summed_type)
        else:
            summed = self._state(filtered(exp.Sum(this=_cast(inner.this.copy(), DOUBLE))), DOUBLE)
        counted = self._state(filtered(exp.Count(this=inner.this.copy())), BIGINT)
        total = self._merge(exp.Sum(this=col(summed)), UNKNOWN)
        count = self._merge(exp.Sum(this=col(counted)), BIGINT)
        if argument.is_decimal:
            quotient = exp.Div(
                this=_cast(col(total), summed_type), expression=_cast(col(count), bounded(20, 0))
            )
            value = _cast(quotient, result)
        else:
            value = exp.Div(this=col(total), expression=_cast(col(count), DOUBLE))
        self.results.append((agg_id, _unless_empty(col(count), value)))
        return True

    def _moment(self, agg_id, inner, statistic: str, filtered) -> bool:
        argument = self.kind(inner.this)
        if not argument.is_known or not argument.is_numeric:
            return False
        value = _cast(inner.this.copy(), DOUBLE)
        n = self._state(filtered(exp.Count(this=value.copy())), BIGINT)
        mean = self._state(filtered(exp.Avg(this=value.copy())), DOUBLE)
        m2 = self._state(
            exp.Mul(this=paren(filtered(exp.VariancePop(this=value.copy()))), expression=col(n)),
            DOUBLE,
        )
        group_mean = self.ids.new("_gm")
        self.moments.append((n, mean, m2, group_mean))
        count = self._merge(exp.Sum(this=col(n)), BIGINT)
        deviation = exp.Sub(this=col(mean), expression=col(group_mean))
        spread = exp.Add(
            this=col(m2),
            expression=exp.Mul(
                this=col(n),
                expression=exp.Mul(this=paren(deviation), expression=paren(deviation.copy())),
            ),
        )
        squares = self._merge(
            exp.Sum(
                this=exp.Case(
                    ifs=[
                        exp.If(
                            this=exp.GT(this=col(n), expression=exp.Literal.number(0)), true=spread
                        )
                    ]
                )
            ),
            DOUBLE,
        )
        if statistic.startswith("samp"):
            divisor = exp.Sub(this=col(count), expression=exp.Literal.number(1))
            empty = exp.LTE(this=col(count), expression=exp.Literal.number(1))
        else:
            divisor = col(count)
            empty = exp.EQ(this=col(count), expression=exp.Literal.number(0))
        ratio = exp.Div(this=col(squares), expression=paren(divisor))
        result = exp.Sqrt(this=ratio) if statistic.endswith("sqrt") else ratio
        self.results.append(
            (agg_id, exp.Case(ifs=[exp.If(this=empty, true=exp.Null())], default=result))
        )
        return True

    def distinct(self, agg_id, call: exp.Expression, result: SqlType, extra_groups) -> None:
        """A distinct aggregate, computed whole in the final over the (keys, argument) groups."""
        rewritten = call.copy()
        rewritten.set("this", exp.Distinct(expressions=[col(gid) for gid, _ in extra_groups]))
        merged = self._merge(rewritten, result)
        self.results.append((agg_id, col(merged)))

    def final(self, leaf: Node, original: Aggregate, extra_groups) -> Node:
        source = leaf
        if self.moments:
            keys = tuple(g for g, _ in original.groups)
            functions = []
            for n, mean, _, group_mean in self.moments:
                weighted = exp.Window(
                    this=exp.Sum(this=exp.Mul(this=col(n), expression=col(mean))),
                    partition_by=[col(k) for k in keys],
                )
                count = exp.Window(this=exp.Sum(this=col(n)), partition_by=[col(k) for k in keys])
                nonzero = exp.Nullif(this=count, expression=exp.Literal.number(0))
                functions.append((group_mean, exp.Div(this=weighted, expression=nonzero)))
            source = Window(
                leaf.columns + tuple((g, DOUBLE) for g, _ in functions),
                "merge of variances",
                leaf,
                keys,
                tuple(functions),
            )
        types = source.typer()
        merges = tuple((i, e) for i, e, _ in self.merges)
        merge_columns = tuple(
            (i, k if k.is_known else type_of(e, types)) for i, e, k in self.merges
        )
        groups = tuple((g, col(g)) for g, _ in original.groups)
        group_columns = tuple((g, types(g)) for g, _ in original.groups)
        merged = Aggregate(group_columns + merge_columns, original.origin, source, groups, merges)
        results = dict(self.results)
        exprs = tuple((g, col(g)) for g, _ in original.groups) + tuple(
            (agg_id, results[agg_id]) for agg_id, _ in original.aggs
        )
        return Project(original.columns, original.origin, merged, exprs)


def _distinct_argument(call: exp.Expression) -> tuple[exp.Expression, ...] | None:
    inner = call.this if isinstance(call, exp.Filter) else call
    argument = inner.this if isinstance(inner, exp.AggFunc) else None
    if isinstance(argument, exp.Distinct):
        return tuple(argument.expressions)
    return None


def _cast(expression: exp.Expression, kind: SqlType) -> exp.Expression:
    return exp.Cast(this=expression, to=exp.DataType.build(str(kind), dialect="spark"))


def _unless_empty(count: exp.Expression, value: exp.Expression) -> exp.Expression:
    return exp.Case(
        ifs=[exp.If(this=exp.EQ(this=count, expression=exp.Literal.number(0)), true=exp.Null())],
        default=value,
    )
