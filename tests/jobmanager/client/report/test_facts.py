"""The report's data, built from recorded event logs of small jobs, with exact values: the
graph and its parallelisms, the bytes per subpartition and the ranges the consumers got, the
timeline of attempts per slot with the failure and the restart, and the explanations."""

from jobmanager.client.report import explain_lines, facts_from_log
from jobmanager.client.report.facts import SqlPiece
from jobmanager.messages import events as ev
from jobmanager.model.chaining import chained_graph
from tests.jobmanager.client.report.recorded import (
    AGG_SQL,
    SKEWED_CONFIG,
    SRC_SQL,
    START_MS,
    SUMS_CONFIG,
    record,
    skewed_bytes,
    skewed_job,
    sql_job,
    sums_bytes,
    sums_job,
)


def sums_facts():
    graph = sums_job()
    submitted, records, _ = record(
        graph, SUMS_CONFIG, byte_model=sums_bytes, faults=[("agg", 1, 0)]
    )
    return facts_from_log(graph, submitted, records, "job-1"), records


def time_of(records, kind, **fields) -> int:
    return next(
        t
        for t, e in records
        if type(e) is kind and all(getattr(e, k) == v for k, v in fields.items())
    )


def test_the_graph_has_every_vertex_with_its_parallelism_and_where_it_came_from():
    facts, _ = sums_facts()
    assert [(v.name, v.parallelism, v.origin) for v in facts.vertices] == [
        ("src", 2, "user"),
        ("agg", 2, "decided"),
        ("sink", 2, "forward"),
    ]
    agg = facts.vertex("agg")
    assert (agg.input_bytes, agg.broadcast_bytes, agg.raw) == (2000, 0, 2.0)
    assert agg.clamps == ("max-parallelism 128 lowered to the vertex max 4",)
    assert (facts.status, facts.job_id, facts.name) == ("FINISHED", "job-1", "sums")
    assert [(v.tasks, v.finished, v.deployments) for v in facts.vertices] == [
        (2, 2, 2),
        (2, 2, 3),
        (2, 2, 2),
    ]  # agg[1] ran twice


def test_each_edge_carries_its_pattern_partitioner_result_type_and_bytes():
    facts, _ = sums_facts()
    shuffle, forward = facts.results
    assert (
        shuffle.source,
        shuffle.target,
        shuffle.pattern,
        shuffle.partitioner,
        shuffle.result_type,
        shuffle.bytes,
    ) == ("src", "agg", "all-to-all", "hash(key)", "blocking", 2000)
    assert (forward.pattern, forward.partitioner, forward.bytes) == ("pointwise", "forward", 100)


def test_subpartition_bytes_and_the_decided_ranges():
    facts, _ = sums_facts()
    shuffle = facts.result("src", "agg")
    assert shuffle.subpartition_bytes == (200, 400, 600, 800)
    # at most 2 ranges (1000 bytes a task): the smallest limit that packs into 2 is 1200
    assert shuffle.consumer_ranges == ((0, 2), (3, 3))
    assert shuffle.splits == ()
    assert facts.vertex("agg").task_bytes == (800, 1200)
    assert facts.result("agg", "sink").subpartition_bytes == ()  # pointwise: no chart


def test_the_timeline_has_every_attempt_in_its_slot_with_the_failure_and_the_restart():
    facts, records = sums_facts()
    assert facts.slots == (("sim-tm-0", 0), ("sim-tm-0", 1))
    attempts = {(a.vertex, a.subtask, a.attempt): a for a in facts.attempts}
    assert sorted(attempts) == [
        ("agg", 0, 0),
        ("agg", 1, 0),
        ("agg", 1, 1),
        ("sink", 0, 0),
        ("sink", 1, 0),
        ("src", 0, 0),
        ("src", 1, 0),
    ]
    failed = attempts[("agg", 1, 0)]
    assert (failed.outcome, failed.error) == ("failed", "simulated failure")
    assert failed.started_ms == time_of(records, ev.TaskRunning, vertex="agg", subtask=1, attempt=0)
    assert failed.ended_ms == time_of(records, ev.TaskFailed, vertex="agg", subtask=1)
    rerun = attempts[("agg", 1, 1)]
    assert rerun.outcome == "finished" and rerun.deployed_ms > failed.ended_ms
    assert all(a.outcome == "finished" for key, a in attempts.items() if key != ("agg", 1, 0))
    assert [(m.kind, m.time_ms) for m in facts.markers] == [
        ("failure", failed.ended_ms),
        ("end", time_of(records, ev.JobEnded)),
    ]
    assert facts.submitted_ms == START_MS and facts.ended_ms == time_of(records, ev.JobEnded)


def test_a_running_job_shows_open_attempts_and_what_undecided_vertices_wait_for():
    facts_all, records = sums_facts()
    cut = next(i for i, (_, e) in enumerate(records) if type(e) is ev.TaskFinished)  # src[0] done
    graph = sums_job()
    submitted, _, _ = record(graph, SUMS_CONFIG, byte_model=sums_bytes, faults=[("agg", 1, 0)])
    facts = facts_from_log(graph, submitted, records[: cut + 1], "job-1")
    assert facts.status == "RUNNING" and facts.ended_ms is None
    agg = facts.vertex("agg")
    assert agg.parallelism is None and agg.origin == "undecided"
    assert agg.waiting_for == "waiting for its inputs: src (1 of 2 tasks to finish)"
    open_attempts = [a for a in facts.attempts if a.outcome == "running"]
    assert [(a.vertex, a.subtask) for a in open_attempts] == [("src", 1)]


