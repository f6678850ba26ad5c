"""No module is over the project's hard limit of 500 lines (the guide: small modules with one
job each, none over about 400 lines). A module that grows past it is split into cohesive parts,
not squeezed back under by hand, so the check names every offender and its size at once. It
counts the lines of each ``.py`` file in the code's folders, and is shown failing on a planted
module of 501 lines."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("jobmanager", "taskmanager", "shuffle", "blob", "deploy", "benchmarks", "examples")
LIMIT = 500


def oversized(root: Path, limit: int = LIMIT) -> list[tuple[str, int]]:
    """Each module of ``FOLDERS`` under ``root`` over ``limit`` lines, with its line count,
    the longest first."""
    found = [
        (path.relative_to(root).as_posix(), len(path.read_text().splitlines()))
        for folder in FOLDERS
        for path in (root / folder).rglob("*.py")
    ]
    return sorted(
        ((name, lines) for name, lines in found if lines > limit), key=lambda f: (-f[1], f[0])
    )


def check_module_sizes(root: Path) -> None:
    """Fail, naming every module over the limit and its size, if there is one."""
    found = oversized(root)
    if found:
        pytest.fail(
            f"modules over {LIMIT} lines; split them:\n"
            + "\n".join(f"  {name}: {lines} lines" for name, lines in found),
            pytrace=False,
        )


def test_no_module_is_over_the_limit():
    check_module_sizes(ROOT)


def test_the_check_fails_on_a_planted_module_of_501_lines_and_names_it(tmp_path):
    (tmp_path / "jobmanager" / "core").mkdir(parents=True)
    (tmp_path / "jobmanager" / "core" / "planted.py").write_text("x = 1\n" * 501)
    (tmp_path / "jobmanager" / "core" / "fits.py").write_text("x = 1\n" * 500)
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "long.py").write_text("x = 1\n" * 620)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "outside.py").write_text("x = 1\n" * 900)  # not a code folder
    with pytest.raises(pytest.fail.Exception) as failed:
        check_module_sizes(tmp_path)
    assert str(failed.value).splitlines() == [
        f"modules over {LIMIT} lines; split them:",
        "  benchmarks/long.py: 620 lines",
        "  jobmanager/core/planted.py: 501 lines",
    ]


def test_the_check_passes_a_tree_at_the_limit(tmp_path):
    (tmp_path / "shuffle").mkdir()
    (tmp_path / "shuffle" / "fits.py").write_text("x = 1\n" * 500)
    check_module_sizes(tmp_path)
