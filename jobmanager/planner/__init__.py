"""Tidal's SQL planner: a query in Spark's dialect becomes a ``JobGraph`` cut at its exchanges.

    planned = plan_sql("SELECT ...", Catalog.from_tables({"lineitem": "/data/lineitem"}), sink)
    planned.graph      # a JobGraph of SqlOperator vertices, the sink last
    planned.columns    # the result's column names, in order
    planned.explain()  # each vertex: its SQL, where it came from, its inputs

The steps: the front end (``frontend``: ``parse``, sqlglot reads Spark's dialect and qualifies
the columns against the tables' schemas, read from their files in the client; ``translate``,
the tree becomes a logical plan, subqueries semi, anti, single and left joins), the logical
rules (``rules``: ``optimize`` runs, in the order ``rules.RULES`` lists them, ``pushdown``,
``prune`` and ``joins``, filters go down to the scans, only the columns read are read, inner
joins are ordered along their keys; ``eager_aggregates``, a join's counted side aggregated by
its key first; ``joinfilters``, a small filtered input of a join filters the other side where
it is read), and the physical side (``physical``: ``cut`` cuts the plan into ``stages`` at its
exchanges, ``joinmarks`` marks the shuffled joins the JobManager may still broadcast at run
time, ``sqlgen`` writes each stage's SQL and ``graph`` the job graph). The planner imports
nothing of Tidal's runtime: it builds the job model, which the runtime then runs like any
hand-built job, sizing each vertex from the bytes its inputs produce.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass

from jobmanager.errors import PlannerBug, SqlError, TidalError
from jobmanager.model.config import RULES_DISABLED, SKEWED_JOIN_STRATEGY, Configuration
from jobmanager.model.jobgraph import JobGraph
from jobmanager.model.joins import JoinInput
from jobmanager.model.operators import ParquetSink, SqlOperator
from jobmanager.planner.catalog import Catalog
from jobmanager.planner.frontend.parse import parse, qualified
from jobmanager.planner.frontend.translate import Translator
from jobmanager.planner.logical import IdAllocator, Project, col
from jobmanager.planner.physical.cut import cut_into_stages
from jobmanager.planner.physical.graph import job_graph
from jobmanager.planner.physical.joinmarks import mark_joins
from jobmanager.planner.rules import RuleContext, RuleStep, optimize

__all__ = ["Catalog", "PlannedQuery", "plan_sql"]

_QUOTED = re.compile(r"'([^']+)'")


@dataclass(frozen=True)
class PlannedQuery:
    """The job, the result's column names and their Spark types (``unknown`` where the
    planner cannot tell; Spark still can)."""

    graph: JobGraph
    columns: tuple[str, ...]
    types: tuple[str, ...] = ()

    @property
    def schema(self) -> tuple[tuple[str, str], ...]:
        return tuple(zip(self.columns, self.types))

    def explain(self) -> str:
        """Each vertex with its SQL and the part of the query it came from, then its edges."""
        lines = []
        for vertex in self.graph.topological_order():
            fixed = vertex.parallelism
            lines.append(
                f"{vertex.name} (parallelism "
                f"{fixed if fixed is not None else 'decided at run time'})"
            )
            for edge in vertex.inputs:
                split = ", splittable" if edge.splittable else ""
                merged = ", pre-aggregated" if edge.pre_aggregated else ""
                lines.append(
                    f"  <- {edge.source.name}: {edge.partitioner}{split}{merged}"
                    f"{_join_mark(edge.join)}"
                )
            for source in vertex.sources:
                lines.append(f"  reads {source!r}")
            operator = vertex.operator
            if isinstance(operator, SqlOperator):
                if operator.origin:
                    lines.append(f"  from the query: {operator.origin}")
                lines.extend("  | " + line for line in operator.sql.splitlines())
            else:
                lines.append(f"  runs {operator}")
            lines.append("")
        return "\n".join(lines).rstrip() + "\n"


def plan_sql(
    query: str,
    catalog: Catalog,
    sink: ParquetSink,
    config: Configuration | None = None,
    name: str | None = None,
    rule_trace: list[RuleStep] | None = None,
) -> PlannedQuery:
    """Plan ``query`` over ``catalog``'s tables into a job whose result goes to ``sink``;
    ``rule_trace``, if given, gets what each logical rule changed (``rules.explain_steps``).
    Raises a ``jobmanager.errors.SqlError`` naming what is wrong and where."""
    config = config or Configuration()
    tree = qualified(parse(query), catalog)
    ids = IdAllocator()
    with _planning("translating", query):
        relation = Translator(catalog, ids, query).query(tree)
    with _planning("optimizing", query):
        context = RuleContext.from_config(config, ids)
        node = optimize(
            relation.node, context, disabled=config[RULES_DISABLED.key], trace=rule_trace
        )
    with _planning("cutting into stages", query):
        result = cut_into_stages(
            node,
            context.static_threshold,
            ids,
            config[SKEWED_JOIN_STRATEGY.key],
            context.read_whole,
        )
        mark_joins(result, context.strategy)
        tree = result.tree
        named = tuple((n, kind) for n, (_, kind) in zip(relation.names, tree.columns))
        result.tree = Project(
            named, "SELECT", tree, tuple((n, col(i)) for n, i in zip(relation.names, tree.ids))
        )
        graph = job_graph(result, sink, name or "sql")
    return PlannedQuery(graph, relation.names, tuple(str(kind) for _, kind in named))


@contextmanager
def _planning(step: str, query: str):
    """A failure of the planner's own while ``step`` raises ``PlannerBug``: a valid query
    must never read as the user's mistake, nor show a name the planner made up. The user's
    errors (``SqlError`` naming what they wrote) pass through."""
    try:
        yield
    except SqlError as error:
        named = _QUOTED.findall(str(error))
        if not named or named[0].lower() in query.lower():
            raise
        raise PlannerBug(_bug(step, query)) from error
    except TidalError:
        raise
    except Exception as error:
        raise PlannerBug(_bug(step, query)) from error


def _bug(step: str, query: str) -> str:
    text = " ".join(query.split())
    text = text if len(text) <= 200 else text[:197] + "..."
    return (
        f"bug in Tidal: its planner failed while {step} the query {text!r}; the query "
        "is not at fault. Please report it with the query (the cause below is the "
        "planner's own)"
    )


def _join_mark(join: JoinInput | None) -> str:
    """An edge's join mark as explain shows it: the join's id and kind, the side this edge is,
    and whether the JobManager may send it whole to the join's tasks at run time."""
    if join is None:
        return ""
    may = " (may broadcast)" if join.may_be_broadcast else ""
    return f", join {join.join} {join.kind}, {join.side} side{may}"
