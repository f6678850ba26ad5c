"""Planned queries give DuckDB's answers: random small tables, queries drawn from templates
(filters, joins of each kind, group-bys with each aggregate, windows, set operations,
subqueries), each run as the planner cut it, every vertex split in two subtasks that get what
Tidal's edges would give them, in one local Spark session (``tests/examples/one_session.py``).

DuckDB runs the same text over the same Parquet files, with Spark's order of NULLs (first when
ascending). Spark's AVG of a decimal is a decimal where DuckDB's is a double, so values are
compared by ``examples.compare_sql``'s rules.
"""

from __future__ import annotations

import decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobmanager.model.config import BROADCAST_THRESHOLD, READ_WHOLE_THRESHOLD, Configuration
from jobmanager.model.operators import ParquetSink
from jobmanager.planner import Catalog, plan_sql

pytestmark = pytest.mark.spark

duckdb = pytest.importorskip("duckdb")

_INTS = st.one_of(st.none(), st.integers(-3, 6))
_KEYS = st.integers(0, 5)
_MONEY = st.one_of(st.none(), st.decimals(-50, 50, places=2, allow_nan=False, allow_infinity=False))
_WORDS = st.one_of(st.none(), st.sampled_from(["a", "b", "c", "dd", ""]))

_ROWS_1 = st.lists(st.tuples(_KEYS, _INTS, _MONEY, _WORDS), min_size=1, max_size=25)
_ROWS_2 = st.lists(st.tuples(_KEYS, _INTS, _WORDS), min_size=0, max_size=15)

_PREDICATES = [
    "b > 1",
    "b IS NULL",
    "c < 10.5",
    "s IN ('a', 'dd')",
    "b BETWEEN 0 AND 3",
    "(b > 2 OR s = 'a')",
    "NOT (c > 0)",
    "s LIKE 'd%'",
    "COALESCE(b, 0) = a",
]
_AGGREGATES = {
    "sums": "SUM(c), COUNT(*), COUNT(b), AVG(c), AVG(b)",
    "extremes": "MIN(s), MAX(c), BOOL_AND(b > 0), BOOL_OR(b > 0), BIT_AND(b), BIT_XOR(b)",
    "spread": "STDDEV_SAMP(b), VAR_POP(c), COUNT(*)",
    "distinct": "COUNT(DISTINCT b), SUM(c)",
    "distinct sum": "SUM(DISTINCT b)",
}
_TEMPLATES = {
    "filter": "SELECT a, b, c, s FROM t1 WHERE {where}",
    **{
        f"{kind.lower()}": "SELECT t1.a, t1.b, t2.a AS a2, t2.d FROM t1 "
        + kind
        + " t2 ON t1.a = t2.a{on}"
        for kind in ("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN")
    },
    **{
        f"group by {name}": "SELECT {keys}" + aggregates + " FROM t1 WHERE {where}{group}"
        for name, aggregates in _AGGREGATES.items()
    },
    "window sum": "SELECT a, b, s, SUM(b) OVER (PARTITION BY a) AS w FROM t1",
    "window rank": "SELECT a, b, s, RANK() OVER (PARTITION BY a ORDER BY b, s) AS w FROM t1",
    "window everything": "SELECT a, b, MAX(c) OVER () AS w FROM t1 WHERE {where}",
    **{
        f"set {operation.lower()}": "SELECT a, s FROM t1 WHERE {where} "
        + operation
        + " SELECT a, e FROM t2"
        for operation in (
            "UNION",
            "UNION ALL",
            "INTERSECT",
            "EXCEPT",
            "INTERSECT ALL",
            "EXCEPT ALL",
        )
    },
    "exists": "SELECT a, b, s FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.a = t1.a{inner})",
    "not exists": "SELECT a, b, s FROM t1 WHERE NOT EXISTS (SELECT 1 FROM t2 WHERE t2.a = t1.a "
    "AND t2.e = t1.s)",
    "in": "SELECT a, b, s FROM t1 WHERE a IN (SELECT a FROM t2 WHERE d > 0) AND {where}",
    "not in": "SELECT a, b, s FROM t1 WHERE b NOT IN (SELECT d FROM t2)",
    "scalar": "SELECT a, b, s FROM t1 WHERE b > (SELECT AVG(d) FROM t2)",
    "correlated scalar": "SELECT a, b, s FROM t1 WHERE b >= (SELECT MIN(d) FROM t2 "
    "WHERE t2.a = t1.a)",
    "correlated count": "SELECT a, b FROM t1 WHERE 2 > (SELECT COUNT(*) FROM t2 WHERE t2.a = t1.a)",
    "cte twice": "WITH k AS (SELECT a, SUM(b) AS t FROM t1 GROUP BY a) "
    "SELECT x.a, x.t, y.t AS u FROM k x JOIN k y ON x.a = y.a + 1",
    "top n": "SELECT a, b, c, s FROM t1 ORDER BY a DESC, b, c, s LIMIT {limit}",
    "filtered groups": "SELECT g.a, g.s, g.t, g.n, t2.d FROM (SELECT a, s, SUM(c) AS t, "
    "COUNT(*) AS n FROM t1 GROUP BY a, s) g JOIN t2 ON g.a = t2.a "
    "AND g.s = t2.e WHERE t2.d > 0",
    "filtered groups semi": "SELECT a, t FROM (SELECT a, SUM(c) AS t FROM t1 GROUP BY a "
    "HAVING COUNT(*) > 1) g WHERE g.a IN (SELECT a FROM t2 WHERE d > 0)",
    "filtered read": "SELECT x.a, x.b, z.d, z.e FROM t1 x JOIN t2 y ON x.a = y.a JOIN t2 z "
    "ON z.a = y.a AND z.e = y.e WHERE y.d > 0",
    **{
        f"filtered {kind}": f"SELECT x.a, x.b, x.c, x.s, y.d FROM t1 x JOIN t2 y ON x.a = y.a "
        f"WHERE y.d > 0 AND {test} (SELECT 1 FROM t1 z WHERE z.a = x.a "
        "AND z.b <> x.b)"
        for kind, test in (("semi", "EXISTS"), ("anti", "NOT EXISTS"))
    },
}


