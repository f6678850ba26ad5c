"""The tree is formatted by ruff format, configured in pyproject.toml, so nobody hand-aligns
code and a diff shows only what changed. The check runs the formatter itself, and is shown
failing on a file it would reformat."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def check(*paths: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--config", ROOT / "pyproject.toml"]
        + [str(p) for p in paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


def test_the_tree_is_formatted():
    done = check(".")
    assert done.returncode == 0, (
        "these files are not formatted; run `deploy/run ruff format .`:\n" + done.stdout
    )


def test_the_check_fails_on_an_unformatted_file(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def f( a,b ):\n    return {'a':a,\n            'b' : b}\n")
    done = check(planted)
    assert done.returncode == 1
    assert "planted.py" in done.stdout


def test_the_check_passes_a_formatted_file(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('def f(a, b):\n    return {"a": a, "b": b}\n')
    assert check(planted).returncode == 0
