"""The pictures of a job report, as inline SVG: the job graph, the timeline of task attempts
per slot, and the bytes per subpartition of an all-to-all result with its consumers' ranges.

Plain strings, no library: the page must open with no network, and each picture is a few
hundred elements at most. Hovering an element shows its ``<title>``. Elements of a vertex
carry ``data-vertex`` so the page's script can highlight the vertex everywhere.
"""

from __future__ import annotations

import math
from html import escape

from jobmanager.client.report.facts import JobFacts, ResultFacts
from jobmanager.client.report.layout import layered_layout

__all__ = ["bytes_svg", "graph_svg", "size", "timeline_svg", "vertex_colours"]

PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#b07aa1",
    "#76b7b2",
    "#edc948",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
    "#e15759",
)
MARKER_COLOURS = {
    "failure": "#d62728",
    "lost": "#7f7f7f",
    "recovery": "#9467bd",
    "cancel": "#ff7f0e",
    "request-failed": "#8c564b",
    "end": "#2ca02c",
    "archive": "#17becf",
}
_NODE_W, _NODE_H, _GAP_X, _GAP_Y, _PAD = 190, 66, 190, 40, 24


def size(n: int | float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def vertex_colours(facts: JobFacts) -> dict[str, str]:
    return {v.name: PALETTE[i % len(PALETTE)] for i, v in enumerate(facts.vertices)}


def _text(x: float, y: float, text: str, css: str = "", anchor: str = "start") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"'
        f"{f' class={chr(34)}{css}{chr(34)}' if css else ''}>{escape(text)}</text>"
    )


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- the job graph ------------------------------------------------------------------------------


def graph_svg(facts: JobFacts) -> str:
    nodes = [v.name for v in facts.vertices]
    place = layered_layout(nodes, [(r.source, r.target) for r in facts.results])
    per_layer: dict[int, int] = {}
    for layer, _ in place.values():
        per_layer[layer] = per_layer.get(layer, 0) + 1
    tallest = max(per_layer.values(), default=1)
    height = 2 * _PAD + tallest * _NODE_H + (tallest - 1) * _GAP_Y + 20
    width = 2 * _PAD + len(per_layer) * _NODE_W + (len(per_layer) - 1) * _GAP_X

    def box(name: str) -> tuple[float, float]:
        layer, position = place[name]
        offset = (tallest - per_layer[layer]) * (_NODE_H + _GAP_Y) / 2
        return _PAD + layer * (_NODE_W + _GAP_X), _PAD + 20 + offset + position * (_NODE_H + _GAP_Y)

    colours = vertex_colours(facts)
    parts = [
        f'<svg class="graph" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="job graph">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>'
        "</defs>",
    ]
    seen: dict[tuple[str, str], int] = {}
    for r in facts.results:
        (x1, y1), (x2, y2) = box(r.source), box(r.target)
        index = seen.get((r.source, r.target), 0)
        seen[(r.source, r.target)] = index + 1
        a, b = (x1 + _NODE_W, y1 + _NODE_H / 2), (x2, y2 + _NODE_H / 2)
        bend = (b[0] - a[0]) / 2
        parts.append(
            f'<path class="edge" d="M{a[0]:.1f},{a[1]:.1f} C{a[0] + bend:.1f},{a[1]:.1f} '
            f'{b[0] - bend:.1f},{b[1]:.1f} {b[0]:.1f},{b[1]:.1f}" '
            f'marker-end="url(#arrow)"><title>{escape(_edge_title(r))}</title></path>'
        )
        mx, my = _label_point(a, b, bend)
        my += -14 + 30 * index
        parts.append(_text(mx, my - 6, f"{r.partitioner} · {r.pattern}", "edge-label", "middle"))
        parts.append(
            _text(mx, my + 7, f"{r.result_type} · {size(r.bytes)}", "edge-label", "middle")
        )
    for v in facts.vertices:
        x, y = box(v.name)
        p = "undecided" if v.parallelism is None else f"parallelism {v.parallelism}"
        parts.append(
            f'<g class="vertex" data-vertex="{escape(v.name)}" tabindex="0">'
            f"<title>{escape(v.name)}: {escape(v.explanation or v.waiting_for)}</title>"
            f'<rect x="{x}" y="{y}" width="{_NODE_W}" height="{_NODE_H}" rx="8" '
            f'fill="#fff" stroke="{colours[v.name]}" stroke-width="3"/>'
            f'<rect x="{x}" y="{y}" width="8" height="{_NODE_H}" rx="3" fill="{colours[v.name]}"/>'
            + _text(x + 16, y + 20, _short(v.name, 24), "vertex-name")
            + _text(x + 16, y + 38, _short(v.kind, 28), "vertex-kind")
            + _text(x + 16, y + 56, p, "vertex-parallelism")
            + "</g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _label_point(
    a: tuple[float, float], b: tuple[float, float], bend: float
) -> tuple[float, float]:
    """Where an edge's label goes: on the curve, in the gap right after its source, which no
    vertex box occupies however many layers the edge spans."""
    x = a[0] + min(_GAP_X / 2, (b[0] - a[0]) / 2)
    points = (a, (a[0] + bend, a[1]), (b[0] - bend, b[1]), b)

    def at(t: float, axis: int) -> float:
        u = 1 - t
        return (
            u**3 * points[0][axis]
            + 3 * u * u * t * points[1][axis]
            + 3 * u * t * t * points[2][axis]
            + t**3 * points[3][axis]
        )

    low, high = 0.0, 1.0
    for _ in range(30):  # the curve's x grows with t: bisect for the label's x
        middle = (low + high) / 2
        low, high = (middle, high) if at(middle, 0) < x else (low, middle)
    return x, at(low, 1)


