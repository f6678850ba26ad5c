"""A TaskManager prepared ahead of any job (``start_spark``) starts its JVM on a thread of its
own, and its first task may arrive at once: that task's code, unpickled, imports PySpark too.
Two threads importing ``pyspark.sql`` at once can see a half-initialised module (the demo once
failed so, from a clean clone), so PySpark is whole before the TaskManager is ready. In a fresh
interpreter, where nothing has imported PySpark yet; no Ray (the node id is given)."""

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
assert "pyspark.sql.functions" not in sys.modules
config = Configuration().with_overrides({TASKMANAGER_NODE_ID.key: "node-a"})
TaskManagerActor("tm-probe", 1, config.to_bytes(), tempfile.mkdtemp(), start_spark=True)
functions = sys.modules.get("pyspark.sql.functions")
print(json.dumps({"imported": functions is not None, "whole": hasattr(functions, "col")}))
"""


def test_a_prepared_task_manager_has_pyspark_whole_before_its_first_task():
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"imported": True, "whole": True}
