import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "replay.py"


def test_replay_benchmark_rebuilds_the_live_state_at_a_tiny_size():
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--parallelism", "100", "--repeats", "1"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["same_state"] is True
    assert figures["tasks"] == 200 and figures["events"] > 2 * figures["tasks"]
    assert figures["ratio"] > 0 and figures["replay_seconds"] > 0
