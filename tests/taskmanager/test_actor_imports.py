"""A TaskManager's class is light to load: the ResourceManager and every JobManager load it (to
start TaskManagers and to hold their handles) but run no task, so the task runtime
(``taskmanager.runner``, and SQL's parser with it) loads in the TaskManager's constructor,
after its Spark JVM has started, not with the class. In a fresh interpreter; no Ray (the node
id is given) and no JVM (the TaskManager is not a prepared one)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys, tempfile
from jobmanager.model.config import TASKMANAGER_NODE_ID, Configuration
from taskmanager.actor import TaskManagerActor
runtime = ("taskmanager.runner", "sqlglot")
with_class = [name for name in runtime if name in sys.modules]
config = Configuration().with_overrides({TASKMANAGER_NODE_ID.key: "node-a"})
TaskManagerActor("tm-probe", 1, config.to_bytes(), tempfile.mkdtemp())
with_actor = [name for name in runtime if name in sys.modules]
print(json.dumps({"with_class": with_class, "with_actor": with_actor}))
"""


def test_the_task_runtime_loads_with_a_taskmanager_not_with_its_class():
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "with_class": [],
        "with_actor": ["taskmanager.runner", "sqlglot"],
    }
