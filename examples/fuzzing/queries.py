"""A seeded generator of random SQL queries over the fuzzer's tables, built as sqlglot trees and
rendered in Spark's dialect.

Every query is drawn from its own generator, seeded by ``(seed, index)``: query 17 of seed 3
is the same query whatever else a run draws, so a finding is named by its seed and index.

Every answer must be determined by the query, or a difference would be noise. So:

- an ORDER BY orders by every selected column (``c0, c1, ...``), which orders the rows totally
  (rows equal in every column cannot be told apart), and the answer is compared in order only
  then; LIMIT and OFFSET come only after such an ORDER BY;
- a window that numbers rows or reads neighbours (row_number, lag, lead, a ROWS frame) orders
  its partition by the ``id`` of every table it reads last, which is unique per row; rank,
  dense_rank and RANGE frames treat ties alike and need no such order;
- doubles are multiples of 1/4 (``tables``), so their sums are exact in any order;
- a scalar subquery aggregates without GROUP BY, so it yields one row.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterable, Iterator

from sqlglot import exp

from examples.fuzzing.expressions import NUMERIC, Expressions, Ref, comparable
from examples.fuzzing.families import SQL_FAMILIES, FuzzCase
from examples.fuzzing.tables import TABLES, TableSpec

__all__ = ["QueryGenerator", "generate_queries"]

_JOIN_KINDS = ("inner", "left", "right", "full", "left semi", "left anti", "cross")
_KEYS = ("k", "k2", "s", "dt", "id", "d", "x")  # the columns tables may be joined on


def generate_queries(
    seed: int, count: int, families: Iterable[str] | None = None, start: int = 0
) -> Iterator[FuzzCase]:
    """``count`` queries of the SQL ``families`` (all by default), numbered from ``start``."""
    enabled = tuple(f for f in (families or SQL_FAMILIES) if f in SQL_FAMILIES)
    if not enabled:
        return
    for index in range(start, start + count):
        rng = random.Random(f"{seed}:sql:{index}")
        family = rng.choice(enabled)
        generator = QueryGenerator(rng, enabled)
        tree = generator.query(family)
        yield FuzzCase(
            f"seed {seed} query {index}",
            family,
            tuple(sorted(generator.used)),
            sql=tree.sql(dialect="spark"),
            ordered=generator.ordered,
        )


class QueryGenerator:
    """Draws one query of a family (``query``); ``used`` collects the families it used and
    ``ordered`` says whether its top ORDER BY orders its rows totally."""

    def __init__(self, rng: random.Random, families: Iterable[str]) -> None:
        self.rng = rng
        self.families = frozenset(families)
        self.expressions = Expressions(rng)
        self.used: set[str] = set()
        self.ordered = False
        # letters no column is named, so that an alias never reads as a column (``b.k``)
        self._aliases = iter(c for c in string.ascii_lowercase if c not in "bdfksx")

    def on(self, family: str, chance: float = 1.0) -> bool:
        """Whether to use ``family`` here: switched on, and drawn with ``chance``."""
        if family in self.families and self.rng.random() < chance:
            self.used.add(family)
            return True
        return False

    def query(self, family: str) -> exp.Query:
        from examples.fuzzing import clauses, subqueries

        self.used.add(family)
        builders = {
            "joins": lambda: self.select_from(self.rng.randint(2, 3), force_join=True),
            "aggregates": lambda: clauses.aggregate(self),
            "grouping_sets": lambda: clauses.grouping_sets(self),
            "windows": lambda: clauses.windows(self),
            "subqueries": lambda: subqueries.subquery_query(self),
            "set_operations": lambda: clauses.set_operation(self),
            "nulls_case": lambda: self.select_from(1, items=clauses.null_items),
            "order_limit": lambda: self.select_from(self.rng.randint(1, 2)),
            "functions": lambda: self.select_from(1, items=clauses.function_items),
        }
        query = builders[family]()
        return self.finish(query, force=family == "order_limit")

    # --- FROM ... JOIN ----------------------------------------------------------------------

    def alias(self) -> str:
        return next(self._aliases)

    def table(self, non_empty: bool = False) -> TableSpec:
        return self.rng.choice([t for t in TABLES if not non_empty or t.rows[1] > 0])

    def source(self, spec: TableSpec | None = None) -> tuple[exp.Expression, tuple[Ref, ...]]:
        """A table under a fresh alias, and its columns."""
        spec = spec or self.table()
        alias = self.alias()
        refs = tuple(Ref(alias, c.name, c.kind) for c in spec.columns)
        return exp.to_table(spec.name).as_(alias), refs

    def from_clause(
        self, count: int, force_join: bool = False
    ) -> tuple[exp.Select, tuple[Ref, ...], tuple[Ref, ...]]:
        """``SELECT`` with a FROM of ``count`` tables joined (joins only if that family is
        on, or ``force_join``): the query, the columns in scope and the ids of the tables
        whose rows the result keeps (a semi or anti join keeps only its left side's)."""
        table, scope = self.source(self.table(non_empty=True))
        query = exp.select().from_(table)
        ids = tuple(r for r in scope if r.name == "id")
        joined = count > 1 and (force_join or self.on("joins"))
        for _ in range(count - 1 if joined else 0):
            self.used.add("joins")
            right, right_scope = self.source()
            kind = self.rng.choice(_JOIN_KINDS)
            on = None if kind == "cross" else self.join_condition(scope, right_scope)
            query = query.join(right, on=on, join_type=kind)
            if "semi" not in kind and "anti" not in kind:
                scope += right_scope
                ids += tuple(r for r in right_scope if r.name == "id")
        return query, scope, ids

    def join_condition(self, left: tuple[Ref, ...], right: tuple[Ref, ...]) -> exp.Expression:
        """An equality on a key both sides have, sometimes a second one, OR-ed with another
        condition, or a non-equi residual; now and then no equality at all."""
        rng = self.rng
        shared = [
            name
            for name in _KEYS
            if any(r.name == name for r in right) and any(r.name == name for r in left)
        ]
        parts = []
        for name in rng.sample(shared, min(len(shared), rng.choice([1, 1, 1, 2]))):
            left_ref = rng.choice([r for r in left if r.name == name])
            right_ref = next(r for r in right if r.name == name)
            parts.append(exp.EQ(this=left_ref.node(), expression=right_ref.node()))
        if parts and rng.random() < 0.15:  # keys of two types: the exchange must hash alike
            parts[0] = self.mixed_equality(left, right)
        if not parts or rng.random() < 0.1:
            parts = [self.expressions.atom(left + right)]
        condition = exp.and_(*parts)
        roll = rng.random()
        if roll < 0.2:
            condition = exp.or_(condition, self.expressions.atom(left + right))
        elif roll < 0.45:
            condition = exp.and_(condition, self.cross_comparison(left, right))
        if self.on("subqueries", 0.15):
            from examples.fuzzing.subqueries import condition as subquery_condition

            condition = exp.and_(condition, subquery_condition(self, left + right))
        return condition

    def mixed_equality(self, left: tuple[Ref, ...], right: tuple[Ref, ...]) -> exp.Expression:
        """An equality of a value of each side of two comparable kinds (an int and a bigint,
        a decimal and a rounded one, a date and a timestamp), so a hash exchange on it
        must hash both sides as one type."""
        rng = self.rng
        kind = rng.choice(["int", "decimal", "date", "string"])
        other = rng.choice(comparable(kind))
        return exp.EQ(
            this=self.expressions.value(kind, left, 1),
            expression=self.expressions.value(other, right, 1),
        )

    def cross_comparison(self, left: tuple[Ref, ...], right: tuple[Ref, ...]) -> exp.Expression:
        """A non-equality between a column of each side, of comparable kinds."""
        rng = self.rng
        a = rng.choice(left)
        others = [
            r
            for r in right
            if (r.kind in NUMERIC) == (a.kind in NUMERIC)
            and (a.kind in NUMERIC or r.kind == a.kind)
        ]
        if not others:
            return self.expressions.atom(left + right)
        operator = rng.choice([exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NEQ])
        return operator(this=a.node(), expression=rng.choice(others).node())

    # --- SELECT ... WHERE -------------------------------------------------------------------

    def select_from(self, count: int, force_join: bool = False, items=None) -> exp.Select:
        """A plain query: FROM ``count`` tables, a WHERE perhaps, and 1 to 4 items
        (``items(self, scope)`` draws them, else any values)."""
        query, scope, _ = self.from_clause(count, force_join)
        chosen = (
            items(self, scope)
            if items
            else [self.item(scope) for _ in range(self.rng.randint(1, 4))]
        )
        query = self.where(query, scope)
        if self.rng.random() < 0.1:
            query = query.distinct()
        return self.project(query, chosen)

    def item(self, scope: tuple[Ref, ...]) -> exp.Expression:
        kind = self.rng.choice(sorted({r.kind for r in scope}))
        if self.on("subqueries", 0.1):
            from examples.fuzzing.subqueries import select_item

            return select_item(self, scope)
        return self.expressions.value(kind, scope, self.rng.randint(0, 2))

    def where(self, query: exp.Select, scope: tuple[Ref, ...], chance: float = 0.7) -> exp.Select:
        if self.rng.random() >= chance:
            return query
        condition = self.expressions.predicate(scope, self.rng.randint(0, 2))
        if self.on("subqueries", 0.2):
            from examples.fuzzing.subqueries import condition as subquery_condition

            condition = self.combine(condition, subquery_condition(self, scope))
        return query.where(condition)

    def combine(self, condition: exp.Expression, other: exp.Expression) -> exp.Expression:
        """``condition`` with ``other`` under AND, OR, NOT or a CASE."""
        pick = self.rng.randrange(5)
        if pick == 0:
            return exp.or_(condition, other)
        if pick == 1:
            return exp.and_(condition, exp.not_(other))
        if pick == 2:
            case = exp.Case().when(other, exp.Literal.number(1)).else_(exp.Literal.number(0))
            return exp.and_(condition, exp.EQ(this=case, expression=exp.Literal.number(1)))
        return exp.and_(condition, other)

    @staticmethod
    def project(query: exp.Select, items: list[exp.Expression]) -> exp.Select:
        """The items as ``c0, c1, ...``: unique output names, which an ORDER BY can name."""
        return query.select(*(exp.alias_(e, f"c{i}") for i, e in enumerate(items)), append=False)

    # --- ORDER BY, LIMIT, OFFSET ------------------------------------------------------------

    def finish(self, query: exp.Query, force: bool = False) -> exp.Query:
        """Perhaps (always if ``force``) an ORDER BY every output column, each ascending or
        descending, nulls first or last; then perhaps LIMIT, OFFSET or both."""
        if not force and not self.on("order_limit", 0.3):
            return query
        self.used.add("order_limit")
        keys = [
            exp.Ordered(
                this=exp.column(name),
                desc=self.rng.random() < 0.4,
                nulls_first=self.rng.random() < 0.5,
            )
            for name in query.named_selects
        ]
        self.rng.shuffle(keys)
        query = query.order_by(*keys, copy=False)
        self.ordered = True
        roll = self.rng.random()
        if roll < 0.6:
            query = query.limit(self.rng.randint(0, 12), copy=False)
        if 0.4 < roll < 0.8:
            query = query.offset(self.rng.randint(0, 6), copy=False)
        return query
