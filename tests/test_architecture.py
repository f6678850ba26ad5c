"""The folders are the architecture, and the imports keep them honest.

Inside ``jobmanager/`` imports point one way: messages <- job model <- core <- runtime <- client,
with the simulation beside the runtime driving the same core. ``taskmanager/`` loads only the
messages and the job model of the JobManager. The core touches nothing outside itself: no Ray,
no Spark, no clock, no file system, neither itself nor through any module it loads (a package's
``__init__`` included, since it runs first). Every import counts, including those inside
functions; imports under ``if TYPE_CHECKING:`` do not run and are left out.
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("jobmanager", "taskmanager", "shuffle", "blob")

# part -> the parts it may import (besides itself)
ALLOWED = {
    "errors": set(),
    "logs": set(),
    "blob": {"errors"},
    "shuffle": {"blob", "errors"},
    "messages": {"errors", "shuffle", "blob"},
    "model": {"messages", "errors", "shuffle"},
    "core": {"model", "messages", "errors", "shuffle", "blob"},
    "simulation": {"core", "model", "messages", "errors", "shuffle"},
    "runtime": {"core", "model", "messages", "errors", "logs", "shuffle", "blob", "taskmanager"},
    "client": {
        "runtime",
        "simulation",
        "core",
        "model",
        "messages",
        "errors",
        "logs",
        "planner",
        "shuffle",
    },  # explain reads sort bounds back as values (shuffle.keyorder)
    "taskmanager": {"messages", "model", "errors", "logs", "shuffle", "blob"},
    "planner": {"model", "errors"},  # the SQL planner builds the job model, nothing else
    "api": {"client", "model"},
}

# what the pure parts may never import: Ray, Spark, clocks, the file system, the network, threads
EFFECTFUL = {
    "ray",
    "pyspark",
    "time",
    "datetime",
    "os",
    "pathlib",
    "shutil",
    "glob",
    "io",
    "tempfile",
    "fsspec",
    "socket",
    "subprocess",
    "threading",
    "asyncio",
    "concurrent",
    "cloudpickle",
}
PURE_PARTS = {"core", "messages"}
PURE_MODULES = {"jobmanager.model.jobgraph", "jobmanager.model.config", "jobmanager.errors"}


def part_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] in ("taskmanager", "shuffle", "blob"):
        return parts[0]
    if parts[0] != "jobmanager":
        return None
    if len(parts) == 1 or parts[1] == "__main__":
        return "api"
    return parts[1]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports when it runs (``from a import b`` counts as ``a`` and,
    when ``b`` is a module, ``a.b``)."""
    tree = ast.parse(path.read_text())
    not_run = {
        id(node)
        for branch in ast.walk(tree)
        if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
        for node in ast.walk(branch)
    }
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in not_run:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def import_graph(root: Path) -> dict[str, set[str]]:
    files = {module_name(p, root): p for pkg in PACKAGES for p in (root / pkg).rglob("*.py")}
    return {name: imports_of(path) & files.keys() for name, path in files.items()}


def wrong_directions(graph: dict[str, set[str]]) -> list[str]:
    wrong = []
    for module, imported in sorted(graph.items()):
        source = part_of(module)
        for target in sorted(imported):
            goal = part_of(target)
            if goal != source and goal not in ALLOWED[source]:
                wrong.append(f"{module} ({source}) imports {target} ({goal})")
    return wrong


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _runs(module: str, known: set[str] | dict[str, Path]) -> list[str]:
    """The modules of ours that importing ``module`` runs: its packages' ``__init__``s, then it."""
    parts = module.split(".")
    return [
        name for name in (".".join(parts[:i]) for i in range(1, len(parts) + 1)) if name in known
    ]


def impure_imports(graph_root: Path) -> list[str]:
    """Each effectful library a pure module loads, with a shortest chain of our modules that
    loads it: ``a -> b -> c imports fsspec``. Checking direct imports only let the core load
    fsspec and cloudpickle through the job model."""
    files = {
        module_name(p, graph_root): p for pkg in PACKAGES for p in (graph_root / pkg).rglob("*.py")
    }
    imported = {name: imports_of(path) for name, path in files.items()}
    problems = []
    for module in sorted(files):
        if part_of(module) not in PURE_PARTS and module not in PURE_MODULES:
            continue
        came_from: dict[str, str | None] = {module: None}
        came_from.update({package: module for package in _runs(module, files) if package != module})
        queue, loaded_by = deque(came_from), {}
        while queue:
            current = queue.popleft()
            for library in sorted({name.split(".")[0] for name in imported[current]} & EFFECTFUL):
                loaded_by.setdefault(library, current)
            for step in (s for target in sorted(imported[current]) for s in _runs(target, files)):
                if step not in came_from:
                    came_from[step] = current
                    queue.append(step)
        for library, where in sorted(loaded_by.items()):
            chain = [where]
            while came_from[chain[-1]] is not None:
                chain.append(came_from[chain[-1]])
            problems.append(f"{' -> '.join(reversed(chain))} imports {library}")
    return problems


GRAPH = import_graph(ROOT)


