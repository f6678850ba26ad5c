"""Tidal's ``DataFrame``: sqlframe's, whose transformations build a query, with Tidal's actions.

``collect``, ``count``, ``first``, ``take``, ``show``, ``toPandas`` and ``toArrow`` each run one
Tidal job (``jobmanager.client.dataframe.jobs``), named after the action. ``cache`` and
``persist`` keep nothing (each action plans its query whole, from the files). What cannot be a
query (``rdd``, ``foreach``, ``mapInPandas``, streaming) raises at the call.
"""

from __future__ import annotations

import contextlib
import typing as t

from sqlframe.base.catalog import Column as CatalogColumn
from sqlframe.base.dataframe import BaseDataFrame
from sqlframe.base.table import _BaseTable

from jobmanager.client.dataframe.grouping import GroupedData
from jobmanager.client.dataframe.jobs import TidalAnalysisException
from jobmanager.client.dataframe.methods import SparkMethods
from jobmanager.client.dataframe.naming import unresolved_column
from jobmanager.client.dataframe.rows import show_string
from jobmanager.client.dataframe.statistics import DataFrameNaFunctions, DataFrameStatFunctions
from jobmanager.client.dataframe.unsupported import unsupported, where

__all__ = ["DataFrame", "DataFrameNaFunctions", "DataFrameStatFunctions", "GroupedData", "Table"]


class DataFrame(
    SparkMethods,
    BaseDataFrame[
        "SparkSession", "DataFrameWriter", DataFrameNaFunctions, DataFrameStatFunctions, GroupedData
    ],
):
    _na = DataFrameNaFunctions
    _stat = DataFrameStatFunctions
    _group_data = GroupedData

    def _validate_plan(self) -> None:
        """A column that is not there is PySpark's ``AnalysisException`` at the line that named
        it, as Spark analyses each DataFrame when it is made, not at the action."""
        missing = unresolved_column(self.expression, self.session.catalog._schema)
        if missing is not None:
            raise TidalAnalysisException(
                f"{where()}: a column, variable, or function parameter with name `{missing}` "
                "cannot be resolved",
                "UNRESOLVED_COLUMN.WITH_SUGGESTION",
            )

    @contextlib.contextmanager
    def _action(self, name: str):
        with self.session.runner.acting(name):
            yield

    def collect(self) -> list:
        with self._action("collect"):
            return super().collect()

    def count(self) -> int:
        with self._action("count"):
            return super().count()

    def head(self, n: int | None = None):
        with self._action("head" if n is not None else "first"):
            return super().head(n)

    def first(self):
        with self._action("first"):
            return super().head()

    def take(self, num: int) -> list:
        with self._action("take"):
            return self.limit(num).collect()

    def isEmpty(self) -> bool:
        with self._action("isEmpty"):
            return super().isEmpty()

    def toPandas(self):
        with self._action("toPandas"):
            return super().toPandas()

    def toArrow(self):
        with self._action("toArrow"):
            return self.session._fetch_arrow(self._get_expressions(optimize=False))

    def toLocalIterator(self, prefetchPartitions: bool = False):
        with self._action("toLocalIterator"):
            return iter(super().collect())

    def show(self, n: int = 20, truncate: bool | int = True, vertical: bool = False) -> None:
        if vertical:
            raise unsupported("DataFrame.show(vertical=True)", "Tidal shows rows as a table")
        with self._action("show"):
            rows = self._convert_leaf_to_cte().limit(n + 1).collect()
        names = list(self.columns)
        print(show_string(names, [tuple(r) for r in rows[:n]], len(rows) > n, truncate), end="")

    def cache(self) -> DataFrame:
        return self

    def persist(self, storageLevel: t.Any = None) -> DataFrame:
        return self

    def unpersist(self, blocking: bool = False) -> DataFrame:
        return self

    def checkpoint(self, eager: bool = True) -> DataFrame:
        return self

    def localCheckpoint(self, eager: bool = True) -> DataFrame:
        return self

    @property
    def isStreaming(self) -> bool:
        return False

    @property
    def rdd(self):
        raise unsupported("DataFrame.rdd", "Tidal has no RDDs", "rdd")

    def foreach(self, f) -> None:
        raise unsupported("DataFrame.foreach", "it runs Python per row", "foreach")

    def foreachPartition(self, f) -> None:
        raise unsupported("DataFrame.foreachPartition", "it runs Python per partition", "foreach")

    def mapInPandas(self, func, schema, barrier: bool = False):
        raise unsupported("DataFrame.mapInPandas", "it runs Python per batch", "udf")

    def mapInArrow(self, func, schema, barrier: bool = False):
        raise unsupported("DataFrame.mapInArrow", "it runs Python per batch", "udf")

    @property
    def writeStream(self):
        raise unsupported("DataFrame.writeStream", "Tidal runs batch jobs", "streaming")

    def explain(self, extended: t.Any = None, mode: str | None = None) -> None:
        """Tidal's plan of this DataFrame's query: its vertices, their SQL and edges."""
        sql = self.session._query_sql(self._get_expressions(optimize=False))
        planned, _, _ = self.session.runner.plan(sql, "explain")
        print(planned.explain(), end="")

    @property
    def _typed_columns(self) -> list[CatalogColumn]:
        """The columns and their Spark types as Tidal's planner gives them."""
        sql = self.session._query_sql(self._get_expressions(optimize=False))
        planned, _, _ = self.session.runner.plan(sql, "schema")
        return [
            CatalogColumn(
                name=name,
                dataType=_known(kind),
                nullable=True,
                description=None,
                isPartition=False,
                isBucket=False,
            )
            for name, kind in planned.schema
        ]


def _known(kind: str) -> str:
    return "string" if kind in ("unknown", "null") else kind


class Table(DataFrame, _BaseTable["DataFrame"]):
    _df = DataFrame
