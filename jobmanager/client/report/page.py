"""The job report: one self-contained HTML file (inline SVG, CSS and script; nothing fetched
when it is viewed), built from a job's facts alone, so it can be written for a finished job
long after its cluster is gone and mailed to whoever asks why the job did what it did."""

from __future__ import annotations

import re
import time
from html import escape

from jobmanager.client.loss_words import loss_summary
from jobmanager.client.report.explain import join_lines, origin_words, sort_lines
from jobmanager.client.report.facts import JobFacts
from jobmanager.client.report.svg import (
    MARKER_COLOURS,
    bytes_svg,
    graph_svg,
    size,
    timeline_svg,
    vertex_colours,
)
from jobmanager.messages.jobstatus import JobStatus

__all__ = ["report_file_name", "report_html"]

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px 32px;
       color: #222; background: #fafafa; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
h3 { font-size: 14px; margin: 16px 0 4px; font-weight: 600; }
.status { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff;
          font-size: 13px; vertical-align: middle; }
.FINISHED { background: #2ca02c; } .FAILED { background: #d62728; }
.CANCELED { background: #ff7f0e; } .other { background: #1f77b4; }
.summary td { padding: 1px 12px 1px 0; } .summary td:first-child { color: #666; }
pre.cause { background: #fff0f0; border: 1px solid #f3c0c0; padding: 8px; white-space: pre-wrap;
            max-height: 240px; overflow: auto; }
.scroll { overflow-x: auto; background: #fff; border: 1px solid #e3e3e3; border-radius: 6px;
          padding: 8px; }
svg text { font: 12px system-ui, sans-serif; fill: #333; }
.vertex { cursor: pointer; } .vertex-name { font-weight: 600; } .vertex-kind { fill: #666; }
.edge { fill: none; stroke: #555; stroke-width: 1.4; } .edge-label { font-size: 11px; fill: #444; }
.tick { stroke: #eee; } .tick-label, .row-label, .axis-label, .range-label { font-size: 11px; fill: #666; }
.queued { stroke-width: 1; stroke-dasharray: 2 2; }
.attempt { stroke: #fff; stroke-width: 0.5; }
.outcome-failed { stroke: #d62728; stroke-width: 2; fill-opacity: 0.55; }
.outcome-lost, .outcome-abandoned, .outcome-canceled { fill-opacity: 0.35; stroke: #777;
                                                        stroke-dasharray: 3 2; }
.range-0 { fill: #f1f5fb; } .range-1 { fill: #e3ebf6; }
.bar { fill: #4e79a7; } .bar.split { fill: #f28e2b; } .split-label { fill: #c05a00; font-weight: 600; }
.dim { opacity: 0.18; }
table.vertices { border-collapse: collapse; background: #fff; width: 100%; }
table.vertices th, table.vertices td { border-bottom: 1px solid #e6e6e6; padding: 4px 8px;
                                       text-align: left; vertical-align: top; }
table.vertices td.n { text-align: right; white-space: nowrap; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; border-radius: 2px; }
.legend span { margin-right: 14px; white-space: nowrap; } .why { color: #444; font-size: 13px; }
pre.sql { background: #fff; border: 1px solid #e3e3e3; border-radius: 6px; padding: 8px;
          white-space: pre-wrap; margin: 4px 0 12px; } .origin { margin: 2px 0; color: #444; }
pre.decided { margin: 2px 0 10px 12px; white-space: pre-wrap; }
"""

_SCRIPT = """
(function () {
  var chosen = null;
  function show(name) {
    chosen = chosen === name ? null : name;
    document.querySelectorAll('[data-vertex]').forEach(function (element) {
      var other = chosen !== null && element.getAttribute('data-vertex') !== chosen;
      element.classList.toggle('dim', other);
    });
  }
  document.querySelectorAll('.vertex').forEach(function (element) {
    element.addEventListener('click', function () { show(element.getAttribute('data-vertex')); });
    element.addEventListener('keydown', function (event) {
      if (event.key === 'Enter') { show(element.getAttribute('data-vertex')); }
    });
  });
})();
"""


def report_file_name(facts: JobFacts) -> str:
    """``<job name>-<job id>.html``, the name made safe for a file."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", facts.name).strip("-") or "job"
    return f"{name}-{facts.job_id}.html"


def _when(ms: int | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000)) if ms else ""


def report_html(facts: JobFacts) -> str:
    status_css = facts.status.value if facts.status.is_terminal else "other"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(facts.name)}: {escape(facts.status)} (Tidal job report)</title>",
        f"<style>{_CSS}</style></head><body>",
        f'<h1>{escape(facts.name)} <span class="status {status_css}">{escape(facts.status)}</span></h1>',
        '<table class="summary">'
        + "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in _summary(facts))
        + "</table>",
    ]
    if facts.cause:
        what = "It recovered from" if facts.status is JobStatus.FINISHED else "Cause"
        parts.append(f'<p>{what}:</p><pre class="cause">{escape(facts.cause)}</pre>')
    parts += [
        "<h2>Job graph</h2>",
        "<p class=why>Each vertex with its parallelism and what it runs; each edge with its "
        "partitioner, pattern, result type and the bytes that crossed it. Click a vertex to "
        "pick out its tasks below.</p>",
        f'<div class="scroll">{graph_svg(facts)}</div>',
        "<h2>Timeline</h2>",
        _legend(facts),
        f'<div class="scroll">{timeline_svg(facts)}</div>',
    ]
    parts.extend(_bytes_section(facts))
    parts.extend(_decisions_section(facts))
    parts.append("<h2>Vertices</h2>")
    parts.append(_vertex_table(facts))
    parts.extend(_sql_section(facts))
    parts.append(f"<script>{_SCRIPT}</script></body></html>")
    return "\n".join(parts)


def _summary(facts: JobFacts) -> list[tuple[str, str]]:
    """The job's summary table: its id, when it ran, its tasks and recoveries, and each
    TaskManager it lost with what the loss cost."""
    duration = ((facts.ended_ms or facts.last_ms) - facts.submitted_ms) / 1000
    return [
        ("job id", facts.job_id),
        ("submitted", _when(facts.submitted_ms)),
        ("ended", _when(facts.ended_ms) or "not yet"),
        ("duration", f"{duration:.2f} s" + ("" if facts.ended_ms else " so far")),
        (
            "tasks",
            f"{sum(v.tasks for v in facts.vertices):,} in {len(facts.vertices)} vertices, "
            f"{len(facts.attempts):,} attempts",
        ),
        ("JobManager recoveries", str(facts.recoveries)),
        *(("TaskManager lost", loss_summary(loss)) for loss in facts.losses),
    ]


def _bytes_section(facts: JobFacts) -> list[str]:
    """A chart of bytes per subpartition for each all-to-all result that counted them."""
    charts = [r for r in facts.results if r.subpartition_bytes]
    if not charts:
        return []
    parts = [
        "<h2>Bytes per subpartition</h2>",
        "<p class=why>Each all-to-all result's bytes per subpartition, summed over "
        "its producers; the bands are the ranges its consumer tasks were given, and "
        "orange bars are skewed subpartitions cut across several tasks.</p>",
    ]
    for r in charts:
        parts.append(
            f"<h3>{escape(r.source)} → {escape(r.target)} ({escape(r.partitioner)}, "
            f"{size(r.bytes)})</h3>"
        )
        parts.append(f'<div class="scroll">{bytes_svg(r)}</div>')
    return parts


def _decisions_section(facts: JobFacts) -> list[str]:
    """Each join's decision and each global sort's ranges, as ``tidal explain`` words them,
    one block per join or sort, marked with the vertex that runs it."""
    if not facts.joins and not facts.sorts:
        return []
    parts = [
        "<h2>Joins and sorts</h2>",
        (
            "<p class=why>How each join was decided (from the listing by the planner, or at "
            "run time from the bytes its sides wrote), on which bytes against which threshold, "
            "and what moved for each side; each global sort's key bounds and the bytes each "
            "range's task was given.</p>"
        ),
    ]
    blocks = [(j.vertex, "join", join_lines(j)) for j in facts.joins]
    blocks += [(s.vertex, "sort", sort_lines(s)) for s in facts.sorts]
    for vertex, what, lines in blocks:
        head, *rest = (line.strip() for line in lines)
        parts.append(
            f'<div class="{what}" data-vertex="{escape(vertex)}"><h3>{escape(head)}</h3>'
            f'<pre class="decided">{escape(chr(10).join(rest))}</pre></div>'
        )
    return parts


def _sql_section(facts: JobFacts) -> list[str]:
    """The Spark SQL each vertex of a planned query runs, under the part of the query it came
    from; a chain's members one after the other."""
    pieces = [(v.name, piece) for v in facts.vertices for piece in v.sql]
    if not pieces:
        return []
    parts = [
        "<h2>SQL</h2>",
        "<p class=why>The piece of the query each vertex runs, as Spark SQL over the views "
        "it names (its sources, then its inputs), under the part of the query it came "
        "from.</p>",
    ]
    for vertex, piece in pieces:
        who = vertex if piece.member == vertex else f"{vertex}: {piece.member}"
        origin = " ".join(piece.origin.split())
        parts.append(
            f'<div data-vertex="{escape(vertex)}"><h3>{escape(who)}</h3>'
            + (
                f'<p class="origin">from the query: <code>{escape(origin)}</code></p>'
                if origin
                else ""
            )
            + f'<pre class="sql">{escape(piece.sql.strip())}</pre></div>'
        )
    return parts


def _legend(facts: JobFacts) -> str:
    colours = vertex_colours(facts)
    items = [
        f'<span><i class="swatch" style="background:{colours[v.name]}"></i>{escape(v.name)}</span>'
        for v in facts.vertices
    ]
    kinds = sorted({m.kind for m in facts.markers})
    items += [
        f'<span><i class="swatch" style="background:{MARKER_COLOURS.get(k, "#333")}"></i>'
        f"{escape(k)}</span>"
        for k in kinds
    ]
    return f'<p class="legend">{"".join(items)}</p>'


def _vertex_table(facts: JobFacts) -> str:
    head = (
        "vertex",
        "runs",
        "parallelism",
        "tasks",
        "attempts",
        "rows in",
        "rows out",
        "bytes in",
        "bytes out",
        "duration",
        "why",
    )
    rows = []
    for v in facts.vertices:
        parallelism = "—" if v.parallelism is None else f"{v.parallelism} ({origin_words(v)})"
        why = v.explanation if v.parallelism is not None else v.waiting_for
        if v.task_bytes is not None:
            why += f" [tasks given {size(v.task_bytes[0])} to {size(v.task_bytes[1])}]"
        cells = [
            escape(v.name),
            escape(v.kind + (f": {v.operator}" if v.operator else "")),
            escape(parallelism),
            f"{v.finished:,}/{v.tasks:,}",
            f"{v.deployments:,}",
            f"{v.rows_in:,}",
            f"{v.rows_out:,}",
            size(v.bytes_in),
            size(v.bytes_out),
            "" if v.duration_s is None else f"{v.duration_s:.2f} s",
            escape(why),
        ]
        rows.append(
            "<tr>"
            + "".join(
                f'<td class="{"n" if 3 <= i <= 9 else ""}">{c}</td>' for i, c in enumerate(cells)
            )
            + "</tr>"
        )
    return (
        '<table class="vertices"><tr>'
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr>"
        + "".join(rows)
        + "</table>"
    )
