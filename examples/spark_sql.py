"""PySpark alone answering a SQL query over Parquet tables: the baseline Tidal's SQL is raced
against (``benchmarks/tpch.py``) and the engine its reference answers are checked with.

A query names its tables; each becomes a temporary view of its Parquet directory
(``spark.read.parquet``), as a Spark user would set them up, and ``spark.sql`` runs the text as
it is. Only the tables the query reads are registered: reading a table's footers is part of
running a query, on both sides of the benchmark, and a table the query never reads costs
neither side anything.
"""

from __future__ import annotations

from typing import Mapping

import pyarrow as pa
import sqlglot
from pyspark.sql import DataFrame, SparkSession
from sqlglot import expressions

__all__ = ["spark_answer", "spark_query", "tables_read"]


def spark_query(session: SparkSession, tables: Mapping[str, str], query: str) -> DataFrame:
    """``query`` planned by ``session`` over temporary views of the tables it reads."""
    for name in tables_read(query, tables):
        session.read.parquet(tables[name]).createOrReplaceTempView(name)
    return session.sql(query)


def spark_answer(session: SparkSession, tables: Mapping[str, str], query: str) -> pa.Table:
    """``query``'s result, computed by ``session``, as an Arrow table."""
    return spark_query(session, tables, query).toArrow()


def tables_read(query: str, tables: Mapping[str, str]) -> list[str]:
    """The names in ``tables`` that ``query`` reads (sqlglot, Spark's dialect), sorted; a
    common table expression's own name is not a table."""
    tree = sqlglot.parse_one(query, read="spark")
    return sorted({table.name for table in tree.find_all(expressions.Table)} & set(tables))
