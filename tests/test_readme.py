"""The README's claims, checked against the code, so the user's guide cannot drift from it.

What is checked here: every option key it names exists, and every default it states in
parentheses is the option's default; every ``tidal`` subcommand and flag of its CLI block
exists; its Python examples compile; every command of its benchmark table has a tiny run in the
suite (the tests named below; this file only checks that they exist and run that script).
The errors claim is ``tests/test_errors.py``'s, the architecture's ``tests/test_architecture.py``'s,
and the 22 TPC-H answers are checked against DuckDB by ``tests/sql/test_tpch_sql.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import typer

from jobmanager.client.cli import app
from jobmanager.model.config import FLINK_KEYS, OPTIONS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()

# each benchmark command of the README's table -> the test file that runs it at a tiny size, and
# what in that file says it runs that command
TINY_RUNS = {
    "benchmarks/tpch.py": (
        "tests/examples/test_benchmarks.py",
        'load("tpch").main(["--scale", "0.01"',
    ),
    "tidal stress": (
        "tests/jobmanager/simulation/test_stress.py",
        '"stress", "--parallelism", "100"',
    ),
    "benchmarks/noop_scale.py": (
        "tests/examples/test_benchmarks.py",
        'load("noop_scale").main(["--n", "10"',
    ),
    "benchmarks/shuffle.py": (
        "tests/shuffle/test_benchmark_tiny.py",
        '"benchmarks" / "shuffle.py"',
    ),
    "benchmarks/recovery.py": (
        "tests/examples/test_recovery_benchmark.py",
        'load("recovery").main(["--scale", "0.002"',
    ),
    "benchmarks/speculation.py": (
        "tests/examples/test_benchmarks.py",
        'load("speculation").main(["--task-seconds", "0.05"',
    ),
    "benchmarks/replay.py": ("tests/benchmarks/test_replay_tiny.py", '"--parallelism", "100"'),
}
_FIRST_WORDS = {key.split(".")[0] for key in OPTIONS}
_KEY = re.compile(r"`([a-z][a-zA-Z0-9-]*(?:\.[a-zA-Z0-9-]+)+(?:\.\*|\.\.\.)?)`")
_DEFAULT = re.compile(r"`([a-z][a-zA-Z0-9.-]+)`\s+\(([\d,.]+(?: ?[a-zA-Z]+)?)\)")


def section(title: str) -> str:
    return README.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def blocks(language: str = "") -> list[str]:
    """The README's fenced code blocks in ``language`` ("" for unlabelled ones)."""
    found, current, fence = [], None, None
    for line in README.splitlines():
        if current is None and line.startswith("```"):
            current, fence = [], line[3:].strip()
        elif current is not None and line.startswith("```"):
            if fence == language:
                found.append("\n".join(current) + "\n")
            current = None
        elif current is not None:
            current.append(line)
    return found


def test_every_option_the_readme_names_exists():
    named = {
        m
        for m in _KEY.findall(README)
        if m.split(".")[0] in _FIRST_WORDS and not any(part[:1].isupper() for part in m.split("."))
    }  # a class, not a key
    unknown = []
    known = {*OPTIONS, *FLINK_KEYS}  # Flink's key for an option Tidal names otherwise, too
    for key in sorted(named):
        prefix = key.removesuffix(".*").removesuffix("...")
        if key != prefix and any(k.startswith(prefix + ".") for k in known):
            continue
        if key not in known:
            unknown.append(key)
    assert unknown == []


def test_every_default_the_readme_states_is_the_options_default():
    stated = [(k, v) for k, v in _DEFAULT.findall(README) if k in OPTIONS]
    assert len(stated) >= 6  # the check reads what it should
    wrong = [
        (k, v, OPTIONS[k].default)
        for k, v in stated
        if OPTIONS[k].parse(v.replace(",", "")) != OPTIONS[k].default
    ]
    assert wrong == []


def test_every_command_and_flag_of_the_cli_block_exists():
    commands = typer.main.get_command(app).commands
    block = next(b for b in blocks() if b.startswith("tidal run"))
    uses = re.split(r"\s\|\s(?=tidal )|\n(?=tidal )", block.replace("\n   ", " "))
    missing = []
    for use in uses:
        words = use.split()
        command = commands.get(words[1])
        if command is None:
            missing.append(words[1])
            continue
        flags = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
        missing += [
            f"{words[1]} {w}"
            for w in re.findall(r"(?<![\w-])--?[a-zA-Z][\w-]*", use)
            if w not in flags
        ]
    assert missing == []


def test_the_python_examples_compile():
    for code in blocks("python"):
        compile(code, "README.md", "exec")


def test_every_benchmark_of_the_table_runs_at_a_tiny_size_in_the_suite():
    table = section("Benchmarks")
    commands = {
        m for m in re.findall(r"^\| `(?:deploy/run )?(?:python )?([^`]+?)`", table, re.MULTILINE)
    }
    named = {c.split(" --")[0] for c in commands}
    assert named == TINY_RUNS.keys()
    for test, marker in TINY_RUNS.values():
        # compared without whitespace, so the formatter's line breaks do not matter
        assert "".join(marker.split()) in "".join((ROOT / test).read_text().split()), test