def _edge_title(r: ResultFacts) -> str:
    return (
        f"{r.source} → {r.target}: {r.partitioner}, {r.pattern}, {r.result_type}; "
        f"{r.bytes:,} bytes from {r.partitions} partitions"
    )


# -- the timeline -------------------------------------------------------------------------------

_LABEL_W, _PLOT_W, _ROW_H, _AXIS_H = 170, 960, 16, 28


def timeline_svg(facts: JobFacts, max_bars: int = 2000, max_rows: int = 120) -> str:
    """One row per slot and one bar per attempt; past ``max_bars`` attempts or ``max_rows``
    slots, one row per vertex showing how many of its tasks ran in each sliver of time."""
    start = facts.submitted_ms
    span = max(facts.last_ms - start, 1)

    def x(t: float) -> float:
        return _LABEL_W + (t - start) * _PLOT_W / span

    aggregate = len(facts.attempts) > max_bars or len(facts.slots) > max_rows
    rows = [v.name for v in facts.vertices] if aggregate else list(facts.slots)
    height = _AXIS_H + len(rows) * _ROW_H + 10
    width = _LABEL_W + _PLOT_W + 20
    parts = [
        f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="task attempts over time">'
    ]
    parts.extend(_axis(span, x, start, height))
    colours = vertex_colours(facts)
    if aggregate:
        parts.extend(_aggregated_rows(facts, rows, colours, x, start, span))
    else:
        parts.extend(_slot_rows(facts, rows, colours, x))
    for m in facts.markers:
        colour = MARKER_COLOURS.get(m.kind, "#333")
        parts.append(
            f'<line class="marker marker-{m.kind}" x1="{x(m.time_ms):.1f}" y1="{_AXIS_H - 6}" '
            f'x2="{x(m.time_ms):.1f}" y2="{height - 4}" stroke="{colour}" '
            f'stroke-width="1.5" stroke-dasharray="4 2"><title>{escape(m.text)}</title></line>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _axis(span: int, x, start: int, height: int) -> list[str]:
    step = _nice_step(span / 1000 / 8)
    parts = []
    t = 0.0
    while t * 1000 <= span:
        at = x(start + t * 1000)
        parts.append(
            f'<line class="tick" x1="{at:.1f}" y1="{_AXIS_H - 4}" x2="{at:.1f}" y2="{height - 4}"/>'
        )
        parts.append(_text(at, _AXIS_H - 10, f"{t:g} s", "tick-label", "middle"))
        t += step
    return parts


def _nice_step(rough: float) -> float:
    if rough <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(rough))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= rough)


