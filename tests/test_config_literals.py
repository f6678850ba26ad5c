"""One home per option: code names an option by its constant (``config[OPTION.key]``), never by
its key's text, so each key is written once, where the option is declared
(``jobmanager/model/config/``), and a renamed or retyped key cannot leave a copy behind.

Any string constant equal to a declared key (or to a Flink key an option also takes) in the
packages, ``deploy/``, ``examples/`` or ``benchmarks/`` fails, naming the file, the line and the
constant to write instead. A docstring is prose and may mention a key; it is not checked.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import jobmanager.model.config as config_package
from jobmanager.model.config import BROADCAST_THRESHOLD, FLINK_KEYS, OPTIONS, Option

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("jobmanager", "taskmanager", "shuffle", "blob", "deploy", "examples", "benchmarks")
HOME = ROOT / "jobmanager" / "model" / "config"


def declared_options() -> dict[str, str]:
    """Each option's key -> the name of the constant declaring it, from every module of the
    config package."""
    found = {}
    for module in pkgutil.iter_modules(config_package.__path__):
        loaded = importlib.import_module(f"{config_package.__name__}.{module.name}")
        for name, value in vars(loaded).items():
            if isinstance(value, Option) and name.isupper():
                found[value.key] = name
    return found


def constant_for_key() -> dict[str, str]:
    """Every key a user may write -> what code writes instead (a Flink key: its option's)."""
    constants = {key: f"{name}.key" for key, name in declared_options().items()}
    constants.update({flink: constants[ours] for flink, ours in FLINK_KEYS.items()})
    return constants


def _docstrings(tree: ast.Module) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def key_literals(root: Path, folders, home: Path, constants: dict[str, str]) -> list[str]:
    """``path:line: 'key' -> use CONSTANT`` for each string constant equal to a key in the
    Python files under ``folders`` of ``root``, outside ``home``."""
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            if path.is_relative_to(home):
                continue
            tree = ast.parse(path.read_text(), filename=str(path))
            prose = _docstrings(tree)
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and node.value in constants
                    and id(node) not in prose
                ):
                    where = f"{path.relative_to(root)}:{node.lineno}"
                    found.append(f"{where}: {node.value!r} -> use {constants[node.value]}")
    return found


def test_every_option_declared_is_registered_under_its_constant():
    declared = declared_options()
    assert declared.keys() == OPTIONS.keys()
    assert len(set(declared.values())) == len(declared)  # one constant per option
    exported = {key for key, name in declared.items() if getattr(config_package, name, None)}
    assert exported == declared.keys()  # importable as jobmanager.model.config.NAME


def test_no_code_writes_an_option_key_as_text():
    literals = key_literals(ROOT, SCANNED, HOME, constant_for_key())
    assert literals == [], "write the option's constant, not its key:\n" + "\n".join(literals)


# -- the check catches what it should: a planted tree --------------------------------------------


def _plant(root: Path, text: str) -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "planted.py").write_text(text)
    return root


def test_a_key_written_as_text_is_caught_with_the_constant_to_use(tmp_path):
    key = BROADCAST_THRESHOLD.key
    root = _plant(tmp_path, f'def threshold(config):\n    return config["{key}"]\n')
    assert key_literals(root, ["pkg"], root / "home", constant_for_key()) == [
        f"pkg/planted.py:2: {key!r} -> use BROADCAST_THRESHOLD.key"
    ]


def test_a_flink_key_written_as_text_names_its_option_constant(tmp_path):
    flink = next(iter(FLINK_KEYS))
    root = _plant(tmp_path, f'SETTINGS = {{"{flink}": "auto"}}\n')
    assert key_literals(root, ["pkg"], root / "home", constant_for_key()) == [
        f"pkg/planted.py:1: {flink!r} -> use SKEWED_JOIN_STRATEGY.key"
    ]


def test_the_constant_and_a_docstring_naming_the_key_pass(tmp_path):
    key = BROADCAST_THRESHOLD.key
    text = (
        f'"""Reads ``{key}``."""\n'
        "from jobmanager.model.config import BROADCAST_THRESHOLD\n\n\n"
        f'def threshold(config):\n    """{key}"""\n    return config[BROADCAST_THRESHOLD.key]\n'
    )
    root = _plant(tmp_path, text)
    assert key_literals(root, ["pkg"], root / "home", constant_for_key()) == []


def test_the_config_home_itself_is_not_checked(tmp_path):
    root = _plant(tmp_path, f'KEY = "{BROADCAST_THRESHOLD.key}"\n')
    assert key_literals(root, ["pkg"], root / "pkg", constant_for_key()) == []