@st.composite
def filled(draw, template: str) -> str:
    keys = draw(st.sampled_from(["a", "s", "a, s", ""]))
    having = draw(st.sampled_from(["", " HAVING COUNT(*) > 1"]))
    return template.format(
        where=draw(st.sampled_from(_PREDICATES)),
        on=draw(st.sampled_from(["", " AND t1.b < t2.d", " AND t2.e = 'a'"])),
        inner=draw(st.sampled_from(["", " AND t2.d > t1.b"])),
        keys=f"{keys}, " if keys else "",
        group=f" GROUP BY {keys}{having}" if keys else "",
        limit=draw(st.integers(1, 6)),
    )


@pytest.fixture(scope="module")
def duck():
    connection = duckdb.connect()
    connection.execute("SET default_null_order = 'nulls_first_on_asc_last_on_desc'")
    return connection


@pytest.mark.parametrize("template", list(_TEMPLATES.values()), ids=list(_TEMPLATES))
@settings(
    max_examples=2,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows_1=_ROWS_1, rows_2=_ROWS_2, data=st.data())
def test_a_planned_query_gives_duckdbs_answer(
    template, rows_1, rows_2, data, tmp_path_factory, spark_session, duck
):
    query = data.draw(filled(template), label="query")
    from examples.compare import query_is_ordered, sql_difference
    from tests.examples.one_session import run_in_one_session, subtask_counts

    root = tmp_path_factory.mktemp("answers")
    paths = {"t1": _write(root / "t1", rows_1, _T1), "t2": _write(root / "t2", rows_2, _T2)}
    planned = plan_sql(
        query,
        Catalog.from_tables(paths),
        ParquetSink(str(root / "out")),
        _OWN_VERTICES if template == _TEMPLATES["filtered read"] else None,
    )
    got = run_in_one_session(planned.graph, spark_session, subtask_counts(planned.graph))
    difference = sql_difference(got, _duckdb_answer(duck, paths, query), query_is_ordered(query))
    assert difference is None, f"{query}\n{difference}\n{planned.explain()}"


