"""One test per family of constructs Spark users write, each query's planned answer against
PySpark's on the same files (``tests.sql.differential``)."""

from __future__ import annotations

import pytest

from tests.sql.differential import differences, write_tables

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return write_tables(tmp_path_factory.mktemp("constructs"))


GROUPING_SETS = [
    "SELECT dept, sum(salary) AS s, count(*) AS n FROM emp GROUP BY ROLLUP(dept)",
    "SELECT dept, mgr, sum(salary) AS s FROM emp GROUP BY CUBE(dept, mgr)",
    "SELECT dept, mgr, count(*) FROM emp GROUP BY GROUPING SETS ((dept), (mgr), ())",
    "SELECT dept, mgr, hired, count(*) AS n FROM emp GROUP BY dept, ROLLUP(mgr, hired)",
    "SELECT dept, mgr, max(bonus) FROM emp GROUP BY dept, mgr WITH ROLLUP",
    "SELECT dept, mgr, min(salary) FROM emp GROUP BY dept, mgr WITH CUBE",
    "SELECT dept, grouping(dept) AS g, grouping_id(dept, mgr) AS gid, count(*) FROM emp "
    "GROUP BY CUBE(dept, mgr) ORDER BY gid, dept NULLS FIRST, g, 4",
    "SELECT dept, sum(salary) FROM emp GROUP BY GROUPING SETS ((dept), (dept), ())",
    "SELECT dept, count(DISTINCT mgr) AS managers, avg(bonus) AS b FROM emp "
    "GROUP BY ROLLUP(dept) HAVING count(*) > 1",
    "SELECT d.region, e.dept, sum(e.salary) FROM emp e JOIN dept d ON e.dept = d.name "
    "GROUP BY ROLLUP(d.region, e.dept)",
    "SELECT upper(dept) AS u, count(*) FROM emp GROUP BY ROLLUP(upper(dept))",
    "SELECT k, count(*) FROM nothing GROUP BY ROLLUP(k)",
]

SUBQUERIES = [
    "SELECT id FROM emp e WHERE EXISTS (SELECT 1 FROM sales s WHERE s.emp_id = e.id) "
    "OR EXISTS (SELECT 1 FROM dept d WHERE d.name = e.dept AND d.budget > 400)",
    "SELECT id FROM emp e WHERE NOT EXISTS (SELECT 1 FROM sales s WHERE s.emp_id = e.id) "
    "OR e.bonus > 2",
    "SELECT id, EXISTS (SELECT 1 FROM sales s WHERE s.emp_id = e.id) AS sold FROM emp e",
    "SELECT id, CASE WHEN id IN (SELECT emp_id FROM sales) THEN 'y' ELSE 'n' END AS c FROM emp",
    "SELECT id, mgr NOT IN (SELECT emp_id FROM sales) AS never FROM emp",
    "SELECT id FROM emp WHERE id NOT IN (SELECT emp_id FROM sales WHERE emp_id IS NOT NULL) "
    "OR dept = 'hr'",
    "SELECT dept, count(*) FROM emp GROUP BY dept "
    "HAVING dept IN (SELECT name FROM dept WHERE region = 'EU') OR count(*) > 2",
    "SELECT id, (SELECT max(amount) FROM sales) AS top FROM emp WHERE id < 4",
    "SELECT id, (SELECT sum(amount) FROM sales s WHERE s.emp_id = e.id) AS total FROM emp e",
    "SELECT dept, sum(salary) FROM emp GROUP BY dept "
    "HAVING sum(salary) > (SELECT avg(salary) FROM emp)",
    "SELECT id FROM emp WHERE NOT (id IN (SELECT emp_id FROM sales) AND bonus > 1)",
    "SELECT id FROM emp WHERE mgr IN (SELECT id FROM emp WHERE dept = 'eng') OR mgr IS NULL",
]

# a subquery in a join's ON runs whole (in one task), with the join around it
IN_JOIN_CONDITIONS = [
    "SELECT e.id, d.region FROM emp e LEFT JOIN dept d ON e.dept = d.name "
    "AND EXISTS (SELECT 1 FROM sales s WHERE s.emp_id = e.id)",
    "SELECT e.id FROM emp e JOIN dept d ON e.dept = d.name "
    "AND d.budget > (SELECT min(budget) FROM dept)",
]

CORRELATION = [
    "SELECT id FROM emp e WHERE EXISTS (SELECT 1 FROM sales s WHERE s.emp_id = e.id "
    "AND s.amount > e.bonus)",
    "SELECT id FROM emp e WHERE EXISTS (SELECT 1 FROM sales s WHERE s.emp_id > e.id)",
    "SELECT id, (SELECT count(*) FROM sales s WHERE s.emp_id < e.id) AS before FROM emp e",
    "SELECT id FROM emp e WHERE salary > (SELECT avg(salary) FROM emp x "
    "WHERE x.dept = e.dept AND x.id <> e.id)",
    "SELECT id FROM emp e WHERE e.salary = (SELECT max(salary) FROM emp x "
    "WHERE x.dept = e.dept AND x.hired <= e.hired)",
    "SELECT id FROM emp e WHERE EXISTS (SELECT 1 FROM sales s WHERE s.emp_id = e.id AND "
    "EXISTS (SELECT 1 FROM dept d WHERE d.budget > s.qty * 100 AND d.region = 'EU'))",
    "SELECT id FROM emp e WHERE id NOT IN (SELECT emp_id FROM sales s WHERE s.qty > e.mgr)",
    "SELECT name FROM dept d WHERE (SELECT count(*) FROM emp e WHERE upper(e.dept) = "
    "upper(d.name)) > 1",
]


FAMILIES = {
    "grouping sets": GROUPING_SETS,
    "subqueries": SUBQUERIES,
    "subqueries in ON": IN_JOIN_CONDITIONS,
    "correlation": CORRELATION,
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_family_gives_pysparks_answer(family, paths, spark_session):
    """Every family is planned into its own operators (``cut``), but a subquery in ON,
    which runs whole."""
    cut = family != "subqueries in ON"
    assert differences(FAMILIES[family], paths, spark_session, cut=cut) == []
