"""PySpark's ``DataFrame`` methods sqlframe lacks or gives otherwise, as Spark SQL.

``selectExpr`` parses each string as Spark does; ``subtract`` is ``EXCEPT DISTINCT``;
``rollup``/``cube``/``groupingSets`` group as Spark's SQL does (``grouping``); ``sample`` keeps
each row with the fraction's chance (``rand(seed)``); ``randomSplit`` splits by a hash of each
row and the seed, so its parts are disjoint and together the whole whatever order the rows
come in (equal rows go to the same part); ``sampleBy`` samples each stratum by its fraction.
The statistics (``describe``, ``summary``, ``df.na``, ``df.stat``) are in ``statistics``.
"""

from __future__ import annotations

import random
import typing as t

from sqlframe.base.dataframe import BaseDataFrame
from sqlglot import exp

import jobmanager.client.dataframe.statistics as statistics
from jobmanager.client.dataframe.unsupported import unsupported

if t.TYPE_CHECKING:
    from jobmanager.client.dataframe.dataframe import DataFrame

__all__ = ["SparkMethods"]


_FIXED_NAMES = {
    "posexplode": ("pos", "col"),
    "posexplodeouter": ("pos", "col"),
    "explode": ("col",),
    "explodeouter": ("col",),
}


def _stack_names(column: exp.Expression) -> tuple[str, ...] | None:
    """``stack(n, ...)``'s columns, ``col0, col1, ...`` (None where n is not a literal)."""
    count, *values = (
        column.expressions
        if isinstance(column, exp.Anonymous)
        else (column.this, *column.expressions)
    )
    if isinstance(count, exp.Literal) and count.is_int and int(count.this) > 0:
        return tuple(f"col{i}" for i in range(-(-len(values) // int(count.this))))
    return None


def _generated_names(column: exp.Expression) -> tuple[str, ...] | None:
    """The names Spark gives a generator's columns (``explode``: ``col``; ``posexplode``:
    ``pos, col``; ``stack(n, ...)``: ``col0, col1, ...``; ``json_tuple``: ``c0, c1, ...``)."""
    kind = type(column).__name__.lower().lstrip("_")
    if kind == "anonymous":
        kind = column.name.lower()
    if kind in _FIXED_NAMES:
        return _FIXED_NAMES[kind]
    if kind == "stack":
        return _stack_names(column)
    if kind in ("json_tuple", "jsontuple"):
        return tuple(f"c{i}" for i in range(len(column.expressions) - 1))
    return None


def _named_generators(selected: DataFrame) -> DataFrame:
    for i, column in enumerate(selected.expression.expressions):
        if isinstance(column, exp.Alias) and column.alias.startswith(("explode__", "stack__")):
            column = column.this  # sqlframe's name, not Spark's nor the user's
        names = _generated_names(column)
        if names and len(names) == 1:
            selected.expression.expressions[i] = exp.alias_(column, names[0], quoted=True)
        elif names:
            selected.expression.expressions[i] = exp.Aliases(
                this=column, expressions=[exp.to_identifier(n) for n in names]
            )
    return selected


def _schema_lines(fields, depth: int, level: int | None) -> list[str]:
    lines = []
    for field in fields:
        kind = field.dataType
        lines.append(
            f"{' |   ' * (depth - 1)} |-- {field.name}: {kind.typeName()} "
            f"(nullable = {str(field.nullable).lower()})"
        )
        if hasattr(kind, "fields") and (level is None or depth < level):
            lines += _schema_lines(kind.fields, depth + 1, level)
    return lines


class SparkMethods:
    """Mixed into Tidal's ``DataFrame`` before sqlframe's ``BaseDataFrame``."""

    def printSchema(self, level: int | None = None) -> None:
        """Spark's tree of the schema (``integer``, not ``int``)."""
        print("\n".join(["root", *_schema_lines(self.schema.fields, 1, level)]) + "\n")

    @property
    def dtypes(self) -> list[tuple[str, str]]:
        return [(field.name, field.dataType.simpleString()) for field in self.schema.fields]

    def select(self, *cols, **kwargs) -> DataFrame:
        """A ``posexplode`` selected without names gives Spark's two, ``pos`` and ``col``."""
        return _named_generators(BaseDataFrame.select(self, *cols, **kwargs))

    select.__wrapped__ = lambda self, *cols, **kwargs: _named_generators(  # sqlframe calls it
        BaseDataFrame.select.__wrapped__(self, *cols, **kwargs)
    )

    def selectExpr(self, *expr: str | list[str]) -> DataFrame:
        import jobmanager.client.dataframe.functions as F

        from sqlframe.base.column import Column

        from jobmanager.client.dataframe.naming import auto_alias, display_name

        if len(expr) == 1 and isinstance(expr[0], list):
            expr = tuple(expr[0])
        columns = []
        for text in expr:
            column = F.expr(text)
            if auto_alias(column.expression, "expr"):
                inner = column.expression.this
                column = Column(inner).alias(display_name(inner))
            elif not isinstance(column.expression, (exp.Alias, exp.Aliases, exp.Column, exp.Star)):
                column = column.alias(display_name(column.expression))
            columns.append(column)
        return self.select(*columns)

    def subtract(self, other: DataFrame) -> DataFrame:
        return self._set_operation(exp.Except, other, True)

    def melt(self, ids, values, variableColumnName: str, valueColumnName: str) -> DataFrame:
        return self.unpivot(ids, values, variableColumnName, valueColumnName)

    def rollup(self, *cols):
        return self._grouping("rollup", cols)

    def cube(self, *cols):
        return self._grouping("cube", cols)

    def groupingSets(self, groupingSets, *cols):
        grouped = self._grouping("sets", cols)
        keys = [c.column_expression.sql(dialect="spark") for c in grouped.group_by_cols]
        sets = []
        for each in groupingSets:
            columns = self._ensure_and_normalize_cols(list(each)) if each else []
            sets.append([keys.index(c.column_expression.sql(dialect="spark")) for c in columns])
        grouped._sets = sets
        return grouped

    def _grouping(self, kind: str, cols):
        from jobmanager.client.dataframe.grouping import GroupedData

        if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
            cols = tuple(cols[0])
        plain = self.groupBy(*cols)
        return GroupedData(plain._df, plain.group_by_cols, plain.last_op, kind)

    def sample(self, withReplacement=None, fraction=None, seed=None) -> DataFrame:
        import jobmanager.client.dataframe.functions as F

        if isinstance(withReplacement, float) and fraction is None:
            withReplacement, fraction = None, withReplacement
        elif isinstance(withReplacement, float) and isinstance(fraction, int):
            withReplacement, fraction, seed = None, withReplacement, fraction
        if withReplacement:
            raise unsupported(
                "DataFrame.sample(withReplacement=True)",
                "Tidal samples rows without replacement",
                "sample(fraction, seed)",
            )
        if fraction is None or not 0 <= fraction <= 1:
            raise ValueError(f"fraction must be between 0 and 1, got {fraction!r}")
        seed = random.randrange(1 << 31) if seed is None else int(seed)
        return self.where(F.rand(seed) < F.lit(float(fraction)))

    def sampleBy(self, col, fractions: dict, seed: int | None = None) -> DataFrame:
        import jobmanager.client.dataframe.functions as F

        seed = random.randrange(1 << 31) if seed is None else int(seed)
        chance = F.lit(0.0)
        column = F.col(col) if isinstance(col, str) else col
        for value, fraction in fractions.items():
            chance = F.when(column == F.lit(value), F.lit(float(fraction))).otherwise(chance)
        return self.where(F.rand(seed) < chance)

    def randomSplit(self, weights: list[float], seed: int | None = None) -> list[DataFrame]:
        import jobmanager.client.dataframe.functions as F

        if any(w < 0 for w in weights) or sum(weights) <= 0:
            raise ValueError(f"weights must be non-negative with a positive sum: {weights}")
        seed = random.randrange(1 << 31) if seed is None else int(seed)
        total = float(sum(weights))
        bounds = [sum(weights[:i]) / total for i in range(len(weights) + 1)]
        share = F.abs(F.xxhash64(F.lit(seed), *[F.col(c) for c in self.columns]) % 1000003) / F.lit(
            1000003.0
        )
        parts = []
        for low, high in zip(bounds, bounds[1:]):
            upper = share < F.lit(high) if high < 1 else F.lit(True)
            parts.append(self.where((share >= F.lit(low)) & upper))
        return parts

    def describe(self, *cols) -> DataFrame:
        return statistics.describe(self, *cols)

    def summary(self, *statistics_: str) -> DataFrame:
        return statistics.summary(self, *statistics_)

    def fillna(self, value, subset=None) -> DataFrame:
        return statistics.fill_nulls(self, value, subset)

    def dropna(self, how: str = "any", thresh: int | None = None, subset=None) -> DataFrame:
        return statistics.drop_nulls(self, how, thresh, subset)

    def replace(self, to_replace, value=None, subset=None) -> DataFrame:
        return statistics.replace_values(self, to_replace, value, subset)

    def approxQuantile(self, col, probabilities, relativeError):
        return statistics.approx_quantile(self, col, probabilities, relativeError)

    def corr(self, col1: str, col2: str, method: str | None = None) -> float:
        return statistics.correlation(self, col1, col2, method)

    def cov(self, col1: str, col2: str) -> float:
        return statistics.covariance(self, col1, col2)

    def crosstab(self, col1: str, col2: str) -> DataFrame:
        return statistics.crosstab(self, col1, col2)

    def freqItems(self, cols, support: float | None = None) -> DataFrame:
        return statistics.freq_items(self, cols, support)

    def tail(self, num: int) -> list:
        with self._action("tail"):
            rows = self.collect()
        return rows[-num:] if num > 0 else []

    def sortWithinPartitions(self, *cols, **kwargs) -> DataFrame:
        """Each of Tidal's partitions sorted: the whole result sorted is one such order."""
        return self.orderBy(*cols, **kwargs)

    def repartitionByRange(self, numPartitions, *cols) -> DataFrame:
        return self

    def isLocal(self) -> bool:
        return False

    def to(self, schema) -> DataFrame:
        import jobmanager.client.dataframe.functions as F

        return self.select(*[F.col(f.name).cast(f.dataType).alias(f.name) for f in schema.fields])

    def registerTempTable(self, name: str) -> None:
        self.createOrReplaceTempView(name)

    def createTempView(self, name: str) -> None:
        self.createOrReplaceTempView(name)
