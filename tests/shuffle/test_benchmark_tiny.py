"""The shuffle benchmark at a tiny size, so the script never rots (its full size is 1 GiB)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_benchmark_runs_and_ends_with_its_figures_as_json(tmp_path):
    completed = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "shuffle.py"),
            "--bytes",
            "3000000",
            "--subpartitions",
            "10",
            "--repeats",
            "1",
            "--dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    figures = json.loads(completed.stdout.strip().splitlines()[-1])
    assert figures["ratio"] > 0
    assert figures["subpartitions"] == 10 and figures["bytes"] > 2_000_000
    for name in ("tidal", "baseline"):
        assert figures[f"{name}_seconds"] > 0 and figures[f"{name}_throughput_mib_s"] > 0
    assert list(tmp_path.iterdir()) == []  # it cleans up after itself
