"""A Tidal DataFrame session whose actions run in the tests' one PySpark session, not on Ray:
each action's query is planned by Tidal's planner as on a cluster, and its job graph's pieces
run split into two subtasks a vertex (``tests.examples.one_session``), so a piece that is only
right when everything lands in one task fails here too. Many programs then cost a second or
so each, where a job on Ray costs several."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pyarrow as pa

__all__ = ["OneSessionClient", "one_session_tidal"]

_IDS = itertools.count(1)


@dataclass
class _Finished:
    table: pa.Table
    succeeded: bool = True

    def to_arrow(self) -> pa.Table:
        return self.table


@dataclass
class _Handle:
    job_id: str
    result: _Finished

    def wait(self) -> _Finished:
        return self.result


class OneSessionClient:
    """The one method of ``Client`` a DataFrame action uses, run in ``spark``."""

    def __init__(self, spark) -> None:
        self.spark = spark
        self.graphs = []  # every job graph run, oldest first

    def _submit(self, graph, settings, where) -> _Handle:
        from tests.examples.one_session import run_in_one_session

        self.graphs.append(graph)
        table = run_in_one_session(graph, self.spark, _subtasks(graph))
        return _Handle(f"one-session-{next(_IDS)}", _Finished(table))


def _subtasks(graph) -> dict[str, int]:
    """Two subtasks a vertex, but one where the planner set one, and a FORWARD input's count."""
    counts: dict[str, int] = {}
    for vertex in graph.topological_order():
        forward = [e.source.name for e in vertex.inputs if e.is_forward]
        counts[vertex.name] = vertex.parallelism or (counts[forward[0]] if forward else 2)
    return counts


def one_session_tidal(spark):
    """A Tidal session whose jobs run in ``spark`` (the caller stops it)."""
    from jobmanager.client.dataframe import SparkSession

    session = SparkSession.builder.getOrCreate()
    session.runner._client = OneSessionClient(spark)
    return session
