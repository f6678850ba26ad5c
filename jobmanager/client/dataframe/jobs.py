"""An action's query as a Tidal job: planned here, submitted, waited for, its result read back.

Each action is one job named after the line that asked for it (``pipeline.py:42 collect``), so
``tidal list``, ``status``, ``explain``, ``report`` and ``history`` show the script's actions
by their place in it. A query Tidal cannot plan, or a job that fails, is an error at that line
that says so in Tidal's words; a bad column name is PySpark's ``AnalysisException``
(``UNRESOLVED_COLUMN``), as a script may catch it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import Any

from pyspark.errors.exceptions.base import AnalysisException

from jobmanager.client.dataframe.unsupported import caller_line
from jobmanager.errors import TidalError, UnknownColumnError, UnknownTableError
from jobmanager.model.config import Configuration

__all__ = ["ActionFailedError", "QueryRunner", "RuntimeConf", "TidalAnalysisException"]

_SPARK_PREFIX = "spark."


class ActionFailedError(TidalError, RuntimeError):
    """A DataFrame action whose job did not finish."""


class TidalAnalysisException(TidalError, AnalysisException):
    """A query naming a column or table that is not there: PySpark's class and condition."""

    def __init__(self, message: str, condition: str) -> None:
        AnalysisException.__init__(self, message=message)
        self._errorClass = condition


class RuntimeConf:
    """``spark.conf``: Spark's keys are kept and read back; any other key is a Tidal option
    for the session's next jobs."""

    def __init__(self, options: dict[str, Any]) -> None:
        self._options = options

    def set(self, key: str, value: Any) -> None:
        self._options[key] = value

    def get(self, key: str, default: Any = None) -> Any:
        return self._options.get(key, default)

    def unset(self, key: str) -> None:
        self._options.pop(key, None)

    def getAll(self) -> dict[str, Any]:
        return dict(self._options)


class QueryRunner:
    """The session's way to the cluster: one ``Client``, made at the first action (or handed
    over by ``tidal run``), and the tables the session's readers named."""

    defaults: dict[str, Any] = {}  # ``tidal run``'s -D options, before the script's own
    client_factory = None  # ``tidal run``'s way to reach its cluster
    _recorded: list[str] | None = None  # every job any session ran, while recording

    @classmethod
    @contextlib.contextmanager
    def recording(cls):
        """The ids of the jobs run meanwhile, by any session (``tidal run`` lists them)."""
        outer, cls._recorded = cls._recorded, []
        try:
            yield cls._recorded
        finally:
            cls._recorded = outer

    def __init__(self) -> None:
        self.tables: dict[str, Mapping[str, Any]] = {}
        self.conf = RuntimeConf(dict(QueryRunner.defaults))
        self._client = None
        self.jobs: list[str] = []  # the job ids this session ran, oldest first
        self.action: str | None = None  # the action under way, the outermost one

    @contextlib.contextmanager
    def acting(self, name: str):
        """Name the job of the action under way (``count`` runs a ``collect`` inside)."""
        outer = self.action
        self.action = outer or name
        try:
            yield
        finally:
            self.action = outer

    def configure(self, options: Mapping[str, Any]) -> None:
        for key, value in options.items():
            self.conf.set(key, value)

    def settings(self) -> Configuration:
        tidal = {k: v for k, v in self.conf.getAll().items() if not k.startswith(_SPARK_PREFIX)}
        return Configuration(tidal)

    def table_name(self, spec: Mapping[str, Any]) -> str:
        """The session's name for a table read from ``spec``; the same spec, the same name."""
        for name, known in self.tables.items():
            if known == spec:
                return name
        name = f"tidal_read_{len(self.tables) + 1}"
        self.tables[name] = dict(spec)
        return name

    def client(self):
        if self._client is None:
            from jobmanager.client.client import Client

            factory = QueryRunner.client_factory
            self._client = factory() if factory else Client()
        return self._client

    def plan(self, sql: str, action: str, **output: Any):
        """The planned job of an action, and where its result goes."""
        from jobmanager.client.query import plan_query

        place = caller_line()
        here = f"{place[0]}:{place[1]}" if place else "<script>"
        try:
            planned, where = plan_query(
                sql,
                self.settings(),
                tables=self.tables,
                name=f"{os.path.basename(here)} {action}",
                **output,
            )
        except UnknownColumnError as error:
            raise TidalAnalysisException(
                f"{here}: {action}: {error}", "UNRESOLVED_COLUMN.WITH_SUGGESTION"
            ) from None
        except UnknownTableError as error:
            raise TidalAnalysisException(
                f"{here}: {action}: {error}", "TABLE_OR_VIEW_NOT_FOUND"
            ) from None
        except TidalError as error:
            raise type(error)(f"{here}: {action}: Tidal cannot run this query: {error}") from None
        return planned, where, here

    def run(self, sql: str, action: str, **output: Any):
        """Run the action's query as one job and wait for it; its ``JobResult``."""
        planned, where, here = self.plan(sql, action, **output)
        client = self.client()
        try:
            handle = client._submit(planned.graph, self.settings(), where)
        except TidalError as error:
            raise type(error)(f"{here}: {action}: {error}") from None
        self.jobs.append(handle.job_id)
        if QueryRunner._recorded is not None:
            QueryRunner._recorded.append(handle.job_id)
        result = handle.wait()
        if not result.succeeded:
            raise ActionFailedError(
                f"{here}: {action}: job {handle.job_id} "
                f"{result.status.value.lower()}: {result.cause}"
            )
        return result

    def collect(self, sql: str, action: str):
        """The action's result as an Arrow table."""
        return self.run(sql, self.action or action).to_arrow()

    def stop(self) -> None:
        self._client = None