# tables this small are read whole where they are broadcast; a broadcast side is filtered
# where it is read only when it is a vertex of its own
_OWN_VERTICES = Configuration({READ_WHOLE_THRESHOLD.key: -1})
_T1 = pa.schema(
    [("a", pa.int32()), ("b", pa.int32()), ("c", pa.decimal128(10, 2)), ("s", pa.string())]
)
_T2 = pa.schema([("a", pa.int32()), ("d", pa.int32()), ("e", pa.string())])


def _write(directory, rows, schema: pa.Schema) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    columns = list(zip(*rows)) if rows else [[] for _ in schema]
    table = pa.table(
        [
            pa.array([_plain(v) for v in column], field.type)
            for column, field in zip(columns, schema)
        ],
        schema=schema,
    )
    half = table.num_rows // 2
    pq.write_table(table.slice(0, half), directory / "part-0.parquet")
    pq.write_table(table.slice(half), directory / "part-1.parquet")
    return str(directory)


def _plain(value):
    return decimal.Decimal(value) if isinstance(value, decimal.Decimal) else value


def test_csv_and_hive_partitioned_tables_give_duckdbs_answer(tmp_path, spark_session, duck):
    """A CSV table typed from its first block, and a hive-partitioned Parquet table whose
    partition column is read as a date, pruned by the query's filter."""
    from examples.compare import sql_difference
    from tests.examples.one_session import run_in_one_session, subtask_counts

    (tmp_path / "people").mkdir()
    (tmp_path / "people" / "part-0.csv").write_text(
        "id,name,score\n1,ann,2.5\n2,bob,\n3,cy,4.0\n4,dee,1.25\n"
    )
    for day, ids in (("2024-01-01", [1, 2]), ("2024-01-02", [2, 3, 3]), ("2024-01-03", [4])):
        _write(
            tmp_path / "visits" / f"day={day}",
            [(i,) for i in ids],
            pa.schema([("person", pa.int64())]),
        )
    tables = {
        "people": str(tmp_path / "people"),
        "visits": {"path": str(tmp_path / "visits"), "partitioning": "hive"},
    }
    query = (
        "SELECT p.name, v.day, COUNT(*) AS n, MAX(p.score) AS best FROM visits v "
        "JOIN people p ON p.id = v.person WHERE v.day >= DATE'2024-01-02' "
        "GROUP BY p.name, v.day ORDER BY p.name, v.day"
    )
    planned = plan_sql(query, Catalog.from_tables(tables), ParquetSink(str(tmp_path / "out")))
    scan = next(v for v in planned.graph.vertices if v.sources and "visits" in v.name)
    assert scan.sources[0].partition_filter == (("day", "date", ">=", ("2024-01-02",)),)
    got = run_in_one_session(planned.graph, spark_session, subtask_counts(planned.graph))
    duck.execute(
        f"CREATE OR REPLACE VIEW people AS SELECT * FROM "
        f"read_csv('{tmp_path}/people/*.csv', header = true)"
    )
    duck.execute(
        f"CREATE OR REPLACE VIEW visits AS SELECT * FROM "
        f"read_parquet('{tmp_path}/visits/**/*.parquet', hive_partitioning = true)"
    )
    expected = duck.execute(query).arrow()
    expected = expected.read_all() if hasattr(expected, "read_all") else expected
    assert sql_difference(got, expected, ordered=True) is None


