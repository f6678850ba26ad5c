"""A Spark JVM launched by one process and adopted by another (``taskmanager.jvm_handover``):
the adopter's session runs on it, the launcher lets go once it is adopted, and from then the JVM
lives exactly as long as the adopter, a kill by pid included. A JVM nobody adopts, or that a
TaskManager of another shape declines, ends when the launcher lets go of it. Real JVMs, real
processes, no Ray."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from jobmanager.messages.codec import encode
from jobmanager.model.config import Configuration
from taskmanager.jvm_handover import launch
from taskmanager.spark import SparkSessionProvider

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]
MEMORY = 512 << 20

ADOPTER = """
import json, sys
from jobmanager.messages.codec import decode
from jobmanager.model.config import Configuration
from taskmanager.spark import SparkSessionProvider
config = Configuration().with_overrides({"taskmanager.memory.spark-driver": "512m"})
spark = SparkSessionProvider(1, sys.argv[2], config, jvm=decode(bytes.fromhex(sys.argv[1])))
rows = spark.session().sql("SELECT 6 * 7 AS answer").collect()
print(json.dumps({"answer": rows[0].answer, "adopted": spark.adopted_pid}), flush=True)
sys.stdin.read()  # lives until the test kills it
"""


def hand_over_in_background(launched, timeout_s: float, given: bool = True) -> dict:
    """``hand_over`` blocks until the JVM exits: run it on a thread, its answer in the dict."""
    outcome: dict = {}
    thread = threading.Thread(
        target=lambda: outcome.update(adopted=launched.hand_over(timeout_s, given)), daemon=True)
    thread.start()
    outcome["thread"] = thread
    return outcome


def ended(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def test_an_adopted_jvm_runs_the_adopters_queries_and_ends_when_the_adopter_is_killed(tmp_path):
    launched = launch(1, MEMORY)
    adopter = subprocess.Popen(
        [sys.executable, "-c", ADOPTER, encode(launched.ticket).hex(), str(tmp_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO)  # fmt: skip
    try:
        outcome = hand_over_in_background(launched, timeout_s=120)
        said = next(json.loads(line) for line in adopter.stdout if line.startswith('{"answer"'))
        assert said == {"answer": 42, "adopted": launched.process.pid}
        deadline = time.monotonic() + 30
        while launched.holding and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not launched.holding  # the launcher let go: the adopter alone holds it
        assert launched.process.poll() is None  # and the JVM lives on, the adopter's now
        os.kill(adopter.pid, signal.SIGKILL)
        outcome["thread"].join(60)
        assert outcome == {"adopted": True, "thread": outcome["thread"]}
        assert launched.process.poll() is not None
        assert not Path(launched.ticket.folder).exists()
    finally:
        adopter.kill()
        adopter.wait()
        launched.process.kill()


def test_a_jvm_nobody_adopts_ends_when_its_launcher_lets_go():
    launched = launch(1, MEMORY)
    started = time.monotonic()
    assert launched.hand_over(timeout_s=1.0) is False
    assert ended(launched.process.pid) and launched.process.returncode is not None
    assert time.monotonic() - started < 60
    assert not Path(launched.ticket.folder).exists()


def test_a_task_manager_of_another_shape_declines_the_jvm_and_starts_its_own(tmp_path):
    launched = launch(1, MEMORY)
    outcome = hand_over_in_background(launched, timeout_s=120)
    config = Configuration().with_overrides({"taskmanager.memory.spark-driver": "512m"})
    two_slots = SparkSessionProvider(2, tmp_path, config, jvm=launched.ticket)
    assert two_slots._adopt() is None  # not its shape: declined, left to end
    outcome["thread"].join(60)
    assert outcome["adopted"] is False and launched.process.returncode is not None
