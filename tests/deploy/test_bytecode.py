"""``deploy/run`` byte-compiles Tidal's sources, so that its Ray workers, each a new Python
process importing Tidal, load them compiled, also where ``PYTHONDONTWRITEBYTECODE`` keeps
every process from caching what it compiles (the machines Tidal is built on set it)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("jobmanager", "taskmanager", "shuffle", "blob")


def _stale(source: Path) -> bool:
    """Whether Python would compile ``source`` again: no bytecode beside it, or bytecode of
    another version of it (the header's source mtime and size, as the import system checks)."""
    cached = Path(importlib.util.cache_from_source(str(source)))
    if not cached.is_file():
        return True
    header, stat = cached.read_bytes()[:16], source.stat()
    return (
        int.from_bytes(header[8:12], "little") != int(stat.st_mtime) & 0xFFFFFFFF
        or int.from_bytes(header[12:16], "little") != stat.st_size & 0xFFFFFFFF
    )


def test_deploy_run_leaves_every_source_of_tidals_runtime_compiled():
    done = subprocess.run(
        [str(REPO / "deploy" / "run"), "true"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env={**os.environ, "TIDAL_VENV": sys.prefix, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    sources = [path for package in PACKAGES for path in (REPO / package).rglob("*.py")]
    assert len(sources) > 100
    assert [str(path.relative_to(REPO)) for path in sources if _stale(path)] == []
