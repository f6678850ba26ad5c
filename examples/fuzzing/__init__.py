"""A differential fuzzer of Tidal's SQL planner and DataFrame layer against PySpark (issue 62).

Seeded random tables (``tables``) and seeded random queries and DataFrame programs over them
(``queries``, ``programs``) run in plain PySpark and in Tidal (``runner``); every answer is
classified ``same``, ``different``, ``refused`` (Tidal raised where PySpark answered) or
``skipped`` (PySpark raised: not valid Spark). A query that differs or is refused is shrunk
(``shrink``) to the smallest one that still does. ``benchmarks/fuzz.py`` runs it;
``tests/sql/test_fuzz.py`` tests it and runs a fixed seed; ``tests/sql/test_fuzz_regressions.py``
keeps what it found.
"""

from examples.fuzzing.families import DATAFRAME_FAMILIES, FAMILIES, SQL_FAMILIES, FuzzCase
from examples.fuzzing.queries import generate_queries
from examples.fuzzing.tables import TABLES, write_tables

__all__ = [
    "DATAFRAME_FAMILIES",
    "FAMILIES",
    "SQL_FAMILIES",
    "TABLES",
    "FuzzCase",
    "generate_queries",
    "write_tables",
]
