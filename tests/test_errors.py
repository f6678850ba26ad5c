"""One tree of errors: every exception class Tidal defines derives from ``TidalError``, and the
tree drawn in ``jobmanager/errors.py``'s docstring is exactly those classes, each under its
parent, so a user reading it knows all they can catch and the drawing cannot go stale."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

from jobmanager import errors
from jobmanager.errors import TidalError

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("jobmanager", "taskmanager", "shuffle", "blob")
_BRANCH = re.compile(r"^(?P<indent>[│ ]*)[├└]── (?P<name>\w+)")


def defined_exceptions(root: Path = ROOT) -> dict[str, type[BaseException]]:
    """Every exception class defined in Tidal's packages, by name (a module's ``__main__`` is
    a command, not a definition, and is left out)."""
    found: dict[str, type[BaseException]] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__main__":
                continue
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            module = importlib.import_module(name)
            for cls in vars(module).values():
                if (
                    inspect.isclass(cls)
                    and issubclass(cls, BaseException)
                    and cls.__module__ == name
                ):
                    assert cls.__name__ not in found, f"two exception classes named {cls.__name__}"
                    found[cls.__name__] = cls
    return found


def drawn_tree(docstring: str) -> dict[str, str | None]:
    """Each class in the drawing -> its parent in the drawing (the root -> None)."""
    parents: dict[str, str | None] = {}
    at_depth: list[str] = []
    for line in docstring.splitlines():
        if line.strip() == "TidalError":
            parents["TidalError"] = None
            at_depth = ["TidalError"]
            continue
        branch = _BRANCH.match(line[4:])  # the drawing is indented by four
        if branch is None:
            continue
        depth = len(branch["indent"]) // 4 + 1
        del at_depth[depth:]
        parents[branch["name"]] = at_depth[depth - 1]
        at_depth.append(branch["name"])
    return parents


def tidal_parent(cls: type[BaseException]) -> str | None:
    return next((b.__name__ for b in cls.__bases__ if issubclass(b, TidalError)), None)


def test_every_exception_tidal_defines_is_a_tidal_error():
    assert [
        name for name, cls in defined_exceptions().items() if not issubclass(cls, TidalError)
    ] == []


def test_the_drawn_tree_is_exactly_the_classes_under_their_parents():
    defined = {name: tidal_parent(cls) for name, cls in defined_exceptions().items()}
    assert drawn_tree(errors.__doc__) == defined


def test_the_tree_reader_sees_depth_and_wrapped_lines():
    drawing = """
    TidalError
    ├── A                 text
    │   │                 wrapped text
    │   └── B             text
    │       └── C         text
    └── D                 text
    """
    assert drawn_tree(drawing) == {
        "TidalError": None,
        "A": "TidalError",
        "B": "A",
        "C": "B",
        "D": "TidalError",
    }
