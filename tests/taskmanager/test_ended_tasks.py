"""EndedTasks: a TaskManager keeps each task's final report for a JobManager that takes the job
over, until nobody can need it."""

from jobmanager.messages import events as ev
from shuffle import PartitionId
from taskmanager.ended import EndedTasks


def finished(vertex, subtask, attempt, result="a->b"):
    return ev.TaskFinished(vertex, subtask, attempt, (ev.ProducedPartition(result, b""),))


def test_final_reports_are_kept_and_others_pass_by():
    ended = EndedTasks()
    ended.record(ev.TaskRunning("a", 0, 0))
    ended.record(finished("a", 0, 0))
    ended.record(ev.TaskFailed("a", 1, 0, "boom", 5))
    ended.record(ev.TaskCanceled("a", 2, 1))
    assert len(ended) == 3
    asked = ended.reports_of([("a", 0, 0), ("a", 1, 0), ("a", 2, 0), ("a", 3, 0)])
    assert asked == [finished("a", 0, 0), ev.TaskFailed("a", 1, 0, "boom", 5)]


def test_a_later_report_of_the_same_attempt_replaces_the_earlier():
    ended = EndedTasks()
    ended.record(ev.TaskFailed("a", 0, 0, "boom", 5))
    ended.record(ev.TaskCanceled("a", 0, 0))
    assert ended.reports_of([("a", 0, 0)]) == [ev.TaskCanceled("a", 0, 0)]


def test_a_finished_report_goes_when_its_partition_of_that_attempt_is_released():
    ended = EndedTasks()
    ended.record(finished("a", 0, 0))
    ended.record(finished("a", 0, 1))
    ended.released([PartitionId("a->b", 0)], [0])
    assert ended.reports_of([("a", 0, 0), ("a", 0, 1)]) == [finished("a", 0, 1)]
    ended.released([PartitionId("a->b", 0)], [1])
    assert len(ended) == 0
