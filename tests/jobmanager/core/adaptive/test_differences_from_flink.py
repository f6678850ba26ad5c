"""Where Tidal's adaptive decisions differ from Flink 2.x on purpose, one test each (the
README's Options section names them)."""

import math

from jobmanager.core.scheduler.adaptive.decider import decide_vertex
from jobmanager.core.scheduler.adaptive.decision import DeciderSettings, InputStats
from jobmanager.core.state import JobManagerState
from jobmanager.messages import events as ev
from jobmanager.model.config import JOB_RECOVERY_ENABLED, Configuration
from jobmanager.model.jobgraph import JobGraph, Partitioner

MiB = 1 << 20
SETTINGS = DeciderSettings(min_parallelism=1, max_parallelism=128, data_volume_per_task=16 * MiB)


def test_lumpy_subpartitions_are_packed_into_at_most_the_formulas_parallelism():
    """Flink packs greedily at the volume per task anywhere in [min, max]: 128 subpartitions of
    just over half a task's volume each make 128 ranges there (no two fit together). Tidal
    raises the packing limit until the ranges fit the formula's parallelism."""
    sub = [int(8.2 * MiB)] * 128
    decision = decide_vertex([InputStats.all_to_all("r", sub, partitions=10)], None, 128, SETTINGS)
    formula = math.ceil(sum(sub) / SETTINGS.data_volume_per_task)
    assert formula == 66 and decision.parallelism <= formula


def test_a_broadcast_result_has_one_subpartition_every_consumer_reads_whole():
    g = JobGraph("broadcast")
    small = g.add_vertex("small", parallelism=3)
    big = g.add_vertex("big", parallelism=4)
    join = g.add_vertex("join", max_parallelism=64)
    g.connect(small, join, Partitioner.BROADCAST)
    g.connect(big, join, Partitioner.hash("k"))
    state = JobManagerState(g, Configuration(), job_id="b")
    state.handle(ev.JobStarted())
    broadcast = state.graph.results["small->join"]
    assert [broadcast.subpartition_count(i) for i in range(3)] == [1, 1, 1]  # not 64 copies


def test_a_task_reads_any_number_of_partition_slices_with_no_cap():
    """Flink bounds the (partition, subpartition) slices one task reads; Tidal reads a range of
    all of a result's partitions as one slice, however many producers there are."""
    sub = [100] * 8
    decision = decide_vertex(
        [InputStats.all_to_all("r", sub, partitions=50_000)], None, 128, SETTINGS
    )
    (info,) = decision.input_infos.values()
    assert decision.parallelism == 1
    (piece,) = info[0].slices
    assert (piece.partitions.start, piece.partitions.end) == (0, 49_999)


def test_a_file_sources_tasks_past_the_jobs_slots_are_rounded_down_to_whole_waves(tmp_path):
    """Flink's file source infers one task per split (within the upper bound): 3 on 2 slots.
    Tidal's infers 2, so no task runs alone in a second wave."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from jobmanager.model.inference import InferenceContext
    from jobmanager.model.sources import FileSource

    for n in range(3):
        pq.write_table(pa.table({"x": [n]}), tmp_path / f"part-{n}.parquet")
    assert FileSource(tmp_path).infer_parallelism(InferenceContext(128, 1, (), slots=2)) == 2


def test_a_file_source_infers_from_the_bytes_its_columns_hold_not_its_splits(tmp_path):
    """Flink's file source infers one task per split: 4 files are 4 tasks however small.
    Tidal's divides the bytes of the column chunks it reads by the data volume per task, as
    Spark packs small files into one partition: 4 small files are one task (one Spark query),
    and the columns a task does not read do not count."""
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq

    from jobmanager.model.inference import InferenceContext
    from jobmanager.model.sources import FileSource

    text = random.Random(0)
    for n in range(4):
        wide = ["".join(text.choices("abcdefghij", k=64)) for _ in range(1000)]  # incompressible
        pq.write_table(
            pa.table({"x": list(range(1000)), "wide": wide}),
            tmp_path / f"part-{n}.parquet",
            use_dictionary=False,
        )
    read = sum(
        pq.read_metadata(tmp_path / f"part-{n}.parquet")
        .row_group(0)
        .column(0)
        .total_compressed_size
        for n in range(4)
    )
    every_column = FileSource(tmp_path).infer_parallelism(InferenceContext(128, read, (), 8))
    only_x = FileSource(tmp_path, columns=["x"]).infer_parallelism(
        InferenceContext(128, read, (), 8)
    )
    assert (every_column, only_x) == (4, 1)
    assert FileSource(tmp_path).infer_parallelism(InferenceContext(128, 10 << 20, (), 8)) == 1


def test_an_edge_between_two_one_task_vertices_chains_whatever_its_partitioner():
    """Flink chains FORWARD edges only. Tidal also chains a hash, rebalance or rescale edge
    whose producer and consumer each run as one task (set to 1, or a source inferring 1 when
    the job is taken): everything goes from the one task to the other, as Spark plans no
    exchange below a one-partition input; one Spark query instead of two."""
    from jobmanager.model.chaining import decide_chains
    from jobmanager.model.sources import FileSource

    g = JobGraph("q1")
    lines = g.add_vertex("lines", sources=[FileSource("/lineitem")])
    final = g.add_vertex("final", parallelism=1)
    g.connect(lines, final, Partitioner.hash("l_returnflag"))
    assert decide_chains(g, one_task={"lines"}) == (("lines", "final"),)
    assert decide_chains(g) == ()  # lines' tasks unknown: as Flink


def test_a_join_is_decided_at_run_time_with_job_recovery_on_once_both_sides_finished():
    """Flink switches its adaptive broadcast join off under batch job recovery, and may turn a
    join into a broadcast join as soon as the small side finished. Tidal logs the decision in
    the vertex's decision event, so recovery replays it (on by default), and decides once both
    sides finished, from both sides' real bytes, with the join's parallelism."""
    from jobmanager.model.joins import JoinInput
    from jobmanager.simulation.cluster import uniform_bytes
    from tests.jobmanager.core.harness import Run

    g = JobGraph("join")
    left, right = g.add_vertex("left", 4), g.add_vertex("right", 1)
    join = g.add_vertex("join")
    g.connect(left, join, Partitioner.hash("k"), join=JoinInput("j1", "inner", "left"))
    g.connect(right, join, Partitioner.hash("k"), join=JoinInput("j1", "inner", "right"))
    run = Run(g, {JOB_RECOVERY_ENABLED.key: True}, byte_model=uniform_bytes(MiB))
    assert run.go().status == "FINISHED"
    (decided,) = [e for e in run.run.events if type(e) is ev.VertexParallelismDecided]
    finished = [i for i, e in enumerate(run.run.events) if type(e) is ev.TaskFinished]
    assert run.run.events.index(decided) > finished[4]  # after all five producer tasks
    assert decided.joins[0].strategy == "broadcast" and decided.joins[0].side == "right"
    run.check_replay()