@pytest.mark.parametrize(
    "config",
    [
        _OWN_VERTICES,  # the right sides broadcast
        Configuration({BROADCAST_THRESHOLD.key: -1}),  # both sides hashed
    ],
    ids=["broadcast", "hashed"],
)
def test_semi_and_anti_joins_on_distinct_keys_give_duckdbs_answer(
    tmp_path, spark_session, duck, config
):
    """TPC-H q22's NOT EXISTS: a right side whose keys repeat is sent, broadcast or hashed, as
    each task's distinct keys; the subtasks of the producer each send theirs, so a key comes
    twice."""
    from examples.compare import sql_difference
    from tests.examples.one_session import run_in_one_session, subtask_counts

    rows_1 = [(i % 6, i % 5, None, f"s{i}") for i in range(12)]
    rows_2 = [(i % 3, i % 4 + 2, "e") for i in range(40)]
    paths = {"t1": _write(tmp_path / "t1", rows_1, _T1), "t2": _write(tmp_path / "t2", rows_2, _T2)}
    query = (
        "SELECT a, b, s FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.a = t1.a) "
        "AND NOT EXISTS (SELECT 1 FROM t2 x WHERE x.d = t1.b)"
    )
    planned = plan_sql(
        query, Catalog.from_tables(paths), ParquetSink(str(tmp_path / "out")), config
    )
    distinct = [
        v.name
        for v in planned.graph.vertices
        if v.name.startswith("scan t2") and "GROUP BY" in v.operator.sql
    ]
    assert len(distinct) == 2, planned.explain()
    got = run_in_one_session(planned.graph, spark_session, subtask_counts(planned.graph))
    assert sql_difference(got, _duckdb_answer(duck, paths, query), ordered=False) is None


def test_a_looked_up_side_cut_to_the_kept_sides_keys_in_the_task_gives_duckdbs_answer(
    tmp_path, spark_session, duck
):
    """TPC-H q21: an EXISTS and a NOT EXISTS that also compare another column, hashed into
    the task of the side they keep rows of; each task first keeps only the looked-up rows
    whose keys that side holds, the NOT EXISTS taking them from below the EXISTS. NULL keys on
    both sides, and keys only one side has."""
    from examples.compare import sql_difference
    from tests.examples.one_session import run_in_one_session, subtask_counts

    rows_1 = [(i % 9 if i % 7 else None, i % 4, None, f"s{i}") for i in range(30)]
    rows_2 = [(i % 13 if i % 5 else None, i % 3, "e") for i in range(200)]
    paths = {"t1": _write(tmp_path / "t1", rows_1, _T1), "t2": _write(tmp_path / "t2", rows_2, _T2)}
    query = (
        "SELECT a, b, s FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.a = t1.a "
        "AND t2.d <> t1.b) AND NOT EXISTS (SELECT 1 FROM t2 x WHERE x.a = t1.a "
        "AND x.d > t1.b + 1)"
    )
    planned = plan_sql(
        query,
        Catalog.from_tables(paths),
        ParquetSink(str(tmp_path / "out")),
        Configuration({BROADCAST_THRESHOLD.key: -1}),
    )
    (join,) = [v for v in planned.graph.vertices if v.name.startswith("join")]
    assert join.operator.sql.count("LEFT SEMI JOIN") == 3, planned.explain()  # EXISTS, 2 cuts
    got = run_in_one_session(planned.graph, spark_session, subtask_counts(planned.graph))
    assert sql_difference(got, _duckdb_answer(duck, paths, query), ordered=False) is None


