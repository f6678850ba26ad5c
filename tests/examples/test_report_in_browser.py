"""A real job's report in a real browser: the demo's shape at a tiny scale on the local Ray
cluster with real PySpark, one task made to fail once so the timeline has a restart, its
report opened in headless Chromium (Debian's, driven by Playwright). The page loads with no
console error and its graph shows every vertex with the parallelism the job decided; a
screenshot is saved under the test's temporary directory. ``tidal explain``, ``tidal report``
and ``tidal history`` then read the same finished job from the command line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from examples.revenue_by_nation import build
from jobmanager import spark
from jobmanager.model.config import NUMBER_OF_TASK_SLOTS
from tests.jobmanager.runtime.jobs import FAST

pytestmark = [pytest.mark.runtime, pytest.mark.spark]

REPO = Path(__file__).resolve().parents[2]
FAILING_VERTEX = "join_customer"


def fail_once(fn, marker: str):
    def first_attempt_fails(*frames):
        if not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("injected: the first attempt of this task dies")
        return fn(*frames)

    return first_attempt_fails


@pytest.fixture(scope="module")
def finished_job(ray_cluster, tiny_data, tmp_path_factory):
    """The demo with one failure injected, run to its end; its handle and result."""
    from jobmanager import Client

    folder = tmp_path_factory.mktemp("report-job")
    graph = build(tiny_data, folder / "out")
    vertex = graph.vertex(FAILING_VERTEX)
    vertex.operator = spark(fail_once(vertex.operator.fn, str(folder / "failed-once")))
    handle = Client().submit(graph, config={**FAST, NUMBER_OF_TASK_SLOTS.key: 2})
    result = handle.wait(timeout=300)
    assert result.status == "FINISHED", result.cause
    assert result.vertices[FAILING_VERTEX].deployments == result.vertices[FAILING_VERTEX].tasks + 1
    return handle, result


def chromium():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (deploy/run pytest installs the test extras)")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip(
            "no Chromium on this machine and it could not be installed "
            "(deploy/run pytest installs Debian's chromium where apt-get can)"
        )
    return sync_playwright, browser


def test_the_report_opens_in_chromium_with_every_vertex_and_its_parallelism(finished_job, tmp_path):
    handle, result = finished_job
    sync_playwright, browser = chromium()
    path = handle.report(str(tmp_path / "report.html"))
    problems = []
    with sync_playwright() as playwright:
        chrome = playwright.chromium.launch(
            executable_path=browser,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--disable-sync",
            ],
        )
        try:
            page = chrome.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on(
                "request",
                lambda r: (
                    problems.append(f"fetched {r.url}") if not r.url.startswith("file://") else None
                ),
            )
            page.goto(Path(path).as_uri())
            shown = {
                g.get_attribute("data-vertex"): g.query_selector(
                    ".vertex-parallelism"
                ).text_content()
                for g in page.query_selector_all("svg.graph g.vertex")
            }
            failed = page.query_selector_all("svg.timeline rect.outcome-failed")
            restarts = page.query_selector_all("svg.timeline line.marker-failure")
            page.click(f'svg.graph g.vertex[data-vertex="{FAILING_VERTEX}"]')
            dimmed = page.query_selector_all("svg.timeline .dim")
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        finally:
            chrome.close()
    assert problems == []
    assert shown == {
        v.chain or name: f"parallelism {v.parallelism}" for name, v in result.vertices.items()
    }
    assert len(failed) == 1 and len(restarts) == 1
    assert len(dimmed) > 0  # clicking a vertex picks out its tasks
    assert (tmp_path / "report.png").stat().st_size > 10_000


def tidal(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jobmanager", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ, "COLUMNS": "160"},
    )


def test_explain_report_and_history_read_the_finished_job(finished_job, tmp_path):
    handle, result = finished_job
    explained = tidal("explain", handle.job_id)
    assert explained.returncode == 0, explained.stderr
    lines = explained.stdout.splitlines()
    assert lines[0].startswith(f"revenue-by-nation ({handle.job_id}): FINISHED")
    for name, vertex in result.vertices.items():  # a chain's vertices as one, named "a -> b"
        task = vertex.chain or name
        assert any(
            line.startswith(f"{task} [") and f"parallelism {vertex.parallelism}," in line
            for line in lines
        ), (task, explained.stdout)
    assert "  sources saw: FileSource(" in explained.stdout
    written = tidal("report", handle.job_id, "-o", str(tmp_path / "cli.html"))
    assert written.returncode == 0, written.stderr
    tasks = {v.chain or name for name, v in result.vertices.items()}
    assert (tmp_path / "cli.html").read_text().count('<g class="vertex"') == len(tasks)
    listed = tidal("history")
    assert listed.returncode == 0, listed.stderr
    assert handle.job_id in listed.stdout and "revenue-by-nation" in listed.stdout
