"""``df.na``, ``df.stat``, ``describe`` and ``summary`` as Spark gives them, each one query.

Spark's null handling is by a column's type: ``fill(0)`` fills the numeric columns (and their
NaNs), ``fill("x")`` the strings, a value cast to the column's type; ``replace`` touches only
the columns of the value's type; ``drop`` counts a NaN as null. ``describe``/``summary`` are
one aggregate (a job, at the call) whose row becomes local rows, a row a statistic in
Spark's order, every value a string, as in Spark. ``corr``/``cov`` read a null as 0, as
Spark's ``stat`` functions do. ``freqItems`` gives exactly the items at or above the support,
where Spark's sketch may add items below it. ``crosstab`` is a pivot of the counts.
"""

from __future__ import annotations

import typing as t

from sqlframe.base.dataframe import _BaseDataFrameNaFunctions, _BaseDataFrameStatFunctions
from sqlglot import exp

from jobmanager.client.dataframe.unsupported import unsupported

if t.TYPE_CHECKING:
    from jobmanager.client.dataframe.dataframe import DataFrame

__all__ = [
    "DataFrameNaFunctions",
    "DataFrameStatFunctions",
    "describe",
    "drop_nulls",
    "fill_nulls",
    "replace_values",
    "summary",
]

_NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal")
_PERCENT = {"25%": 0.25, "50%": 0.5, "75%": 0.75}
_DEFAULT_SUMMARY = ("count", "mean", "stddev", "min", "25%", "50%", "75%", "max")


def _kind(spark_type: str) -> str:
    if spark_type.startswith(_NUMERIC):
        return "number"
    return {"string": "string", "boolean": "boolean"}.get(spark_type, "other")