@pytest.mark.parametrize("test", ["EXISTS", "NOT EXISTS"])
def test_a_looked_up_table_filtered_by_the_kept_sides_keys_gives_duckdbs_answer(
    tmp_path, spark_session, duck, test
):
    """TPC-H q04 and q22: the table EXISTS or NOT EXISTS looks up is semi-joined in its scan
    with the keys of the filtered side it keeps rows of; a key in both sides' NULLs or in
    neither keeps nothing, and a kept row whose key the scan drops meets nothing either way."""
    from examples.compare import sql_difference
    from tests.examples.one_session import run_in_one_session, subtask_counts

    rows_1 = [(i % 7 if i % 5 else None, i % 4, None, f"s{i % 3}") for i in range(14)]
    rows_2 = [(i % 9 if i % 6 else None, i % 5, "e") for i in range(3000)]
    paths = {"t1": _write(tmp_path / "t1", rows_1, _T1), "t2": _write(tmp_path / "t2", rows_2, _T2)}
    query = (
        f"SELECT a, b, s FROM t1 WHERE b > 1 AND {test} (SELECT 1 FROM t2 "
        "WHERE t2.a = t1.a AND t2.d < 3)"
    )
    small = Catalog.from_tables(paths).table("t1").listed_bytes(["a", "b", "s"])
    planned = plan_sql(
        query,
        Catalog.from_tables(paths),
        ParquetSink(str(tmp_path / "out")),
        Configuration(
            {
                BROADCAST_THRESHOLD.key: small,
                READ_WHOLE_THRESHOLD.key: -1,
            }
        ),
    )
    scan = next(v for v in planned.graph.vertices if v.name.startswith("scan t2"))
    assert "LEFT SEMI JOIN" in scan.operator.sql, planned.explain()
    got = run_in_one_session(planned.graph, spark_session, subtask_counts(planned.graph))
    assert sql_difference(got, _duckdb_answer(duck, paths, query), ordered=False) is None


@pytest.mark.parametrize("kept, filtered", [(5, True), (50, False)])
def test_a_hashed_scan_filtered_by_a_selective_small_side_gives_duckdbs_answer(
    tmp_path, spark_session, duck, kept, filtered
):
    """TPC-H q10 at scale 10: a table too big to broadcast, hashed to its join, is semi-joined
    in its scan with the keys of a small input on the other side whose range filter keeps a
    20th of its table's rows (``d`` spans 0-99 in the files), so fewer of its rows cross; a
    filter keeping half of them leaves the scan as it was. NULL keys on every side."""
    from examples.compare import sql_difference
    from tests.examples.one_session import run_in_one_session, subtask_counts

    rows_1 = [(i % 40 if i % 11 else None, i % 4, None, f"word {i}") for i in range(3000)]
    rows_2 = [(i % 40 if i % 7 else None, i, "e") for i in range(100)]
    paths = {"t1": _write(tmp_path / "t1", rows_1, _T1), "t2": _write(tmp_path / "t2", rows_2, _T2)}
    query = (
        "SELECT x.s, y.d, z.b FROM t1 x JOIN t2 y ON x.a = y.a JOIN t1 z ON z.a = y.a "
        f"WHERE y.d < {kept}"
    )
    catalog = Catalog.from_tables(paths)
    threshold = catalog.table("t2").listed_bytes(["a", "d"])
    assert threshold < catalog.table("t1").listed_bytes(["a", "b"])  # t1 is hashed
    planned = plan_sql(
        query,
        catalog,
        ParquetSink(str(tmp_path / "out")),
        Configuration(
            {
                BROADCAST_THRESHOLD.key: threshold,
                READ_WHOLE_THRESHOLD.key: -1,
            }
        ),
    )
    scans = [v.operator.sql for v in planned.graph.vertices if v.name.startswith("scan t1")]
    assert any("LEFT SEMI JOIN" in sql for sql in scans) is filtered, planned.explain()
    got = run_in_one_session(planned.graph, spark_session, subtask_counts(planned.graph))
    assert sql_difference(got, _duckdb_answer(duck, paths, query), ordered=False) is None


def _duckdb_answer(duck, paths: dict[str, str], query: str) -> pa.Table:
    for name, path in paths.items():
        duck.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet('{path}/*')")
    expected = duck.execute(query).arrow()
    return expected.read_all() if hasattr(expected, "read_all") else expected
