"""``GroupedData`` on Tidal: sqlframe's, with Spark's pivot, rollup, cube and grouping sets.

A pivot is Spark's own two steps: the aggregates grouped by the keys and the pivot column,
then one row a key with a column for each pivot value (and each aggregate, named
``{value}_{aggregate}`` where there are several), null where the key has no rows of that
value. Values not given are the column's distinct values, found by a job and sorted, nulls
first, as Spark finds them. ``rollup``, ``cube`` and ``groupingSets`` become Spark's ``GROUP BY
ROLLUP (...)``, ``CUBE (...)`` and ``GROUPING SETS (...)``. ``first``/``last`` with
``ignorenulls`` in an aggregate become ``min_by``/``max_by`` of the value by its being null:
a value that is not null, where the group has one, as Spark's ``first(x) IGNORE NULLS`` gives.
"""

from __future__ import annotations

import typing as t

from sqlframe.base.group import _BaseGroupedData
from sqlglot import exp

from jobmanager.client.dataframe.naming import display_name
from jobmanager.client.dataframe.unsupported import unsupported

if t.TYPE_CHECKING:
    from jobmanager.client.dataframe.dataframe import DataFrame

__all__ = ["GroupedData", "pivot_label"]

_PIVOT_MAX_VALUES = 10000  # spark.sql.pivotMaxValues


class GroupedData(_BaseGroupedData["DataFrame"]):
    """``kind`` is ``None`` for a plain GROUP BY, else ``rollup``, ``cube`` or ``sets`` (the
    grouping sets then in ``sets``, each a list of the grouping columns' positions)."""

    def __init__(
        self,
        df,
        group_by_cols,
        last_op,
        kind: str | None = None,
        sets: list[list[int]] | None = None,
    ) -> None:
        super().__init__(df, group_by_cols, last_op)
        self._kind = kind
        self._sets = sets

    def agg(self, *exprs) -> DataFrame:
        from sqlframe.base.column import Column

        if exprs and isinstance(exprs[0], dict):
            exprs = tuple(
                self._get_function_applied_columns(function, (name,))[0]
                for name, function in exprs[0].items()
            )
        exprs = tuple(_without_ignore_nulls(Column.ensure_col(e)) for e in exprs)
        if self.pivot_col is not None:
            return self._pivoted(exprs)
        grouped = _BaseGroupedData.agg(self, *exprs)
        if self._kind is None:
            return grouped
        keys = [c.column_expression.copy() for c in self.group_by_cols]
        grouping = _grouping(self._kind, keys, self._sets)
        grouped.expression.set("group", exp.Group(expressions=[grouping]))
        return grouped

    def pivot(self, pivot_col: str, values: list | None = None) -> GroupedData:
        if self._kind is not None:
            raise unsupported(
                f"GroupedData.pivot after {self._kind}",
                "Spark pivots a plain groupBy only",
                "pivot a groupBy",
            )
        self.pivot_col = pivot_col
        self.pivot_values = list(values) if values is not None else None
        return self

    def _pivoted(self, exprs) -> DataFrame:
        import jobmanager.client.dataframe.functions as F

        values = self.pivot_values if self.pivot_values is not None else self._distinct_values()
        keys = list(self.group_by_cols)
        inner = GroupedData(self._df, [*keys, F.col(self.pivot_col)], self.last_op).agg(
            *[e.alias(f"__pivot_{i}") for i, e in enumerate(exprs)]
        )
        names = inner.columns
        key_names, pivoted = names[: len(keys)], names[len(keys)]
        labels = [display_name(e.expression) for e in exprs]
        columns = []
        for value in values:
            match = F.col(pivoted).isNull() if value is None else F.col(pivoted) == F.lit(value)
            for i, label in enumerate(labels):
                name = pivot_label(value) if len(exprs) == 1 else f"{pivot_label(value)}_{label}"
                picked = F.when(match, F.col(f"__pivot_{i}"))
                columns.append(F.max(picked).alias(name))
        return GroupedData(inner, [F.col(k) for k in key_names], inner.last_op).agg(*columns)

    def _distinct_values(self) -> list:
        rows = self._df.select(self.pivot_col).distinct().limit(_PIVOT_MAX_VALUES + 1).collect()
        if len(rows) > _PIVOT_MAX_VALUES:
            raise unsupported(
                "GroupedData.pivot without values",
                f"the column has more than {_PIVOT_MAX_VALUES} values (Spark's limit)",
                "give the values: pivot(column, values)",
            )
        found = [row[0] for row in rows]
        return [None] * (None in found) + sorted(v for v in found if v is not None)

    def applyInPandas(self, func, schema):
        raise unsupported("GroupedData.applyInPandas", "it runs Python per group", "udf")

    def apply(self, udf):
        raise unsupported("GroupedData.apply", "it runs Python per group", "udf")

    def applyInArrow(self, func, schema):
        raise unsupported("GroupedData.applyInArrow", "it runs Python per group", "udf")

    def cogroup(self, other):
        raise unsupported("GroupedData.cogroup", "it runs Python per group", "udf")


def pivot_label(value: t.Any) -> str:
    """A pivot value as Spark names its column: ``null``, ``true``, ``10``, ``east``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _without_ignore_nulls(column):
    """``first(x) IGNORE NULLS`` as ``min_by(x, x IS NULL)`` (``last``: ``max_by(x, x IS NOT
    NULL)``): a value that is not null, where there is one; unaliased, named as Spark names
    it (``first(x)``)."""
    from sqlframe.base.column import Column

    from jobmanager.client.dataframe.naming import spark_name

    expression = column.expression
    if not expression.find(exp.IgnoreNulls):
        return column
    if isinstance(expression, exp.IgnoreNulls):
        function = expression.this
        name = spark_name(function, "first" if isinstance(function, exp.First) else "last")
        return Column(expression.transform(_rewrite_ignore_nulls)).alias(name)
    return Column(expression.transform(_rewrite_ignore_nulls))


def _rewrite_ignore_nulls(node: exp.Expression) -> exp.Expression:
    if not isinstance(node, exp.IgnoreNulls) or not isinstance(node.this, (exp.First, exp.Last)):
        return node
    value = node.this.this
    if isinstance(node.this, exp.First):
        return exp.Anonymous(
            this="min_by",
            expressions=[value.copy(), exp.Is(this=value.copy(), expression=exp.Null())],
        )
    return exp.Anonymous(
        this="max_by",
        expressions=[value.copy(), exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null()))],
    )


def _grouping(kind: str, keys: list, sets) -> exp.Expression:
    """The GROUP BY of a ``rollup``, a ``cube`` or grouping ``sets`` (of key positions)."""
    if kind == "rollup":
        return exp.Rollup(expressions=keys)
    if kind == "cube":
        return exp.Cube(expressions=keys)
    return exp.GroupingSets(
        expressions=[exp.Tuple(expressions=[keys[i].copy() for i in each]) for each in sets]
    )
