"""A job's details are one message: they round-trip through msgpack with every state a user can
see as a ``JobStatus`` member, and no producer of a status writes a state as a bare string."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from jobmanager.messages.codec import encode
from jobmanager.messages.jobstatus import JobStatus
from jobmanager.runtime.details import (
    JobSummary,
    ProcessFigures,
    details_of_v0,
    read_details,
)
from tests.jobmanager.details import job_details, vertex_details

ROOT = Path(__file__).resolve().parents[3]
STATES = {status.value for status in JobStatus}
# who makes a status or reads one back (the core's own state, and the events of its log, keep
# theirs as ``JobStatus`` values)
PRODUCERS = [
    "jobmanager/client",
    "jobmanager/runtime/actor.py",
    "jobmanager/runtime/mainloop.py",
    "jobmanager/runtime/status.py",
    "jobmanager/runtime/details.py",
    "jobmanager/runtime/jobrecords.py",
    "jobmanager/runtime/jobstore.py",
    "jobmanager/runtime/archive.py",
    "jobmanager/runtime/resourcemanager.py",
]


@pytest.mark.parametrize("status", list(JobStatus))
def test_details_round_trip_through_msgpack_with_the_status_a_member(status):
    details = job_details(
        "job-1",
        status,
        name="sums",
        cause="why",
        ended_at=12.5,
        task_managers=("tm-0",),
        vertices=(vertex_details("read", 4, finished=3, phases_ms={"read": 7}),),
        pid=42,
        jobmanager=ProcessFigures(3, 1.5, 2.5, 1 << 20),
    )
    back = read_details(details.encode())
    assert back == details and back.status is status
    assert back.summary() == JobSummary("job-1", "sums", status, 0.0, 12.5, 1)


def test_a_state_outside_the_enum_is_refused_on_reading():
    with pytest.raises(ValueError, match="RECOVERING"):
        job_details(status="RECOVERING")


def test_something_else_than_details_is_refused_by_its_type():
    with pytest.raises(TypeError, match="expected a job's details"):
        read_details(encode(("a", 1)))


def test_no_status_producer_spells_a_job_state_as_a_string():
    """Every state goes through ``JobStatus``: a string literal naming one (``"FINISHING"``,
    ``"STANDBY"``) outside the enum's module is a state the enum could miss."""
    found = []
    for part in PRODUCERS:
        where = ROOT / part
        for path in sorted(where.rglob("*.py")) if where.is_dir() else [where]:
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Constant) and node.value in STATES:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert found == []


def test_the_final_status_an_older_tidal_stored_reads_as_details():
    """The golden log's ``status.json`` (Tidal before ``JobDetails``): an archive of it stays
    in ``tidal history``, its status a member."""
    golden = json.loads((ROOT / "tests/jobmanager/golden/logs/v0/status.json").read_text())
    details = details_of_v0(golden)
    assert details.status is JobStatus(golden["status"]) and details.recoveries == 1
    assert [v.tasks for v in details.vertices] == [v["tasks"] for v in golden["vertices"]]
