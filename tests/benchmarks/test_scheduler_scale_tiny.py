import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "scheduler_scale.py"


def test_scheduler_scale_benchmark_runs_at_a_tiny_size():
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "50", "100"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["ratio"] > 0
    assert [row["parallelism"] for row in figures["sizes"]] == [50, 100]
