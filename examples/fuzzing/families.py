"""The families of generated queries and programs, by name, and what a generated one is.

A family names a feature of SQL (or of the DataFrame API) a run can be restricted to
(``--families``), so that a run can aim at what a planner change touched, or leave out what
Tidal does not take yet. A query has one main family, the one it was drawn for, and may use the
features of other families that are switched on (a join's WHERE may hold an EXISTS only when
``subqueries`` is on): ``features`` lists every family it used, so a finding can be sorted by
what it needs.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DATAFRAME_FAMILIES", "FAMILIES", "SQL_FAMILIES", "FuzzCase", "check_families"]

SQL_FAMILIES = {
    "joins": "inner, left, right, full, left semi, left anti and cross joins; non-equi "
    "residuals and ON conditions with OR",
    "aggregates": "GROUP BY with count, count distinct, sum, avg, min, max; HAVING; DISTINCT",
    "grouping_sets": "GROUPING SETS, ROLLUP, CUBE, GROUP BY a, ROLLUP(b, c); GROUPING(), "
    "GROUPING_ID()",
    "windows": "row_number, rank, dense_rank, lag, lead; sum, avg, min, max, count over ROWS "
    "and RANGE frames",
    "subqueries": "EXISTS, NOT EXISTS, IN, NOT IN and scalar subqueries under AND, OR, NOT, "
    "CASE, in SELECT, HAVING and ON; correlated by equality, non-equality, "
    "several columns, two levels out",
    "set_operations": "UNION, INTERSECT, EXCEPT, each ALL and DISTINCT",
    "nulls_case": "CASE, coalesce, nullif, IS [NOT] NULL, NOT IN lists holding NULL",
    "order_limit": "ORDER BY with NULLS FIRST/LAST that orders totally, LIMIT, OFFSET",
    "functions": "string (upper, lower, trim, substring, concat, length, like), date (year, "
    "month, date_add, datediff) and decimal arithmetic",
}
DATAFRAME_FAMILIES = {
    "df_joins": "DataFrame.join of every kind, then select and filter",
    "df_aggregates": "groupBy().agg(), rollup() and cube()",
    "df_windows": "Window.partitionBy().orderBy() with row_number, rank, lag, sums over frames",
    "df_columns": "withColumn, filter, when/otherwise, string and date functions, orderBy",
}
FAMILIES = {**SQL_FAMILIES, **DATAFRAME_FAMILIES}


@dataclass(frozen=True, slots=True)
class FuzzCase:
    """One generated case: a SQL query (``sql``) or a DataFrame program (``program``, Python
    code that binds ``result``; ``sql`` is then empty). ``ordered``: its answer is compared
    row by row, because its last ORDER BY orders its rows totally; otherwise as multisets.
    ``name`` says where it came from (seed and index), so it can be drawn again."""

    name: str
    family: str
    features: tuple[str, ...]
    sql: str = ""
    program: str = ""
    ordered: bool = False

    @property
    def text(self) -> str:
        return self.sql or self.program

    @property
    def is_program(self) -> bool:
        return bool(self.program)


def check_families(names) -> tuple[str, ...]:
    """The names, checked: an unknown one is a ValueError listing the known ones."""
    names = tuple(names)
    unknown = [name for name in names if name not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")
    return names
