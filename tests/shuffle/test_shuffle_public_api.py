"""The package's public names, and the import rules of DESIGN.md for ``shuffle`` and ``blob``."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import shuffle

REPO = Path(__file__).resolve().parents[2]
# jobmanager.errors: the one tree of errors, a leaf that imports nothing
ALLOWED_OWN_IMPORTS = {
    "shuffle": {"shuffle", "blob.codec", "jobmanager.errors"},
    "blob": {"blob", "jobmanager.errors"},
}
OWN_PACKAGES = {"shuffle", "blob", "jobmanager", "taskmanager", "deploy", "tests", "benchmarks"}


def test_every_public_name_resolves():
    for name in shuffle.__all__:
        assert getattr(shuffle, name) is not None, name
    assert {"IndexRange", "PartitionId", "even_ranges"} <= set(shuffle.__all__)


@pytest.mark.parametrize("package", sorted(ALLOWED_OWN_IMPORTS))
def test_every_module_declares_all(package):
    for path in sorted((REPO / package).glob("*.py")):
        module = importlib.import_module(
            f"{package}.{path.stem}" if path.stem != "__init__" else package
        )
        assert hasattr(module, "__all__"), path
        for name in module.__all__:
            assert hasattr(module, name), f"{path.name} exports a missing {name}"


@pytest.mark.parametrize("package", sorted(ALLOWED_OWN_IMPORTS))
def test_imports_point_one_way(package):
    allowed = ALLOWED_OWN_IMPORTS[package]
    for path in sorted((REPO / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                if name.split(".")[0] in OWN_PACKAGES:
                    assert any(name == a or name.startswith(a + ".") for a in allowed), (
                        f"{path.relative_to(REPO)} imports {name}"
                    )


@pytest.mark.parametrize("package", sorted(ALLOWED_OWN_IMPORTS))
def test_modules_stay_small(package):
    for path in (REPO / package).glob("*.py"):
        assert len(path.read_text().splitlines()) <= 300, path
