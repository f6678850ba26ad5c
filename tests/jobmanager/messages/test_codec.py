import pytest

from jobmanager.core import commands as cmd
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode, encode
from jobmanager.messages.jobstatus import JobStatus
from shuffle.ids import PartitionId

MESSAGES = [
    ev.JobStarted(),
    ev.TaskManagerRegistered("tm-1", 4),
    ev.TaskManagerLost("tm-1", "actor died", 123),
    ev.TaskFinished("map", 3, 1, (ev.ProducedPartition.of("map->agg", [1, 2, 3]),)),
    ev.TaskFailed("map", 3, 1, "Traceback ...", 99, PartitionId("src->map", 7)),
    ev.TimerFired(5),
    cmd.DeployTask("map", 3, 1, "tm-1", 0),
    cmd.ReleasePartitions("tm-1", (PartitionId("a->b", 0), PartitionId("a->b", 1)), (0, 2)),
    cmd.JobTerminated("FAILED", "boom"),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_messages_round_trip_through_msgpack(message):
    assert decode(encode(message)) == message


def test_produced_bytes_are_int64_counts():
    produced = ev.ProducedPartition.of("r", [5, 0, 2**40])
    assert list(produced.counts()) == [5, 0, 2**40] and produced.total == 2**40 + 5


def test_unregistered_types_are_refused():
    class Secret:
        pass

    with pytest.raises(TypeError, match="not a registered message type"):
        encode(Secret())


def test_a_job_status_reads_back_as_the_member_not_its_name():
    for message in (ev.JobEnded("FAILED", "boom"), cmd.JobTerminated("CANCELED", "")):
        assert type(decode(encode(message)).status) is JobStatus
    assert decode(encode(ev.JobEnded(JobStatus.FAILED, "boom"))).status is JobStatus.FAILED
