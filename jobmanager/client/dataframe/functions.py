"""``pyspark.sql.functions`` on Tidal: sqlframe's column functions, each building Spark SQL.

A Python UDF (``udf``, ``pandas_udf``) runs Python per row, which a query cannot: it raises at
the call with the alternative. A function sqlframe does not have raises naming it.
"""

from sqlframe.base.functions import *  # noqa: F403

from jobmanager.client.dataframe.unsupported import unsupported


def udf(f=None, returnType=None, *, useArrow=None):
    raise unsupported("functions.udf", "a Python UDF runs Python per row", "udf")


def pandas_udf(f=None, returnType=None, functionType=None):
    raise unsupported("functions.pandas_udf", "a pandas UDF runs Python per batch", "udf")


_TRANSFORM = (
    "a partition transform of DataFrameWriterV2.partitionedBy, which Tidal does not have",
    "write.partitionBy a column computed with year(), month(), ...",
)
_FILE = (
    "Tidal's planner may compute it in a stage after the scan, where Spark knows no file of a row",
    "read each file on its own and add its name with lit()",
)
REFUSED = {
    "years": _TRANSFORM,
    "months": _TRANSFORM,
    "days": _TRANSFORM,
    "hours": _TRANSFORM,
    "bucket": _TRANSFORM,
    "input_file_name": _FILE,
    "input_file_block_start": _FILE,
    "input_file_block_length": _FILE,
    **{
        name: (
            "Tidal's layer names a query's columns before it runs, and the names of "
            "these columns are the fields of the structs in the array",
            "explode the array and select col.field of each field",
        )
        for name in ("inline", "inline_outer")
    },
    **{
        name: (
            "the planner's SQL parser (sqlglot's Spark dialect) rewrites it into another "
            "function's text",
            None,
        )
        for name in (
            "to_char",
            "parse_json",
            "variant_get",
            "try_variant_get",
            "is_variant_null",
            "schema_of_variant",
            "schema_of_variant_agg",
        )
    },
    "product": (
        "Spark SQL has no PRODUCT (only PySpark's Column API does), and Tidal runs SQL",
        "F.exp(F.sum(F.log(c))) for positive values",
    ),
    **{
        name: (
            "Tidal's layer writes it as a SQL function Spark does not have",
            "listagg over df.select(col).distinct()",
        )
        for name in ("listagg_distinct", "string_agg_distinct")
    },
    **{
        name: (
            "Spark's TIME type is off in the Spark that Tidal's tasks run",
            "a timestamp and date_format(ts, 'HH:mm:ss')",
        )
        for name in (
            "make_time",
            "to_time",
            "try_to_time",
            "time_diff",
            "time_trunc",
            "current_time",
        )
    },
    **{
        name: (
            "Tidal's layer does not yet name a grouping by a time window as Spark does "
            "(window, session_window)",
            "group by F.window(...).alias('w') and read w.start, w.end",
        )
        for name in ("session_window", "window_time")
    },
}


def _refusal(name: str, why: str, alternative: str | None):
    def refuse(*args, **kwargs):
        raise unsupported(f"functions.{name}", why, alternative)

    refuse.__name__ = name
    return refuse


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(name)
    raise unsupported(f"functions.{name}", "it is not in Tidal's DataFrame API")


def _spark_named(name: str, function):
    """``function`` with Spark's name for an unaliased result (``sum(x)``, ``count(1)``)
    where sqlframe's would be ``sum__x__``."""
    import functools

    from sqlframe.base.column import Column

    from jobmanager.client.dataframe.naming import auto_alias, spark_name

    @functools.wraps(function)
    def named(*args, **kwargs):
        result = function(*args, **kwargs)
        if isinstance(result, Column) and auto_alias(result.expression, name):
            inner = result.expression.this
            return Column(inner).alias(spark_name(inner, name))
        return result

    return named


# named by what they hold, not by the call; a generator's columns by the select (methods.py)
_AS_THEY_ARE = {"expr", "col", "column", "lit", "explode", "explode_outer", "stack", "json_tuple"}


def _named_all() -> None:
    import inspect

    from sqlframe.base import functions as base

    for name, value in vars(base).items():
        if (
            inspect.isfunction(value)
            and not name.startswith("_")
            and name not in _AS_THEY_ARE
            and value.__module__ == base.__name__
        ):
            globals()[name] = _spark_named(name, value)


_named_all()
globals().update({name: _refusal(name, *reason) for name, reason in REFUSED.items()})


def _spark_call(name: str):
    """``name`` called as Spark SQL's function of that name, where sqlframe writes another
    dialect's form (``arrays_overlap`` as ``&&``, ``to_char`` as a cast)."""
    from sqlframe.base.column import Column
    from sqlglot import exp

    def call(*cols):
        args = [Column.ensure_col(c).column_expression for c in cols]
        return Column(exp.Anonymous(this=name, expressions=args))

    call.__name__ = name
    return call


arrays_overlap = _spark_call("arrays_overlap")


def percentile(col, percentage, frequency=1):  # sqlframe's is percentile_cont's text
    return _spark_call("percentile")(
        col,
        lit(percentage)
        if not hasattr(  # noqa: F405
            percentage, "expression"
        )
        else percentage,
        lit(frequency),
    )  # noqa: F405


def localtimestamp():
    return current_timestamp().cast("timestamp_ntz").alias("localtimestamp()")  # noqa: F405


def current_catalog():
    return lit("spark_catalog").alias("current_catalog()")  # noqa: F405 - Tidal's one catalogue


def current_database():
    return lit("default").alias("current_database()")  # noqa: F405 - and its one database


def current_schema():
    return lit("default").alias("current_schema()")  # noqa: F405
