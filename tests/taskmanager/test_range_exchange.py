"""A range exchange with no Ray: producers write sorted chunks and report their samples, the
core's pure functions pick the bounds and each consumer's chunks, and the consumers, reading
real partition files, keep exactly their key ranges: every row once, in range order."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from jobmanager.core.executiongraph.inputs import ExplicitInputInfo
from jobmanager.core.scheduler.adaptive.decision import DeciderSettings, InputStats
from jobmanager.core.scheduler.adaptive.ranges import decide_range_vertex, key_range
from jobmanager.messages.deployment import ResultPartitionDeploymentDescriptor
from jobmanager.messages.events import TaskFinished
from jobmanager.model.operators import arrow
from shuffle.keyorder import SortKey
from shuffle.range_partitioning import encode_keys
from taskmanager.cancellation import CancelToken
from taskmanager.inputs import read_inputs
from taskmanager.runner import run_task
from tests.taskmanager.harness import DictBlobs, descriptor, environment, gate, tdd

ORDER = (SortKey("k", descending=True, nulls_first=False), SortKey("s"))
SUBPARTITIONS = 8


def rows(seed: int, n: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    k = [None if v < 3 else int(v) for v in rng.integers(0, 40, n)]  # ties and nulls
    return pa.table(
        {
            "k": pa.array(k, pa.int64()),
            "s": [f"s{v}" for v in rng.integers(0, 5, n)],
            "id": [seed * 10_000 + i for i in range(n)],
        }
    )


def test_consumers_keep_their_ranges_and_together_every_row_once(tmp_path):
    blobs = DictBlobs()
    env, _ = environment(tmp_path / "tm", blobs)
    tables = [rows(seed, n) for seed, n in ((1, 300), (2, 5), (3, 0), (4, 200))]
    samples, totals = {}, []
    for p, table in enumerate(tables):
        out = ResultPartitionDeploymentDescriptor(
            "scan->sort", p, SUBPARTITIONS, "range", (), order=ORDER
        )
        code = blobs.code(arrow(lambda table=table: table))
        finished = run_task(
            tdd("scan", code, subtask=p, parallelism=4, outputs=[out]), env, CancelToken()
        )
        assert isinstance(finished, TaskFinished), finished
        (report,) = finished.produced
        assert len(report.range_bounds) == (
            min(SUBPARTITIONS, table.num_rows) + 1 if table.num_rows else 0
        )
        if report.range_bounds:
            samples[p] = (
                report.range_bounds,
                tuple(report.counts()[: len(report.range_bounds) - 1]),
            )
        totals.append(report.total)
    stats = InputStats.all_to_all("scan->sort", np.zeros(SUBPARTITIONS), 4, partition_bytes=totals)
    decision = decide_range_vertex(
        [stats],
        "scan->sort",
        samples,
        None,
        8,
        DeciderSettings(data_volume_per_task=max(1, sum(totals) // 3)),
    )
    assert decision.parallelism >= 2
    info = decision.input_infos["scan->sort"]
    assert isinstance(info, ExplicitInputInfo)
    descriptors = [descriptor(env, "scan->sort", p, SUBPARTITIONS) for p in range(4)]
    kept = []
    for k in range(decision.parallelism):
        lower, upper = key_range(decision.range_bounds, k)
        slices = [
            ((s.partitions.start, s.partitions.end), (s.subpartitions.start, s.subpartitions.end))
            for s in info[k].slices
        ]
        consumer = gate("scan->sort", descriptors, slices)
        consumer = type(consumer)(
            consumer.result, consumer.slices, consumer.descriptors, None, ORDER, lower, upper
        )
        (table,) = read_inputs(
            tdd("sort", subtask=k, parallelism=decision.parallelism, inputs=[consumer]),
            (),
            env.blobs,
            env.node_id,
            None,
            CancelToken(),
        ).tables
        keys = encode_keys(table, ORDER).to_pylist()
        assert all(
            (lower is None or key >= lower) and (upper is None or key < upper) for key in keys
        )
        kept.append(sorted(keys))
    everything = pa.concat_tables(tables, promote_options="default")
    assert [key for part in kept for key in part] == sorted(
        encode_keys(everything, ORDER).to_pylist()
    )
