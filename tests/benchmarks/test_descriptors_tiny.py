import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "descriptors.py"


def test_descriptor_benchmark_runs_at_a_tiny_size():
    out = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--parallelism",
            "200",
            "--task-managers",
            "4",
            "--repeats",
            "1",
            "--sample",
            "5",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["ratio"] > 0 and figures["parallelism"] == 200
    assert 0 < figures["compressed_fraction"] < 1
