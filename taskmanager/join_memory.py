"""In-task join hints held to what the task's Spark JVM can build.

The planner hints each join a task runs to build on the side the listing called smaller
(``BROADCAST``, or ``SHUFFLE_HASH`` for a full outer join), and the JobManager may swap the hint
to the side that wrote fewer bytes; both know which side is smaller, neither knows the JVM the
task runs in. A hash build holds its whole side in the JVM's heap, more than once while it is
built, and the TaskManager's slots share that heap: at Tidal's default 1 GiB, TPC-H q21 at scale 1
failed building three million lineitem rows per task ("Not enough memory to build and broadcast
the table"). So a join whose hinted side reads more than ``build_budget`` is built by sorting
both sides instead (``MERGE``, Spark's sort-merge join, which spills to disk): the same rows by
a plan that fits.

A side's bytes are its inputs' in memory: an Arrow table's buffers, a Parquet file's column
chunks uncompressed (of the columns read). A view the task computes itself (a chained member
reading the result before it) is counted as all the task's inputs, an upper bound in practice.
The decision depends on the task's inputs alone, so every attempt of a task decides alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa
import pyarrow.parquet as pq
from sqlglot import exp, parse_one

from taskmanager.inputs import ParquetFiles

__all__ = ["BUILD_SHARE", "build_budget", "hints_hash_build", "in_memory_bytes", "within_budget"]

BUILD_SHARE = 16  # a slot's share of the heap, over this, is the most one hash build may read
_BUILDS = ("BROADCAST", "BROADCASTJOIN", "MAPJOIN", "SHUFFLE_HASH")


def build_budget(heap_bytes: int, slots: int) -> int:
    """The most input bytes one in-task hash build may read in a JVM of ``heap_bytes`` shared
    by ``slots`` tasks."""
    return heap_bytes // (max(1, slots) * BUILD_SHARE)


def in_memory_bytes(table: pa.Table | ParquetFiles) -> int:
    """``table``'s bytes in memory: an Arrow table's buffers; Parquet files' column chunks,
    uncompressed, of the columns read."""
    if isinstance(table, pa.Table):
        return table.nbytes
    wanted = None if table.columns is None else set(table.columns)
    total = 0
    for path in table.paths:
        metadata = pq.read_metadata(path)
        for group in range(metadata.num_row_groups):
            row_group = metadata.row_group(group)
            for column in range(row_group.num_columns):
                chunk = row_group.column(column)
                if wanted is None or chunk.path_in_schema.split(".")[0] in wanted:
                    total += chunk.total_uncompressed_size
    return total


def hints_hash_build(sql: str) -> bool:
    """Whether ``sql`` may hint a hash build (a quick look at its text)."""
    return any(f"{build}(" in sql for build in _BUILDS)


def within_budget(sql: str, view_bytes: Mapping[str, int], budget: int) -> str:
    """``sql`` with each hash-build hint whose side reads more than ``budget`` bytes (the
    views under the hinted alias, by ``view_bytes``) turned into ``MERGE``; ``sql`` itself when
    every hinted side fits, or when all the views together fit."""
    if sum(view_bytes.values()) <= budget or not hints_hash_build(sql):
        return sql
    fitted = sql
    for hint in parse_one(sql, read="spark").find_all(exp.Hint):
        for join_hint in hint.expressions:
            if not isinstance(join_hint, exp.JoinHint) or join_hint.name.upper() not in _BUILDS:
                continue
            hinted = f"/*+ {join_hint.sql(dialect='spark')} */"
            if _hinted_bytes(hint, join_hint, view_bytes) > budget and fitted.count(hinted) == 1:
                merge = exp.JoinHint(this="MERGE", expressions=join_hint.expressions)
                fitted = fitted.replace(hinted, f"/*+ {merge.sql(dialect='spark')} */")
    return fitted


def _hinted_bytes(hint: exp.Hint, join_hint: exp.JoinHint, view_bytes: Mapping[str, int]) -> int:
    """The bytes of the views under the aliases a hash-build hint names."""
    aliases = {t.name for t in join_hint.expressions}
    sides = [r for r in _relations(hint.parent) if r.alias_or_name in aliases]
    return sum(view_bytes.get(t.name, 0) for side in sides for t in _tables(side))


def _relations(select: exp.Expression) -> Sequence[exp.Expression]:
    """What ``select``'s FROM and JOINs read, each under its alias."""
    found = []
    source = select.args.get("from_") or select.args.get("from")
    if source is not None:
        found.append(source.this)
    found.extend(join.this for join in select.args.get("joins") or ())
    return found


def _tables(relation: exp.Expression) -> list[exp.Table]:
    return [relation] if isinstance(relation, exp.Table) else list(relation.find_all(exp.Table))
