"""TPC-H's 22 queries as a PySpark user writes them: DataFrame programs, not SQL text.

Each query reads its tables with ``spark.read.parquet`` and is built from the common DataFrame
API -- ``where``, ``join``, ``groupBy().agg()``, ``select``, ``orderBy``, ``limit`` and the
``F.*`` functions -- with the specification's validation parameters (the constants of the query
texts DuckDB's TPC-H extension gives, ``examples.tpch_dbgen.queries()``), and each gives that
text's columns, names, order and limit. A subquery becomes what a DataFrame user writes for it:
an aggregate joined back (Q2's cheapest supply cost per part, Q17's average quantity per part,
Q20's shipped quantity per part and supplier, Q15's top revenue joined on its value), a one-row
aggregate cross-joined (Q11's threshold, Q22's average balance), ``EXISTS`` and ``IN`` a
``left_semi`` join, ``NOT EXISTS`` and ``NOT IN`` a ``left_anti`` one (Q4, Q16, Q18, Q20, Q21,
Q22). The self-joins (Q7's and Q8's two nations, Q21's three lineitems) rename the second copy's
columns, so no name is ambiguous; so does Q18's set of large orders, whose key would otherwise
be ``l_orderkey`` twice. Ranges of dates are ``between`` two ``datetime.date`` values, as
sqlframe (4.10) cannot alias a literal column inside ``between``.

The queries are in ``queries_1_to_11`` and ``queries_12_to_22``, what they share in ``columns``.
The package is plain PySpark, nothing in it Tidal's: it is how unchanged DataFrame programs are
shown to give PySpark's answers on Tidal, run there through a PySpark-compatible session that
writes SQL (sqlframe) -- and checked under PySpark itself against DuckDB's answers to the query
texts (``tests/sql/test_tpch_dataframes.py``).

    df = run(spark, {"lineitem": "/data/lineitem", ...}, 1)   # or QUERIES[1](spark, tables)
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from .columns import Tables
from .queries_1_to_11 import q1, q2, q3, q4, q5, q6, q7, q8, q9, q10, q11
from .queries_12_to_22 import q12, q13, q14, q15, q16, q17, q18, q19, q20, q21, q22

__all__ = ["QUERIES", "run"] + [f"q{n}" for n in range(1, 23)]


QUERIES = {
    1: q1,
    2: q2,
    3: q3,
    4: q4,
    5: q5,
    6: q6,
    7: q7,
    8: q8,
    9: q9,
    10: q10,
    11: q11,
    12: q12,
    13: q13,
    14: q14,
    15: q15,
    16: q16,
    17: q17,
    18: q18,
    19: q19,
    20: q20,
    21: q21,
    22: q22,
}


def run(spark: SparkSession, tables: Tables, number: int) -> DataFrame:
    """TPC-H query ``number`` (1 to 22) over ``tables`` (each table's Parquet directory by
    name), as a DataFrame still to run."""
    try:
        query = QUERIES[number]
    except KeyError:
        raise ValueError(f"TPC-H has queries 1 to 22, not {number!r}") from None
    return query(spark, tables)
