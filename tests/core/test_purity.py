"""The scheduling core never touches the outside world: no Ray, Spark, clocks, files or
network. Only the shells do."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "jobmanager"
PURE = [
    ROOT / "model" / "jobgraph.py",
    ROOT / "errors.py",
    ROOT / "model" / "config.py",
    ROOT / "messages" / "codec.py",
    ROOT / "messages" / "events.py",
    ROOT / "core" / "commands.py",
    ROOT / "core" / "state.py",
    ROOT / "model" / "inference.py",
    *sorted((ROOT / "core" / "executiongraph").rglob("*.py")),
    *sorted((ROOT / "core" / "scheduler").rglob("*.py")),
]
FORBIDDEN = {"ray", "pyspark", "time", "os", "socket", "subprocess", "threading", "asyncio"}


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(ROOT.parent)))
def test_pure_core_module_imports_nothing_effectful(path):
    assert not imported_modules(path) & FORBIDDEN


def test_the_check_would_catch_an_effectful_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os.path\nfrom time import monotonic\n")
    assert imported_modules(bad) & FORBIDDEN == {"os", "time"}
