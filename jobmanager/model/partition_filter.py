"""Whether a hive partition's directory values pass a query's predicates on them.

A SQL planner hands a file source the conjuncts of a scan's filter that compare a partition
column with constants (``PartitionPredicate``); the source then lists only the partitions that
may hold rows the filter keeps. Directory values are strings; they are read as the column's
type first (``dt=2024-01-02`` as a date, ``year=2024`` as an integer), so ``<`` means what it
means in the query. Hive's name for a NULL partition never passes a comparison, as NULL never
passes a filter. Connector code, with no file system of its own.
"""

from __future__ import annotations

import datetime
import operator
from typing import Any, Mapping, Sequence

__all__ = ["HIVE_NULL", "PARTITION_TYPES", "passes", "typed_value"]

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
PARTITION_TYPES = ("bigint", "date", "string")
_COMPARE = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def typed_value(text: str | None, type_name: str) -> Any:
    """A directory value (or a predicate's constant) as the column's type; None for NULL or a
    value that is not of the type (it can then match nothing)."""
    if text is None or text == HIVE_NULL:
        return None
    try:
        if type_name == "bigint":
            return int(text)
        if type_name == "date":
            return datetime.date.fromisoformat(text)
    except ValueError:
        return None
    return text


def passes(values: Mapping[str, str], predicates: Sequence[tuple]) -> bool:
    """True when the partition's ``values`` pass every predicate on a column it has."""
    for column, type_name, op, constants in predicates:
        if column not in values:
            continue
        value = typed_value(values[column], type_name)
        if value is None or not _holds(value, op, [typed_value(c, type_name) for c in constants]):
            return False
    return True


def _holds(value: Any, op: str, wanted: list) -> bool:
    """Whether ``value op wanted`` holds (a null constant matches nothing)."""
    if op == "in":
        return value in [w for w in wanted if w is not None]
    return wanted[0] is not None and _COMPARE[op](value, wanted[0])