def _slot_rows(facts: JobFacts, rows: list, colours: dict, x) -> list[str]:
    row_of = {slot: i for i, slot in enumerate(rows)}
    parts = []
    for i, (task_manager, slot) in enumerate(rows):
        y = _AXIS_H + i * _ROW_H
        parts.append(_text(4, y + 12, f"{_short(task_manager, 18)} slot {slot}", "row-label"))
    for a in facts.attempts:
        y = _AXIS_H + row_of[(a.task_manager, a.slot)] * _ROW_H
        end = a.ended_ms if a.ended_ms is not None else facts.last_ms
        title = (
            f"{a.vertex}[{a.subtask}] attempt {a.attempt}: {a.outcome}, "
            f"{(end - a.started_ms) / 1000:.2f} s" + (f": {a.error}" if a.error else "")
        )
        if a.started_ms > a.deployed_ms:  # waited in the slot behind another task
            parts.append(
                f'<line class="queued" x1="{x(a.deployed_ms):.1f}" y1="{y + 8}" '
                f'x2="{x(a.started_ms):.1f}" y2="{y + 8}" stroke="{colours[a.vertex]}"/>'
            )
        w = max(x(end) - x(a.started_ms), 1.5)
        parts.append(
            f'<rect class="attempt outcome-{a.outcome}" data-vertex="{escape(a.vertex)}" '
            f'x="{x(a.started_ms):.1f}" y="{y + 2}" width="{w:.1f}" height="{_ROW_H - 4}" '
            f'fill="{colours[a.vertex]}"><title>{escape(title)}</title></rect>'
        )
    return parts


def _binned_attempts(facts: JobFacts, rows: list, start: int, width: float, bins: int):
    """Per vertex and time bin, the tasks running on average and the attempts failed."""
    busy = {name: [0.0] * bins for name in rows}
    failed = {name: [0] * bins for name in rows}
    for a in facts.attempts:
        end = a.ended_ms if a.ended_ms is not None else facts.last_ms
        first, last = int((a.started_ms - start) / width), int((end - start) / width)
        for b in range(max(first, 0), min(last, bins - 1) + 1):
            lo, hi = start + b * width, start + (b + 1) * width
            busy[a.vertex][b] += max(0.0, min(end, hi) - max(a.started_ms, lo)) / width
        if a.outcome == "failed":
            failed[a.vertex][min(max(last, 0), bins - 1)] += 1
    return busy, failed


def _aggregated_rows(
    facts: JobFacts, rows: list, colours: dict, x, start: int, span: int, bins: int = 320
) -> list[str]:
    width = span / bins
    busy, failed = _binned_attempts(facts, rows, start, width, bins)
    parts = []
    for i, name in enumerate(rows):
        y = _AXIS_H + i * _ROW_H
        parts.append(_text(4, y + 12, _short(name, 24), "row-label"))
        peak = max(busy[name]) or 1.0
        for b, running in enumerate(busy[name]):
            if running <= 0:
                continue
            lo = start + b * width
            title = f"{name}: {running:.1f} tasks running on average" + (
                f", {failed[name][b]} failed" if failed[name][b] else ""
            )
            parts.append(
                f'<rect class="busy" data-vertex="{escape(name)}" x="{x(lo):.1f}" y="{y + 2}" '
                f'width="{max(x(lo + width) - x(lo), 1):.1f}" height="{_ROW_H - 4}" '
                f'fill="{colours[name]}" fill-opacity="{0.15 + 0.85 * running / peak:.2f}">'
                f"<title>{escape(title)}</title></rect>"
            )
    return parts


