"""The real FileSource answering the real core's inference command, over real files."""

import pyarrow as pa
import pyarrow.parquet as pq

from jobmanager.model.config import AVG_DATA_VOLUME_PER_TASK, MIN_PARALLELISM
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.model.sources import FileSource
from tests.jobmanager.core.harness import Run


def write_days(root, days, rows=2000):
    for day in days:
        folder = root / f"date={day}"
        folder.mkdir(parents=True)
        table = pa.table({"k": list(range(rows)), "v": [float(i) for i in range(rows)]})
        pq.write_table(table, folder / "part-0.parquet", row_group_size=rows // 4)


def test_a_file_source_reads_only_the_partitions_its_dimension_kept(tmp_path):
    days = [f"2026-11-{d:02d}" for d in range(1, 21)]
    write_days(tmp_path / "fact", days)
    g = JobGraph("dpp")
    dim = g.add_vertex("dim", parallelism=1)
    source = FileSource(str(tmp_path / "fact"), partitioning="hive")
    fact = g.add_vertex("fact", sources=[source])
    g.connect(dim, fact, Partitioner.BROADCAST, dynamic_filtering="date")
    # one split per row group: tiny files, a volume per task of one byte
    config = {AVG_DATA_VOLUME_PER_TASK.key: 1}
    run = Run(g, config, filter_values=lambda result, subtask: ("2026-11-03", "2026-11-07"))
    assert run.go().status == "FINISHED"
    # two surviving days, four row groups each
    assert run.state.graph.job_vertex("fact").parallelism == 8
    run.check_invariants()


def test_a_missing_path_fails_the_job_naming_it(tmp_path):
    g = JobGraph("missing")
    g.add_vertex("orders", sources=[FileSource(str(tmp_path / "nowhere" / "*.parquet"))])
    terminated = Run(g).go()
    assert terminated.status == "FAILED"
    assert "vertex 'orders'" in terminated.cause and "nowhere" in terminated.cause


def test_a_source_vertex_with_a_broadcast_input_says_what_its_sources_inferred(tmp_path):
    """Its inputs decide (the broadcast is not counted, so the least parallelism), its sources'
    inference is a floor; below the decision, the explanation still says what they saw."""
    write_days(tmp_path / "fact", ["2026-11-01"])
    g = JobGraph("side-input")
    dim = g.add_vertex("dim", parallelism=1)
    fact = g.add_vertex("fact", sources=[FileSource(str(tmp_path / "fact"))])
    g.connect(dim, fact, Partitioner.BROADCAST)
    config = {MIN_PARALLELISM.key: 2}
    run = Run(g, config)
    assert run.go().status == "FINISHED"
    assert run.state.graph.job_vertex("fact").parallelism == 2
    text = run.state.growth.explanations["fact"].text
    assert "-> 2 within [2," in text
    assert "inferred by its sources: 1, no more than that" in text
    assert "1 files" in text and "listed in" in text
    run.check_invariants()
