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


_AS_THEY_ARE = {"expr", "col", "column", "lit"}  # named by what they hold, not by the call


def _named_all() -> None:
    import inspect

    from sqlframe.base import functions as base

    for name, value in vars(base).items():
        if (inspect.isfunction(value) and not name.startswith("_") and name not in _AS_THEY_ARE
                and value.__module__ == base.__name__):  # fmt: skip
            globals()[name] = _spark_named(name, value)


_named_all()
