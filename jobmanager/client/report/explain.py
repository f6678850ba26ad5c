"""``tidal explain``: each vertex's parallelism and the whole reason for it, in words.

What the decision saw (the bytes consumed and the broadcast bytes left out), the raw value of
the formula and every clamp applied to it, how the ranges balanced the tasks (smallest and
largest task in bytes) and which skewed subpartitions were cut how many ways; for a source,
what its listing saw; for a vertex not decided yet, what it waits for. A vertex that runs pieces
of a planned query shows each one's SQL under the part of the query it came from. After the
vertices, ``joins:`` says per join how it was decided, when, on which bytes against which
threshold and what moved for each side, and ``sorts:`` per global sort its key bounds and the
bytes each range's task was given (``jobmanager.client.report.decisions``). A job that lost
TaskManagers says, under its first line, what each loss cost and whether it recovered.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobmanager.client.loss_words import loss_summary
from jobmanager.client.report.decisions import JoinFacts, JoinSideFacts, SortFacts
from jobmanager.client.report.facts import JobFacts, SqlPiece, VertexFacts
from jobmanager.client.report.svg import size
from jobmanager.messages.jobstatus import JobStatus

__all__ = ["explain_lines", "join_lines", "origin_words", "side_words", "sort_lines", "sql_lines"]

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
        head += (
            f" (recovered from: {first})" if facts.status is JobStatus.FINISHED else f": {first}"
        )
    lines = [head]
    if facts.losses:
        lines += ["", "TaskManagers lost:"]
        lines += [f"  {loss_summary(loss)}" for loss in facts.losses]
    for v in facts.vertices:
        lines.append("")
        lines.extend(_vertex_lines(facts, v))
    if facts.joins:
        lines += ["", "joins:"]
        for join in facts.joins:
            lines.extend(join_lines(join))
    if facts.sorts:
        lines += ["", "sorts:"]
        for sort in facts.sorts:
            lines.extend(sort_lines(sort))
    return lines


_KIND = {"left": "left outer", "right": "right outer", "full": "full outer"}
_MOVED = {
    "shuffled": "shuffled (by hash subpartition)",
    "broadcast": "broadcast (whole to every task)",
    "read locally": "read locally (whole outputs of consecutive producers)",
    "chained": "chained (computed in the join's task, never written)",
    "read whole": "read whole in each task's Spark query, never written",
}


def join_lines(join: JoinFacts) -> list[str]:
    """The join's decision in one line, then one line per side."""
    kind = _KIND.get(join.kind, join.kind)
    if not join.strategy:
        how = "not decided yet"
    elif join.strategy == "broadcast":
        how = f"broadcast, the {join.side} side sent whole to every task"
    else:
        how = "shuffled" + (f", built on the {join.side} side" if join.side else "")
    threshold = "off" if join.threshold < 0 else size(join.threshold)
    if join.when == "run time":
        after = " and ".join(repr(p) for p in join.decided_after)
        when = f"decided at run time once {after} finished, threshold {threshold}"
    elif join.when == "planned":
        when = f"planned from the listing, threshold {threshold}"
    else:
        when = f"threshold {threshold}"
    lines = [f"  {join.join} {kind} join in {join.vertex}: {how}; {when}"]
    if join.note:
        lines.append(f"    {join.note}")
    return lines + [f"    {side_words(s, join)}" for s in (join.left, join.right)]


def side_words(side: JoinSideFacts, join: JoinFacts) -> str:
    """``left scan a: 2.0 MiB written <= threshold, broadcast (whole to every task)``."""
    source = side.producer or "(its own rows)"
    measured = "written" if join.when == "run time" else "estimated"
    if side.bytes < 0:
        held = "not written yet when decided" if join.when == "run time" else "size not known"
    else:
        held = f"{size(side.bytes)} {measured}"
        if join.threshold >= 0:
            held += " <= threshold" if side.bytes <= join.threshold else " > threshold"
    moved = _MOVED.get(side.moved, side.moved)
    carried = (
        f", {size(side.written)} written" if join.when != "run time" and side.written >= 0 else ""
    )
    return f"{side.side:<5} {source}: {held}; {moved}{carried}"


def sort_lines(sort: SortFacts) -> list[str]:
    """The sort's order and each range task's keys and input bytes."""
    head = f"  {sort.vertex} (reading {sort.source!r}) sorted by {sort.order}"
    if not sort.decided:
        return [head + ": ranges not decided yet"]
    lines = [head + f": {len(sort.task_bytes)} range{'s' if len(sort.task_bytes) != 1 else ''}"]
    bounds = sort.bounds
    for k, given in enumerate(sort.task_bytes):
        low = f"from {bounds[k - 1]}" if k > 0 and k - 1 < len(bounds) else "from the first key"
        high = f"below {bounds[k]}" if k < len(bounds) else "to the last"
        lines.append(f"    task {k}: {low} {high}: {size(given)}")
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
    lines = [
        (
            f"{v.name} [{v.kind}]: parallelism {v.parallelism}, {origin_words(v)} "
            f"(vertex max {v.max_parallelism})"
        )
    ]
    if v.kind.split(", ")[-1].startswith("chain:"):
        lines.append(
            "  chained: its vertices run as one task, joined by FORWARD edges, by edges "
            "between two one-task vertices, or by a pre-aggregated edge out of one "
            "task (pipeline.operator-chaining.enabled)"
        )
    if v.origin == "decided":
        lines += _decided_lines(v)
    if v.inference:
        lines.append(f"  sources saw: {v.inference}")
    if v.task_bytes is not None:
        smallest, largest = v.task_bytes
        lines.append(
            f"  tasks given: smallest {size(smallest)}, largest {size(largest)} of "
            "non-broadcast input"
        )
    lines += _skew_lines(facts, v)
    lines.append(f"  why: {v.explanation}")
    lines.extend(sql_lines(v.name, v.sql))
    return lines


def _decided_lines(v: VertexFacts) -> list[str]:
    """What a parallelism decided at run time consumed, and how it was clamped."""
    broadcast = (
        f", {size(v.broadcast_bytes)} broadcast left out"
        if v.broadcast_bytes
        else ", nothing broadcast"
    )
    return [
        f"  consumed: {size(v.input_bytes)} ({v.input_bytes:,} bytes){broadcast}",
        f"  raw value: {v.raw:g} (non-broadcast bytes / avg-data-volume-per-task)",
        "  clamps: " + ("; ".join(v.clamps) if v.clamps else "none"),
    ]


def _skew_lines(facts: JobFacts, v: VertexFacts) -> list[str]:
    """The skewed subpartitions of the vertex's inputs, cut across its tasks."""
    lines = []
    for r in facts.results:
        if r.target == v.name and r.splits:
            cuts = ", ".join(
                f"subpartition {s} cut into {ways} pieces" for s, ways in r.splits[:12]
            )
            more = f" and {len(r.splits) - 12} more" if len(r.splits) > 12 else ""
            lines.append(
                f"  skew: {r.source} -> {v.name}: {cuts}{more}, one task each "
                "(the other inputs' matching data read whole by each)"
            )
    return lines