def test_every_module_belongs_to_a_known_part():
    assert {part_of(m) for m in GRAPH} <= ALLOWED.keys()


def test_imports_point_one_way():
    assert wrong_directions(GRAPH) == []


def test_no_module_imports_itself_through_others():
    assert cycles(GRAPH) == []


def test_the_core_and_the_messages_touch_nothing_outside():
    assert impure_imports(ROOT) == []


def documented_parts(markdown: str) -> dict[str, set[str]]:
    """The table of docs/architecture.md's "The parts and what each may import": part -> the
    parts it may import ("nothing": none)."""
    section = markdown.split("## The parts and what each may import", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in rows[0]]
    part, may = header.index("part"), header.index("may import")
    return {
        row[part].strip(): {name.strip() for name in row[may].split(",")} - {"nothing"}
        for row in rows[2:]  # past the header and its --- line
    }


def test_the_architecture_page_draws_the_same_rules():
    assert documented_parts((ROOT / "docs" / "architecture.md").read_text()) == ALLOWED


def test_the_page_reader_reads_a_table():
    page = (
        "# x\n## The parts and what each may import\n\n| part | where | may import |\n"
        "| --- | --- | --- |\n| core | `jobmanager/core/` | model, errors |\n"
        "| errors | `errors.py` | nothing |\n\n## Next\n| not | a | part |\n"
    )
    assert documented_parts(page) == {"core": {"model", "errors"}, "errors": set()}


def test_the_taskmanager_loads_no_scheduling_code():
    loaded = {t for m, imported in GRAPH.items() if m.startswith("taskmanager") for t in imported}
    assert not {part_of(t) for t in loaded} & {"core", "runtime", "client", "simulation"}


# -- the checks catch what they should: a deliberately wrong tree -------------------------------


def _write_tree(root, files: dict[str, str]):
    """``files`` (a path below ``root`` to its text) written under ``root``; returns ``root``."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture
def wrong_tree(tmp_path):
    files = {
        "jobmanager/__init__.py": "",
        "jobmanager/core/__init__.py": "",
        "jobmanager/core/state.py": "import time\nfrom jobmanager.runtime.actor import X\n",
        "jobmanager/model/__init__.py": "",
        "jobmanager/model/jobgraph.py": "from jobmanager.core.state import JobManagerState\n",
        "jobmanager/runtime/__init__.py": "",
        "jobmanager/runtime/actor.py": "def f():\n    from jobmanager.runtime import executor\n",
        "jobmanager/runtime/executor.py": "from jobmanager.runtime.actor import f\n",
        "jobmanager/messages/__init__.py": "",
        "jobmanager/messages/events.py": "from pathlib import Path\n",
        "taskmanager/__init__.py": "",
        "taskmanager/actor.py": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from jobmanager.runtime.actor import f\n"
            "from jobmanager.core.state import JobManagerState\n"
        ),
        "shuffle/__init__.py": "",
        "blob/__init__.py": "",
    }
    return _write_tree(tmp_path, files)


def test_a_wrong_direction_is_caught(wrong_tree):
    assert wrong_directions(import_graph(wrong_tree)) == [
        "jobmanager.core.state (core) imports jobmanager.runtime.actor (runtime)",
        "jobmanager.model.jobgraph (model) imports jobmanager.core.state (core)",
        "taskmanager.actor (taskmanager) imports jobmanager.core.state (core)",
    ]


def test_a_cycle_through_a_function_level_import_is_caught(wrong_tree):
    assert cycles(import_graph(wrong_tree)) == [
        ["jobmanager.runtime.actor", "jobmanager.runtime.executor"]
    ]


def test_a_clock_or_a_file_system_in_the_core_is_caught(wrong_tree):
    assert impure_imports(wrong_tree) == [
        "jobmanager.core.state imports time",
        "jobmanager.messages.events imports pathlib",
        "jobmanager.model.jobgraph -> jobmanager.core.state imports time",
    ]


@pytest.fixture
def transitive_tree(tmp_path):
    """A core that is clean itself and loads a file system through the job model, and a clock
    through a package's ``__init__``."""
    files = {
        "jobmanager/__init__.py": "",
        "jobmanager/core/__init__.py": "",
        "jobmanager/core/state.py": "from jobmanager.model.jobgraph import JobGraph\nimport shuffle.ids\n",
        "jobmanager/model/__init__.py": "",
        "jobmanager/model/jobgraph.py": "def f():\n    from jobmanager.model import storage\n",
        "jobmanager/model/storage.py": "import fsspec\n",
        "shuffle/__init__.py": "import time\n",
        "shuffle/ids.py": "",
        "taskmanager/__init__.py": "",
        "blob/__init__.py": "",
    }
    return _write_tree(tmp_path, files)


def test_an_effect_the_core_loads_through_other_modules_is_caught(transitive_tree):
    assert impure_imports(transitive_tree) == [
        "jobmanager.core.state -> jobmanager.model.jobgraph -> jobmanager.model.storage imports fsspec",
        "jobmanager.core.state -> shuffle imports time",
        "jobmanager.model.jobgraph -> jobmanager.model.storage imports fsspec",
    ]
