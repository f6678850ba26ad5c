"""The progress displays, driven by a sequence of ``JobDetails`` as ``JobHandle.wait`` polls them:
a vertex undecided, then decided, tasks finishing, a restart lowering a finished count, the end."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from structlog.testing import capture_logs

from jobmanager.client import progress as progress_module
from jobmanager.client.progress import (
    LogProgress,
    NoProgress,
    Overall,
    RichProgress,
    progress_for,
    summary_table,
)
from jobmanager.runtime.details import JobDetails, VertexDetails

SUBMITTED = 1_000.0
MiB = 1 << 20


def vertex(name, parallelism, finished=0, running=0, rows=(0, 0), size=(0, 0)):
    return VertexDetails(
        name=name,
        members=(name,),
        parallelism=parallelism,
        max_parallelism=128,
        tasks=parallelism or 0,
        finished=finished,
        running=running,
        deployments=finished + running,
        rows_in=rows[0],
        rows_out=rows[1],
        bytes_in=size[0],
        bytes_in_remote=0,
        ranges_read=0,
        phases_ms={},
        queued_ms=0,
        spark_jobs=0,
        bytes_out=size[1],
        duration_s=None,
        started_at=SUBMITTED + 1 if finished or running else None,
        explanation="why not",
    )


def status(job, *vertices, ended_at=None):
    return JobDetails(
        job_id="job-7",
        name="shapes",
        status=job,
        cause="",
        submitted_at=SUBMITTED,
        ended_at=ended_at,
        max_running_tasks=0,
        task_overhead_ms=0.0,
        first_deployed_at=None,
        first_task_finished_at=None,
        task_managers=(),
        recoveries=0,
        vertices=tuple(vertices),
        pid=0,
        jobmanager=None,
    )


# vertex order on purpose not alphabetical: "zeta" reads, "alpha" joins, "mid" writes
STEPS = [
    # 0: only the source is decided
    status("RUNNING", vertex("zeta", 4, running=2), vertex("alpha", None), vertex("mid", None)),
    # 1: the source is done; its consumer is decided and three of its tasks already finished
    status(
        "RUNNING",
        vertex("zeta", 4, 4, rows=(1_500_000, 300_000), size=(64 * MiB, 2 * MiB)),
        vertex("alpha", 8, 3, running=2, rows=(120_000, 4_500), size=(768 * 1024, 100_000)),
        vertex("mid", None),
    ),
    # 2: a failed region re-runs: one of alpha's finished tasks is lost
    status(
        "RECONCILING",
        vertex("zeta", 4, 4, rows=(1_500_000, 300_000), size=(64 * MiB, 2 * MiB)),
        vertex("alpha", 8, 1, rows=(40_000, 1_500), size=(256 * 1024, 30_000)),
        vertex("mid", None),
    ),
    # 3: alpha is done, mid is decided
    status(
        "RUNNING",
        vertex("zeta", 4, 4, rows=(1_500_000, 300_000), size=(64 * MiB, 2 * MiB)),
        vertex("alpha", 8, 8, rows=(300_000, 12_000), size=(2 * MiB, 300_000)),
        vertex("mid", 2, 0, running=2),
    ),
    # 4: the end
    status(
        "FINISHED",
        vertex("zeta", 4, 4, rows=(1_500_000, 300_000), size=(64 * MiB, 2 * MiB)),
        vertex("alpha", 8, 8, rows=(300_000, 12_000), size=(2 * MiB, 300_000)),
        vertex("mid", 2, 2, rows=(12_000, 12_000), size=(300_000, 0)),
        ended_at=SUBMITTED + 75,
    ),
]
NAMES = ["zeta", "alpha", "mid"]


def display(width=110, **options):
    console = Console(file=io.StringIO(), force_terminal=True, width=width, record=True)
    clock = lambda: SUBMITTED + 12.5  # noqa: E731
    shown = RichProgress(console=console, clock=clock, auto_refresh=False, **options)
    return shown, console


def text_of(shown: RichProgress, width=110) -> list[str]:
    out = Console(file=io.StringIO(), record=True, width=width, force_terminal=True)
    out.print(shown.frame())
    return [line.rstrip() for line in out.export_text().splitlines() if line.strip()]


def row(lines: list[str], name: str) -> str:
    (found,) = [line for line in lines if line.split()[0] == name]
    return found


# -- rich ---------------------------------------------------------------------------------------


def test_one_row_per_vertex_in_the_jobs_order_then_the_overall_line():
    shown, _ = display()
    shown.update(STEPS[0])
    lines = text_of(shown)
    assert [line.split()[0] for line in lines] == [*NAMES, "RUNNING"]
    assert "0/4" in row(lines, "zeta")
    assert "0/?" in row(lines, "alpha") and "0/?" in row(lines, "mid")
    overall = "0:00:12 · 0/3 vertices done · 0 of 4+ tasks done (2 vertices undecided)"
    assert lines[3].endswith(overall)


def test_rows_stay_in_place_from_frame_to_frame():
    shown, _ = display()
    places = []
    for step in STEPS:
        shown.update(step)
        lines = text_of(shown)
        places.append([line.split()[0] for line in lines[:3]])
    assert places == [NAMES] * len(STEPS)


def test_a_vertex_decided_after_the_ones_below_it_keeps_its_place():
    shown, _ = display()
    shown.update(status("RUNNING", vertex("join", None), vertex("left", 3, 1), vertex("right", 2)))
    shown.update(status("RUNNING", vertex("join", 5), vertex("left", 3, 3), vertex("right", 2, 2)))
    lines = text_of(shown)
    assert [line.split()[0] for line in lines[:3]] == ["join", "left", "right"]
    assert "0/5" in lines[0] and "3/3" in lines[1] and "2/2" in lines[2]


def test_a_decided_vertex_shows_finished_of_total_and_its_rows_and_bytes():
    shown, _ = display()
    shown.update(STEPS[0])
    shown.update(STEPS[1])
    lines = text_of(shown)
    assert "4/4" in row(lines, "zeta")
    assert "1.5M → 300.0k rows" in row(lines, "zeta")
    assert "64.0 MiB → 2.0 MiB" in row(lines, "zeta")
    assert "3/8" in row(lines, "alpha")
    assert "120.0k → 4.5k rows" in row(lines, "alpha")
    assert "768.0 KiB → 97.7 KiB" in row(lines, "alpha")
    assert "0/?" in row(lines, "mid") and "rows" not in row(lines, "mid")
    overall = " ".join(lines[3:])
    assert "1/3 vertices done" in overall and "7 of 12+ tasks done (1 vertex undecided)" in overall


def test_no_bar_jumps_backwards_when_its_total_becomes_known():
    shown, _ = display()
    seen: dict[str, list[tuple]] = {name: [] for name in NAMES}
    for step in STEPS[:2] + STEPS[3:]:  # no restart: everything may only move forwards
        shown.update(step)
        for name, task in shown.tasks().items():
            seen[name].append((task.completed, task.total))
    for name, history in seen.items():
        fractions = [0.0 if total is None else completed / total for completed, total in history]
        assert fractions == sorted(fractions), (name, history)
        assert [c for c, _ in history] == sorted(c for c, _ in history), (name, history)
    assert seen["alpha"][0] == (0, None) and seen["alpha"][1] == (3, 8)
    assert seen["mid"][:2] == [(0, None), (0, None)] and seen["mid"][-1] == (2, 2)


def test_an_undecided_vertex_pulses_at_zero_whatever_its_finished_count_says():
    shown, _ = display()
    meaningless = status(
        "RUNNING", vertex("zeta", 4), vertex("alpha", None, finished=5), vertex("mid", None)
    )
    shown.update(meaningless)
    alpha = shown.tasks()["alpha"]
    assert (alpha.completed, alpha.total) == (0, None)
    assert "0/?" in row(text_of(shown), "alpha")


def test_a_total_once_known_stays_if_a_status_forgets_it():
    shown, _ = display()
    shown.update(STEPS[1])
    forgot = status("RUNNING", vertex("zeta", 4, 4), vertex("alpha", None), vertex("mid", None))
    shown.update(forgot)
    alpha = shown.tasks()["alpha"]
    assert (alpha.completed, alpha.total) == (3, 8)


def test_a_restart_shows_the_lower_finished_count_the_status_gives():
    shown, _ = display()
    for step in STEPS[:3]:
        shown.update(step)
    assert (shown.tasks()["alpha"].completed, shown.tasks()["alpha"].total) == (1, 8)
    lines = text_of(shown)
    assert "1/8" in row(lines, "alpha") and "3/8" not in row(lines, "alpha")
    assert lines[3].startswith("RECONCILING") and "5 of 12+ tasks done" in " ".join(lines[3:])


def test_the_overall_bar_counts_vertices_whose_number_never_changes():
    overalls = [Overall.of(step, SUBMITTED + 12.5) for step in STEPS]
    assert {o.vertices for o in overalls} == {3}
    assert [o.vertices_done for o in overalls] == [0, 1, 1, 2, 3]
    assert [o.tasks_known for o in overalls] == [4, 12, 12, 14, 14]
    assert [o.undecided for o in overalls] == [2, 1, 1, 0, 0]
    assert overalls[-1].elapsed_s == 75  # the job's end, not the clock
    assert overalls[-1].text() == "0:01:15 · 3/3 vertices done · 14 of 14 tasks done"


def test_close_leaves_the_final_frame_on_the_console():
    shown, console = display()
    for step in STEPS[:-1]:
        shown.update(step)
    shown.close(STEPS[-1])
    assert not shown.bars.live.is_started
    text = console.export_text()
    final = text[text.rindex("zeta") :]
    assert "4/4" in final and "8/8" in final and "2/2" in final
    assert "FINISHED" in final and "3/3 vertices done · 14 of 14 tasks done" in final


def test_a_display_closed_at_once_shows_the_ended_job():
    shown, console = display()
    shown.close(STEPS[-1])
    text = console.export_text()
    assert "FINISHED" in text and "2/2" in text


def test_a_narrow_terminal_keeps_every_vertex_and_the_counts():
    shown, _ = display(width=80)
    shown.update(STEPS[1])
    lines = text_of(shown, width=80)
    assert [line.split()[0] for line in lines[:4]] == [*NAMES, "RUNNING"]
    assert "3/8" in row(lines, "alpha") and all(len(line) <= 80 for line in lines)


# -- log lines ----------------------------------------------------------------------------------


def test_log_lines_say_what_changed_once_and_no_more():
    with capture_logs() as logs:
        shown = LogProgress(clock=lambda: SUBMITTED + 12.5)
        shown.update(STEPS[0])
        assert [(e["event"], e.get("vertex")) for e in logs] == [
            ("vertex", "zeta"),
            ("vertex", "alpha"),
            ("vertex", "mid"),
            ("job", None),
        ]
        assert logs[0]["tasks"] == "0/4" and logs[1]["tasks"] == "0/?"
        assert logs[3]["status"] == "RUNNING" and logs[3]["elapsed"] == "0:00:12"
        assert logs[3]["vertices_done"] == "0/3" and logs[3]["undecided"] == 2

        del logs[:]
        shown.update(STEPS[0])  # polled again, nothing new
        busier = status(
            "RUNNING", vertex("zeta", 4, running=3), vertex("alpha", None), vertex("mid", None)
        )
        shown.update(busier)  # one more task running: not worth a line
        assert logs == []

        shown.update(STEPS[1])
        assert [e["vertex"] for e in logs] == ["zeta", "alpha"]  # mid did not change, nor the job
        zeta, alpha = logs
        assert zeta["tasks"] == "4/4"
        assert zeta["rows_in"] == 1_500_000 and zeta["rows_out"] == 300_000
        assert zeta["bytes_in"] == 64 * MiB and zeta["bytes_out"] == 2 * MiB
        assert alpha["tasks"] == "3/8" and alpha["running"] == 2


def test_log_lines_follow_a_restart_and_end_with_the_overall_line():
    with capture_logs() as logs:
        shown = LogProgress(clock=lambda: SUBMITTED + 12.5)
        for step in STEPS[:2]:
            shown.update(step)
        del logs[:]
        shown.update(STEPS[2])
        assert [(e["event"], e.get("vertex")) for e in logs] == [("vertex", "alpha"), ("job", None)]
        assert logs[0]["tasks"] == "1/8" and logs[1]["status"] == "RECONCILING"

        del logs[:]
        shown.update(STEPS[3])
        shown.close(STEPS[4])
        events = [(e["event"], e.get("vertex") or e.get("status")) for e in logs]
        assert events == [
            ("vertex", "alpha"),
            ("vertex", "mid"),
            ("job", "RUNNING"),
            ("vertex", "mid"),
            ("job", "FINISHED"),
        ]
        final = logs[-1]
        assert final["elapsed"] == "0:01:15" and final["vertices_done"] == "3/3"
        assert final["tasks_done"] == final["tasks_known"] == 14 and final["undecided"] == 0


def test_closing_on_an_unchanged_status_gives_the_overall_line_once():
    with capture_logs() as logs:
        shown = LogProgress(clock=lambda: SUBMITTED + 12.5)
        shown.update(STEPS[1])
        del logs[:]
        shown.close(STEPS[1])  # wait(timeout=...) gave up while the job runs
        assert [(e["event"], e["status"]) for e in logs] == [("job", "RUNNING")]
        assert logs[0]["tasks_done"] == 7 and logs[0]["tasks_known"] == 12


# -- choosing a display, and the table the CLI prints at the end ----------------------------------


@pytest.mark.parametrize(
    ("show", "tty", "kind"),
    [
        (False, True, NoProgress),
        (True, False, LogProgress),
        (True, True, RichProgress),
    ],
)
def test_a_terminal_gets_bars_anything_else_log_lines(monkeypatch, show, tty, kind):
    monkeypatch.setattr(progress_module.sys.stdout, "isatty", lambda: tty, raising=False)
    assert type(progress_for(show)) is kind


def test_the_summary_table_still_renders():
    out = Console(file=io.StringIO(), record=True, width=120)
    out.print(summary_table(STEPS[1], caption="took 12 s"))
    text = out.export_text()
    assert "job-7: RUNNING" in text and "3/8 (2 running)" in text and "300,000" in text
    assert text.index("zeta") < text.index("alpha") < text.index("mid")