# -- bytes per subpartition ---------------------------------------------------------------------

_CHART_W, _CHART_H = 960, 180


def _range_bands(result: ResultFacts, x, top: int) -> list[str]:
    """The consumer tasks' ranges as alternating bands, numbered by task when few."""
    counts, parts = result.subpartition_bytes, []
    for k, (first, last) in enumerate(result.consumer_ranges):
        parts.append(
            f'<rect class="range range-{k % 2}" x="{x(first):.1f}" y="{top}" '
            f'width="{max(x(last + 1) - x(first), 1):.1f}" height="{_CHART_H}">'
            f"<title>task {k}: subpartitions {first}..{last}, "
            f"{size(sum(counts[first : last + 1]))}</title></rect>"
        )
        if len(result.consumer_ranges) <= 64:
            middle = (x(first) + x(last + 1)) / 2
            parts.append(_text(middle, top + _CHART_H + 14, str(k), "range-label", "middle"))
    return parts


def _bar_title(first: int, group: int, n: int, value: int, split_ways: int | None) -> str:
    label = (
        f"subpartition {first}"
        if group == 1
        else f"subpartitions {first}..{min(first + group, n) - 1}"
    )
    split = f", split across {split_ways} tasks" if split_ways is not None else ""
    return f"{label}: {value:,} bytes{split}"


def _bytes_caption(result: ResultFacts, n: int, group: int) -> str:
    per_bar = f" ({group} per bar)" if group > 1 else ""
    if not result.consumer_ranges:
        return f"{n} subpartitions{per_bar}; consumer not decided yet"
    return (
        f"{n} subpartitions{per_bar}; bands: the {len(result.consumer_ranges)} consumer "
        "tasks' ranges"
    )


def bytes_svg(result: ResultFacts, max_bars: int = 400) -> str:
    """Bars of bytes per subpartition (grouped when there are more than ``max_bars``), the
    consumer tasks' ranges as alternating bands numbered by task, split subpartitions in
    orange with how many tasks read them."""
    counts = result.subpartition_bytes
    n = len(counts)
    group = max(1, math.ceil(n / max_bars))
    bars = [sum(counts[i : i + group]) for i in range(0, n, group)]
    peak = max(bars, default=0) or 1
    left, top = 70, 24
    step = _CHART_W / max(len(bars), 1)
    height = top + _CHART_H + 40

    def x(subpartition: float) -> float:
        return left + subpartition / group * step

    parts = [
        f'<svg class="bytes" xmlns="http://www.w3.org/2000/svg" width="{left + _CHART_W + 20}" '
        f'height="{height}" role="img" aria-label="bytes per subpartition of {escape(result.result)}">'
    ]
    parts += _range_bands(result, x, top)
    split_bins = {s // group: ways for s, ways in result.splits}
    for i, value in enumerate(bars):
        h = value / peak * (_CHART_H - 10)
        css = "bar split" if i in split_bins else "bar"
        title = _bar_title(i * group, group, n, value, split_bins.get(i))
        parts.append(
            f'<rect class="{css}" x="{left + i * step + 0.5:.1f}" y="{top + _CHART_H - h:.1f}" '
            f'width="{max(step - 1, 0.8):.1f}" height="{h:.1f}"><title>{escape(title)}</title></rect>'
        )
    for s, ways in result.splits[:24]:
        parts.append(_text(x(s + 0.5), top - 6, f"×{ways}", "split-label", "middle"))
    parts.append(_text(left - 6, top + 10, size(peak), "axis-label", "end"))
    parts.append(_text(left - 6, top + _CHART_H, "0", "axis-label", "end"))
    parts.append(
        _text(
            left + _CHART_W / 2,
            height - 4,
            _bytes_caption(result, n, group),
            "axis-label",
            "middle",
        )
    )
    parts.append("</svg>")
    return "".join(parts)
