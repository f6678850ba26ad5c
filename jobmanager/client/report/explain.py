"""``tidal explain``: each vertex's parallelism and the whole reason for it, in words.

What the decision saw (the bytes consumed and the broadcast bytes left out), the raw value of
the formula and every clamp applied to it, how the ranges balanced the tasks (smallest and
largest task in bytes) and which skewed subpartitions were cut how many ways; for a source,
what its listing saw; for a vertex not decided yet, what it waits for. A vertex that runs pieces
of a planned query shows each one's SQL under the part of the query it came from.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobmanager.client.report.facts import JobFacts, SqlPiece, VertexFacts
from jobmanager.client.report.svg import size
from jobmanager.messages.jobstatus import JobStatus

__all__ = ["explain_lines", "origin_words", "sql_lines"]

_ORIGIN = {
    "decided": "decided at run time from the bytes its inputs produced",
    "inferred": "inferred at run time from what its sources listed",
    "forward": "taken from its forward group",
    "user": "set by the user",
    "fixed": "fixed before the job started",
    "undecided": "not decided",
}


def origin_words(vertex: VertexFacts) -> str:
    if vertex.origin == "user" and vertex.set_on:
        return f"{_ORIGIN['user']} on {vertex.set_on}"
    return _ORIGIN[vertex.origin]


def explain_lines(facts: JobFacts) -> list[str]:
    head = f"{facts.name} ({facts.job_id}): {facts.status}"
    if facts.cause:
        first = facts.cause.strip().splitlines()[0]
        head += f" (recovered from: {first})" if facts.status is JobStatus.FINISHED else f": {first}"
    lines = [head]
    for v in facts.vertices:
        lines.append("")
        lines.extend(_vertex_lines(facts, v))
    return lines


def sql_lines(vertex: str, pieces: Sequence[SqlPiece]) -> list[str]:
    """Each piece's SQL under the part of the query it came from (and the chain member that
    runs it, in a chain), as ``tidal sql --explain`` (``PlannedQuery.explain``) shows it."""
    lines = []
    for piece in pieces:
        who = f"{piece.member}, " if piece.member != vertex else ""
        origin = " ".join(piece.origin.split())
        if who or origin:
            lines.append(f"  {who}from the query: {origin or '(not said)'}")
        lines.extend(f"  | {line}" for line in piece.sql.strip().splitlines())
    return lines


def _vertex_lines(facts: JobFacts, v: VertexFacts) -> list[str]:
    if v.parallelism is None:
        return [f"{v.name} [{v.kind}]: not decided: {v.waiting_for}", *sql_lines(v.name, v.sql)]
    lines = [f"{v.name} [{v.kind}]: parallelism {v.parallelism}, {origin_words(v)} "
             f"(vertex max {v.max_parallelism})"]  # fmt: skip
    if v.kind.split(", ")[-1].startswith("chain:"):
        lines.append("  chained: its vertices run as one task, joined by FORWARD edges or by edges "
                     "between two one-task vertices (pipeline.operator-chaining.enabled)")  # fmt: skip
    if v.origin == "decided":
        broadcast = (f", {size(v.broadcast_bytes)} broadcast left out" if v.broadcast_bytes
                     else ", nothing broadcast")  # fmt: skip
        lines.append(f"  consumed: {size(v.input_bytes)} ({v.input_bytes:,} bytes){broadcast}")
        lines.append(f"  raw value: {v.raw:g} (non-broadcast bytes / avg-data-volume-per-task)")
        lines.append("  clamps: " + ("; ".join(v.clamps) if v.clamps else "none"))
    if v.inference:
        lines.append(f"  sources saw: {v.inference}")
    if v.task_bytes is not None:
        smallest, largest = v.task_bytes
        lines.append(f"  tasks given: smallest {size(smallest)}, largest {size(largest)} of "
                     "non-broadcast input")  # fmt: skip
    for r in facts.results:
        if r.target == v.name and r.splits:
            cuts = ", ".join(f"subpartition {s} cut into {ways} pieces" for s, ways in r.splits[:12])
            more = f" and {len(r.splits) - 12} more" if len(r.splits) > 12 else ""
            lines.append(f"  skew: {r.source} -> {v.name}: {cuts}{more}, one task each "
                         "(the other inputs' matching data read whole by each)")
    lines.append(f"  why: {v.explanation}")
    lines.extend(sql_lines(v.name, v.sql))
    return lines
