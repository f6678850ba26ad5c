"""A cluster started with ``ray start --head`` and Ray's token authentication, joined three ways:
by ``Client(address=...)`` with the token where Ray looks for it, by a job under ``ray job
submit``, and without a token. Run by ``test_token_auth.py`` in a PID namespace of its own (the
cluster ends with it); prints one JSON object of what happened.

    python -m tests.jobmanager.client.token_cluster WORK_DIR
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from ray._private.authentication.authentication_token_generator import (
    generate_new_authentication_token,
)

JOB = """
import sys
from jobmanager import Client
from tests.jobmanager.runtime.jobs import FAST, sum_job

handle = Client(address=sys.argv[2] if len(sys.argv) > 2 else None).submit(sum_job(sys.argv[1], sources=2), config=FAST)
print("STATUS", handle.wait(timeout=120).status)
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("", 0))
        return probe.getsockname()[1]


def main(work: str) -> None:
    root = Path(work)
    token = root / "token"
    token.write_text(generate_new_authentication_token())
    job = root / "job.py"
    job.write_text(JOB)
    repo = str(Path(__file__).resolve().parents[3])
    base = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    base.update(PYTHONPATH=repo, RAY_ADDRESS="")
    with_token = {**base, "RAY_AUTH_TOKEN_PATH": str(token)}
    ray = os.path.join(os.path.dirname(sys.executable), "ray")
    port, dashboard = free_port(), free_port()
    # the agent's ports too: the tests' own cluster holds Ray's defaults, and a job agent that
    # cannot listen leaves `ray job submit` with "No available agent"
    subprocess.run(
        [
            ray,
            "start",
            "--head",
            f"--port={port}",
            "--num-cpus=2",
            "--include-dashboard=true",
            f"--dashboard-port={dashboard}",
            f"--dashboard-agent-listen-port={free_port()}",
            f"--dashboard-agent-grpc-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}",
            f"--metrics-export-port={free_port()}",
            "--disable-usage-stats",
        ],
        check=True,
        capture_output=True,
        env={**with_token, "RAY_AUTH_MODE": "token"},
    )
    address = f"127.0.0.1:{port}"
    report = {}

    joined = subprocess.run(
        [sys.executable, str(job), str(root / "a"), address],
        env=with_token,
        capture_output=True,
        text=True,
        timeout=180,
    )
    report["client"] = {"out": joined.stdout, "err": joined.stderr[-2000:]}

    deadline = time.monotonic() + 120
    while True:  # the dashboard's job agent starts a while after `ray start` returns
        submitted = subprocess.run(
            [
                ray,
                "job",
                "submit",
                "--address",
                f"http://127.0.0.1:{dashboard}",
                "--",
                sys.executable,
                str(job),
                str(root / "b"),
            ],
            env={**with_token, "RAY_AUTH_MODE": "token"},
            capture_output=True,
            text=True,
            timeout=240,
        )
        if "No available agent" not in submitted.stderr + submitted.stdout:
            break
        if time.monotonic() > deadline:
            break
        time.sleep(1)
    report["ray_job_submit"] = {
        "out": submitted.stdout[-3000:],
        "err": submitted.stderr[-2000:],
        "code": submitted.returncode,
    }

    no_token = {**base, "HOME": str(root)}  # no ~/.ray/auth_token there
    refused = subprocess.run(
        [sys.executable, "-m", "jobmanager", "list", "--address", address],
        env=no_token,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report["without_token"] = {"err": refused.stderr, "code": refused.returncode}
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
