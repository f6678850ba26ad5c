"""``pyspark`` bound to Tidal in this process: what ``tidal run pipeline.py`` does before it runs
an unchanged PySpark script.

The script's ``from pyspark.sql import SparkSession, functions as F`` then gets Tidal's session
and functions (``jobmanager.client.dataframe``), so ``SparkSession.builder.getOrCreate()`` is a
Tidal session and each action a Tidal job. Only this client process is bound: the TaskManagers
import the real PySpark, which runs each task's piece. ``pyspark.errors`` stays PySpark's own,
so a script catching ``AnalysisException`` catches Tidal's too. Anything of PySpark the binding
does not give (``pyspark.SparkContext``, ``pyspark.sql.streaming``, ``pyspark.pandas``) raises
Tidal's one-line error at the line that used it.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["bound_to_tidal"]

_GIVEN = {
    "pyspark.sql.functions": "jobmanager.client.dataframe.functions",
    "pyspark.sql.types": "jobmanager.client.dataframe.types",
    "pyspark.sql.window": "jobmanager.client.dataframe.window",
    "pyspark.sql.column": "jobmanager.client.dataframe.column",
    "pyspark.sql.dataframe": "jobmanager.client.dataframe.dataframe",
    "pyspark.sql.session": "jobmanager.client.dataframe.session",
    "pyspark.sql.readwriter": "jobmanager.client.dataframe.readwriter",
    "pyspark.sql.group": "jobmanager.client.dataframe.dataframe",
}
_REFUSED = {
    "pyspark.sql.streaming": ("pyspark.sql.streaming", "Tidal runs batch jobs", "streaming"),
    "pyspark.rdd": ("pyspark.rdd", "Tidal has no RDDs", "rdd"),
    "pyspark.context": ("pyspark.context", "Tidal has no SparkContext (RDDs)", "rdd"),
    "pyspark.pandas": (
        "pyspark.pandas",
        "Tidal runs PySpark's DataFrame API",
        "use pyspark.sql DataFrames",
    ),
    "pyspark.streaming": ("pyspark.streaming", "Tidal runs batch jobs", "streaming"),
    "pyspark.ml": ("pyspark.ml", "Tidal runs queries", None),
    "pyspark.mllib": ("pyspark.mllib", "Tidal runs queries", None),
}


class SparkConf:
    """``pyspark.SparkConf`` for a builder's ``config(conf=...)``: keys and values, no JVM."""

    def __init__(self, loadDefaults: bool = True) -> None:
        self._values: dict[str, str] = {}

    def set(self, key: str, value: Any) -> SparkConf:
        self._values[key] = str(value)
        return self

    def setAll(self, pairs) -> SparkConf:
        for key, value in pairs:
            self.set(key, value)
        return self

    def setAppName(self, value: str) -> SparkConf:
        return self.set("spark.app.name", value)

    def setMaster(self, value: str) -> SparkConf:
        return self.set("spark.master", value)

    def get(self, key: str, defaultValue: str | None = None) -> str | None:
        return self._values.get(key, defaultValue)

    def getAll(self) -> list[tuple[str, str]]:
        return list(self._values.items())


class StorageLevel:
    """``pyspark.StorageLevel``'s names, for ``persist``, which keeps nothing on Tidal."""

    DISK_ONLY = MEMORY_ONLY = MEMORY_AND_DISK = MEMORY_AND_DISK_DESER = OFF_HEAP = "level"


def _refusing(module: str, why: str, alternative: str | None) -> types.ModuleType:
    facade = types.ModuleType(module)

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        from jobmanager.client.dataframe.unsupported import unsupported

        raise unsupported(f"{module}.{name}", why, alternative)

    facade.__getattr__ = __getattr__
    return facade


def _modules() -> dict[str, types.ModuleType]:
    import importlib

    import pyspark as real
    from pyspark.errors import AnalysisException

    from jobmanager.client import dataframe
    from jobmanager.errors import TidalError

    top = _refusing("pyspark", "Tidal runs PySpark's DataFrame API (pyspark.sql)", None)
    top.__version__ = getattr(real, "__version__", "4")
    top.SparkConf = SparkConf
    top.StorageLevel = StorageLevel
    sql = _refusing("pyspark.sql", "it is not in Tidal's DataFrame API", None)
    for name in dataframe.__all__:
        setattr(sql, name, getattr(dataframe, name))
    sql.SparkSession = dataframe.SparkSession
    modules = {"pyspark": top, "pyspark.sql": sql}
    for name, target in _GIVEN.items():
        modules[name] = importlib.import_module(target)
        setattr(sql, name.rsplit(".", 1)[1], modules[name])
    utils = types.ModuleType("pyspark.sql.utils")
    utils.AnalysisException = AnalysisException  # PySpark's own: Tidal's errors derive from it
    utils.TidalError = TidalError
    modules["pyspark.sql.utils"] = utils
    top.sql = sql
    for name, (module, why, alternative) in _REFUSED.items():
        modules[name] = _refusing(module, why, alternative)
        parent, _, child = name.rpartition(".")
        setattr(modules[parent], child, modules[name])
    top.errors = sys.modules.get("pyspark.errors") or importlib.import_module("pyspark.errors")
    return modules


@contextlib.contextmanager
def bound_to_tidal(
    options: Mapping[str, Any] | None = None, client_factory: Callable[[], Any] | None = None
) -> Iterator[None]:
    """``pyspark`` is Tidal's inside: sessions take ``options`` first, and reach the cluster
    through ``client_factory`` (default: join or start a local one at the first action)."""
    import pyspark.errors  # noqa: F401 - PySpark's own errors stay importable

    from jobmanager.client.dataframe.jobs import QueryRunner

    saved = {name: module for name, module in sys.modules.items() if _is_pyspark(name)}
    given = _modules()
    defaults, factory = QueryRunner.defaults, QueryRunner.client_factory
    QueryRunner.defaults, QueryRunner.client_factory = dict(options or {}), client_factory
    for name in _replaced_modules(saved, given):
        del sys.modules[name]
    sys.modules.update(given)
    try:
        yield
    finally:
        for name in [n for n in sys.modules if _is_pyspark(n)]:
            del sys.modules[name]
        sys.modules.update(saved)
        QueryRunner.defaults, QueryRunner.client_factory = defaults, factory


def _is_pyspark(module: str) -> bool:
    return module == "pyspark" or module.startswith("pyspark.")


def _replaced_modules(saved: dict, given: dict) -> list[str]:
    """PySpark's modules Tidal's binding does not give, but for its errors: forgotten while
    bound, so an import inside finds Tidal's."""
    return [n for n in saved if n not in given and not n.startswith("pyspark.errors")]
