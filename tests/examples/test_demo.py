"""The README's demo (``examples/demo.py``) without a cluster: it runs the script the README
shows first, and prints each task's decision once, one reason a line. Its run on a real local
cluster is ``test_on_runtime.py``'s."""

from __future__ import annotations

import types
from pathlib import Path

from examples import demo

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_the_demo_runs_the_script_the_readme_shows_first():
    first = README.split("```python\n", 1)[1].split("```", 1)[0]
    assert first == demo.PIPELINE.read_text()


def test_the_readme_demo_command_is_the_demo():
    commands = README.split("## Two commands\n", 1)[1].split("\n## ", 1)[0]
    assert "```\ndeploy/run python examples/demo.py\n```" in commands


def _vertex(parallelism: int, explanation: str, chain: str = ""):
    return types.SimpleNamespace(parallelism=parallelism, explanation=explanation, chain=chain)


def test_each_task_decision_is_printed_once_one_reason_a_line():
    result = types.SimpleNamespace(
        job_id="0123",
        status=types.SimpleNamespace(value="FINISHED"),
        vertices={
            "scan": _vertex(4, "inferred 4; FileSource(x; y) -> 4", chain="scan -> agg"),
            "agg": _vertex(4, "inferred 4; FileSource(x; y) -> 4", chain="scan -> agg"),
            "sort": _vertex(1, "13 KiB / 4 MiB per task = 0.00 -> 1"),
        },
    )
    facts = types.SimpleNamespace(name="sql", joins=(), sorts=())
    assert demo.decision_lines(result, facts) == [
        "decisions of sql (0123), FINISHED:",
        "  scan -> agg: parallelism 4",
        "      inferred 4",
        "      FileSource(x; y) -> 4",
        "  sort: parallelism 1",
        "      13 KiB / 4 MiB per task = 0.00 -> 1",
    ]