def test_a_skewed_subpartition_cut_across_tasks():
    graph = skewed_job()
    submitted, records, _ = record(graph, SKEWED_CONFIG, byte_model=skewed_bytes)
    facts = facts_from_log(graph, submitted, records, "job-2")
    probe, build = facts.result("probe", "join"), facts.result("build", "join")
    assert probe.subpartition_bytes == (4000,) * 5 + (400_000,) + (4000,) * 2
    assert probe.consumer_ranges == ((0, 4), (5, 5), (5, 5), (5, 5), (5, 5), (6, 7))
    assert probe.splits == ((5, 4),)  # one piece per probe partition
    assert build.splits == ()  # the build side's subpartition 5 is copied to each, not cut
    join = facts.vertex("join")
    assert join.parallelism == 6
    assert join.clamps[-1] == "lowered from 9 to max-parallelism 8"
    # the smallest task reads subpartitions 6..7 of both sides: 2 x (4000 + 2000); the largest,
    # one probe partition's quarter of the hot subpartition and the build side's whole one
    assert join.task_bytes == (12_000, 102_000)


def test_explain_says_the_whole_reason_per_vertex():
    graph = skewed_job()
    submitted, records, _ = record(graph, SKEWED_CONFIG, byte_model=skewed_bytes)
    lines = explain_lines(facts_from_log(graph, submitted, records, "job-2"))
    text = "\n".join(lines)
    assert lines[0] == "skewed (job-2): FINISHED"
    assert (
        "join [pass-through]: parallelism 6, decided at run time from the bytes its inputs "
        "produced (vertex max 8)"
    ) in lines
    assert "  consumed: 433.6 KiB (444,000 bytes), nothing broadcast" in lines
    assert "  raw value: 8.88 (non-broadcast bytes / avg-data-volume-per-task)" in lines
    assert (
        "  clamps: max-parallelism 128 lowered to the vertex max 8; lowered from 9 to "
        "max-parallelism 8"
    ) in lines
    assert "  tasks given: smallest 11.7 KiB, largest 99.6 KiB of non-broadcast input" in lines
    assert "  skew: probe -> join: subpartition 5 cut into 4 pieces, one task each" in text
    assert "probe [pass-through]: parallelism 4, set by the user (vertex max 4)" in lines


def test_a_jobmanager_recovery_is_marked_and_its_attempts_end_where_the_log_says():
    import random

    from jobmanager.model.config import Configuration
    from tests.jobmanager.core.crash import crash_and_recover

    graph = sums_job()
    recovery = crash_and_recover(
        graph,
        Configuration(SUMS_CONFIG),
        seed=3,
        crash_at=8,
        fates=random.Random(5),
        byte_model=sums_bytes,
    )
    assert recovery.terminated is not None and recovery.terminated.status == "FINISHED"
    records = [(START_MS + 10 * (i + 1), e) for i, e in enumerate(recovery.log)]
    submitted, _, _ = record(graph, SUMS_CONFIG, byte_model=sums_bytes)
    facts = facts_from_log(graph, submitted, records, "job-3")
    recovered = time_of(records, ev.JobManagerRecovered)
    assert [m.time_ms for m in facts.markers if m.kind == "recovery"] == [recovered]
    assert facts.recoveries == 1 and facts.status == "FINISHED"
    last = {}
    for a in facts.attempts:
        last[(a.vertex, a.subtask)] = a
    assert all(a.outcome == "finished" for a in last.values()), last  # each task's last attempt
    assert all(a.ended_ms is not None for a in facts.attempts)  # nothing left open at the end


def test_explain_names_the_member_of_a_chain_whose_parallelism_the_user_set():
    """The chain ``src -> agg`` runs with src's 2: "set by the user" alone would say agg's
    was set too."""
    graph = chained_graph(sums_job(), [("src", "agg")])
    submitted, records, _ = record(graph, SUMS_CONFIG, byte_model=sums_bytes)
    lines = explain_lines(facts_from_log(graph, submitted, records, "job-3"))
    assert (
        "src -> agg [chain: pass-through -> pass-through]: parallelism 2, set by the user "
        "on src (vertex max 4)"
    ) in lines, lines


def test_a_vertex_of_a_planned_query_shows_its_sql_under_the_part_of_the_query_it_came_from():
    """A lone piece, and a chain whose member runs one (``agg -> sink``)."""
    graph = chained_graph(sql_job(), [("agg", "sink")])
    submitted, records, _ = record(graph, SUMS_CONFIG, byte_model=sums_bytes)
    facts = facts_from_log(graph, submitted, records, "job-4")
    src, chain = facts.vertex("src"), facts.vertex("agg -> sink")
    assert src.kind == "sql"
    assert src.sql == (SqlPiece("src", SRC_SQL, "FROM range(100) WHERE id < 50"),)
    assert chain.kind == "chain: sql -> sink"
    assert chain.sql == (SqlPiece("agg", AGG_SQL, "GROUP BY key"),)
    lines = explain_lines(facts)
    at = lines.index("  from the query: FROM range(100) WHERE id < 50")
    assert lines[at + 1 : at + 4] == [
        "  | SELECT id % 4 AS key, id AS value",
        "  | FROM range(100)",
        "  | WHERE id < 50",
    ]
    at = lines.index("  agg, from the query: GROUP BY key")
    assert lines[at + 1] == f"  | {AGG_SQL}"
    assert lines[at - 1].startswith("  why: ")  # after the vertex's reason, in its block