def _kind_of_value(value: t.Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else "other"


def _subset(df: DataFrame, subset) -> list[str]:
    if subset is None:
        return list(df.columns)
    return [subset] if isinstance(subset, str) else list(subset)


def fill_nulls(df: DataFrame, value, subset=None) -> DataFrame:
    import jobmanager.client.dataframe.functions as F

    types = dict(df.dtypes)
    wanted = _fills(df, value, subset, types)
    columns = []
    for name in df.columns:
        if name not in wanted:
            columns.append(F.col(name))
            continue
        column = F.col(name)
        if types[name] in ("float", "double"):
            column = F.nanvl(column, F.lit(None))
        columns.append(F.coalesce(column, F.lit(wanted[name]).cast(types[name])).alias(name))
    return df.select(*columns)


def _fills(df: DataFrame, value, subset, types: dict) -> dict:
    """The value to fill each column's nulls with: a dict's, else ``value`` in each column
    of ``subset`` of its kind."""
    if isinstance(value, dict):
        return dict(value)
    kind = _kind_of_value(value)
    if kind == "other":
        raise TypeError(f"value should be a float, int, string, bool or dict, got {value!r}")
    return {name: value for name in _subset(df, subset) if _kind(types.get(name, "")) == kind}


def drop_nulls(
    df: DataFrame, how: str = "any", thresh: int | None = None, subset=None
) -> DataFrame:
    import jobmanager.client.dataframe.functions as F

    names = _subset(df, subset)
    types = dict(df.dtypes)
    if thresh is None:
        thresh = len(names) if how == "any" else 1
    present = [
        F.when(F.col(n).isNotNull() & ~F.isnan(F.col(n)), 1).otherwise(0)
        if types.get(n) in ("float", "double")
        else F.when(F.col(n).isNotNull(), 1).otherwise(0)
        for n in names
    ]
    if not present:
        return df
    total = present[0]
    for each in present[1:]:
        total = total + each
    return df.where(total >= F.lit(thresh))


def replace_values(df: DataFrame, to_replace, value=None, subset=None) -> DataFrame:
    import jobmanager.client.dataframe.functions as F

    pairs = _replacement_pairs(to_replace, value)
    kinds = {_kind_of_value(old) for old, _ in pairs}
    types = dict(df.dtypes)
    chosen = {n for n in _subset(df, subset) if _kind(types.get(n, "")) in kinds}
    columns = []
    for name in df.columns:
        if name not in chosen:
            columns.append(F.col(name))
            continue
        matching = [(old, new) for old, new in pairs if _kind_of_value(old) == _kind(types[name])]
        columns.append(_replaced(F, name, types[name], matching))
    return df.select(*columns)


def _replacement_pairs(to_replace, value) -> list[tuple]:
    """``replace``'s arguments as (old, new) pairs: a dict's, two lists' or one value's."""
    if isinstance(to_replace, dict):
        return list(to_replace.items())
    if not isinstance(to_replace, (list, tuple)):
        return [(to_replace, value)]
    values = value if isinstance(value, (list, tuple)) else [value] * len(to_replace)
    if len(values) != len(to_replace):
        raise ValueError("to_replace and value lists should be of the same length")
    return list(zip(to_replace, values))


def _replaced(F, name: str, type_: str, pairs: list[tuple]):
    """The column ``name`` with each old value of ``pairs`` replaced by its new one."""
    if not pairs:
        return F.col(name)
    (old, new), *rest = pairs
    case = F.when(F.col(name) == F.lit(old), F.lit(new).cast(type_))
    for old, new in rest:
        case = case.when(F.col(name) == F.lit(old), F.lit(new).cast(type_))
    return case.otherwise(F.col(name)).alias(name)


def summary(df: DataFrame, *statistics: str) -> DataFrame:
    """Spark's ``summary``: a row a statistic over the numeric and string columns."""
    import jobmanager.client.dataframe.functions as F

    statistics = statistics or _DEFAULT_SUMMARY
    kinds = _summarised(df)
    cells = [
        _statistic(F, statistic, F.col(name), kind).cast("string").alias(f"__s{s}_{c}")
        for s, statistic in enumerate(statistics)
        for c, (name, kind) in enumerate(kinds)
    ]
    found = df.agg(*cells).collect()[0] if cells else ()
    rows = [
        (statistic, *[found[s * len(kinds) + c] for c in range(len(kinds))])
        for s, statistic in enumerate(statistics)
    ]
    names = ["summary", *[name for name, _ in kinds]]
    return df.session.createDataFrame(rows, ", ".join(f"`{n}` string" for n in names))


def describe(df: DataFrame, *cols) -> DataFrame:
    if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
        cols = tuple(cols[0])
    chosen = df.select(*cols) if cols else df
    return summary(chosen, "count", "mean", "stddev", "min", "max")


def _summarised(df: DataFrame) -> list[tuple[str, str]]:
    """The numeric and string columns ``summary`` covers, with their kinds."""
    return [(n, _kind(k)) for n, k in df.dtypes if _kind(k) in ("number", "string")]


# each statistic by the function computing it, and whether it is for numeric columns only (a
# column of another kind shows null)
_STATISTICS = {
    "count": ("count", False),
    "min": ("min", False),
    "max": ("max", False),
    "mean": ("avg", True),
    "stddev": ("stddev", True),
    "count_distinct": ("count_distinct", True),
    "approx_count_distinct": ("approx_count_distinct", True),
}


def _statistic(F, statistic: str, column, kind: str):
    function, numeric_only = _STATISTICS.get(statistic, (None, True))  # None: a percentile
    if numeric_only and kind != "number":
        return F.lit(None)
    if function is not None:
        return getattr(F, function)(column)
    return F.percentile_approx(column, _percentile(statistic), 10000)


def _percentile(statistic: str) -> float:
    """``"75%"`` as 0.75; anything else is no statistic."""
    try:
        fraction = float(statistic[:-1]) / 100 if statistic.endswith("%") else -1.0
    except ValueError:
        fraction = -1.0
    if not 0 <= fraction <= 1:
        raise ValueError(f"{statistic} is not a recognised statistic")
    return fraction


def approx_quantile(df: DataFrame, col, probabilities, relativeError: float):
    import jobmanager.client.dataframe.functions as F

    names = [col] if isinstance(col, str) else list(col)
    accuracy = int(1.0 / relativeError) if relativeError > 0 else 10000
    row = df.select(
        *[
            F.percentile_approx(F.col(n).cast("double"), list(probabilities), accuracy).alias(
                f"__q{i}"
            )
            for i, n in enumerate(names)
        ]
    ).collect()[0]
    found = [[float(v) for v in (row[i] or [])] for i in range(len(names))]
    return found[0] if isinstance(col, str) else found


def _as_number(F, name: str):
    return F.coalesce(F.col(name).cast("double"), F.lit(0.0))


def correlation(df: DataFrame, col1: str, col2: str, method: str | None = None) -> float:
    import jobmanager.client.dataframe.functions as F

    if method not in (None, "pearson"):
        raise unsupported(f"DataFrame.corr(method={method!r})", "Spark computes Pearson's only")
    return df.select(F.corr(_as_number(F, col1), _as_number(F, col2))).collect()[0][0]


def covariance(df: DataFrame, col1: str, col2: str) -> float:
    import jobmanager.client.dataframe.functions as F

    return df.select(F.covar_samp(_as_number(F, col1), _as_number(F, col2))).collect()[0][0]


def crosstab(df: DataFrame, col1: str, col2: str) -> DataFrame:
    import jobmanager.client.dataframe.functions as F

    def text(name):
        return F.coalesce(F.col(name).cast("string"), F.lit("null"))

    pairs = df.select(text(col1).alias("__a"), text(col2).alias("__b"))
    counted = pairs.groupBy("__a").pivot("__b").count()
    values = [c for c in counted.columns if c != "__a"]
    return counted.select(
        F.col("__a").alias(f"{col1}_{col2}"),
        *[F.coalesce(F.col(exp.column(v, quoted=True)), F.lit(0)).alias(v) for v in values],
    )


def freq_items(df: DataFrame, cols, support: float | None = None) -> DataFrame:
    import jobmanager.client.dataframe.functions as F

    support = 0.01 if support is None else support
    if not 1e-4 <= support <= 1:
        raise ValueError(f"support ({support}) must be between 1e-4 and 1")
    names = [cols] if isinstance(cols, str) else list(cols)
    total = df.count()
    columns = []
    for name in names:
        counted = df.groupBy(name).count().where(F.col("count") >= F.lit(support * total))
        items = [row[0] for row in counted.collect()]
        columns.append(
            F.array(*[F.lit(v) for v in items])
            .cast(f"array<{dict(df.dtypes)[name]}>")
            .alias(f"{name}_freqItems")
        )
    return df.limit(1).select(*columns)


class DataFrameNaFunctions(_BaseDataFrameNaFunctions["DataFrame"]):
    def fill(self, value, subset=None) -> DataFrame:
        return fill_nulls(self.df, value, subset)

    def drop(self, how: str = "any", thresh: int | None = None, subset=None) -> DataFrame:
        return drop_nulls(self.df, how, thresh, subset)

    def replace(self, to_replace, value=None, subset=None) -> DataFrame:
        return replace_values(self.df, to_replace, value, subset)


class DataFrameStatFunctions(_BaseDataFrameStatFunctions["DataFrame"]):
    def approxQuantile(self, col, probabilities, relativeError):
        return approx_quantile(self.df, col, probabilities, relativeError)

    def corr(self, col1: str, col2: str, method: str | None = None) -> float:
        return correlation(self.df, col1, col2, method)

    def cov(self, col1: str, col2: str) -> float:
        return covariance(self.df, col1, col2)

    def crosstab(self, col1: str, col2: str) -> DataFrame:
        return crosstab(self.df, col1, col2)

    def freqItems(self, cols, support: float | None = None) -> DataFrame:
        return freq_items(self.df, cols, support)

    def sampleBy(self, col, fractions, seed: int | None = None) -> DataFrame:
        return self.df.sampleBy(col, fractions, seed)
