"""TPC-H Q1 run as Tidal's hand-built job runs it, in plain PySpark with none of Tidal's code:
the floor under that job's figure on Tidal.

Tidal decides Q1's shape (``examples/tpch_queries.q1``) when it takes the job, and this asks
Tidal's own code for it (``core.admission``, ``FileSource.plan``, ``assign_splits``): where the
lineitem source infers one task, its hash edge into the one-task final aggregate chains, and
Q1 is one query, the partial and the final aggregate composed; otherwise one
scan-and-partial-aggregate query per source task, the tasks running at once, and then the
final aggregate of their few rows, read from a Parquet file. Here exactly those queries run in
``benchmarks/tpch.py``'s baseline session (``local[2]``, a TaskManager of two slots), the tasks
on threads, with a Tidal task's Spark settings (``taskmanager.spark.TASK_SQL_CONF``): no Ray,
no partition files, no deployments, no JobManager. Against them, Q1 as one Spark query with
adaptive execution on, as that baseline runs it. The two alternate run by run in the same JVM,
after the same warm-ups.

``ratio`` is Tidal's shape's median over the single query's: what running the query as Tidal's
tasks costs Spark itself, which no scheduling can win back; Tidal's own cost is what running
the job on Tidal adds on top. Prints human lines, then one JSON object as the
last line.

    python benchmarks/tpch_shape.py                   # scale 1, 3 warm-ups, 5 repeats
    python benchmarks/tpch_shape.py --scale 0.01 --warmups 0 --repeats 1
"""

from __future__ import annotations

import sys
from pathlib import Path

# This folder holds shuffle.py, named like the shuffle package; run as a script, the folder
# comes first on sys.path and would shadow it, so the repository root takes its place.
_ROOT = Path(__file__).resolve().parent.parent
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(_ROOT)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from benchmarks.tpch_sides import spark_session  # noqa: E402
from examples.compare import first_difference  # noqa: E402
from examples.tpch_data import generate  # noqa: E402
from examples.tpch_queries import q1, q1_final, q1_partial, spark_q1  # noqa: E402
from jobmanager.core.admission import decide_admission, sources_to_ask  # noqa: E402
from jobmanager.model.config import (  # noqa: E402
    AVG_DATA_VOLUME_PER_TASK,
    SOURCE_DATA_VOLUME_PER_TASK,
    Configuration,
)
from jobmanager.model.inference import InferenceContext, infer_vertex_parallelism  # noqa: E402
from jobmanager.model.splits import assign_splits  # noqa: E402
from taskmanager.spark import TASK_SQL_CONF  # noqa: E402

TASK_VOLUME, SOURCE_VOLUME = 64 << 20, 128 << 20  # Tidal's defaults
SLOTS = 2  # the baseline's local[2]


def source_tasks(data: str, slots: int):
    """The files each lineitem task of Tidal's Q1 reads, and the columns it reads of them."""
    (source,) = q1(data, "unused").vertex("lineitem").sources
    plan = source.plan(InferenceContext(128, SOURCE_VOLUME, (), slots))
    tasks = [
        sorted({split.path for split in mine})
        for mine in assign_splits(plan.splits, plan.parallelism)
    ]
    return [paths for paths in tasks if paths], list(source.columns)


def chained(data: str, slots: int) -> bool:
    """Whether Tidal runs lineitem and the final aggregate as one task (one query)."""
    graph = q1(data, "unused")
    config = Configuration(
        {AVG_DATA_VOLUME_PER_TASK.key: TASK_VOLUME, SOURCE_DATA_VOLUME_PER_TASK.key: SOURCE_VOLUME}
    )
    answers = [
        infer_vertex_parallelism(name, graph.vertex(name).sources, context)
        for name, context in sources_to_ask(graph, config, slots).items()
    ]
    chains, _ = decide_admission(graph, config, answers)
    return any({"lineitem", "pricing_summary"} <= set(chain) for chain in chains)


class SplitQuery:
    """Q1 as Tidal's tasks run it, in one session: one composed query where Tidal chains the
    source into the final aggregate, else the source tasks at once, then the final."""

    def __init__(self, session, data: str, slots: int, scratch: Path) -> None:
        self.tasks, self.columns = source_tasks(data, slots)
        self.chained = chained(data, slots)
        self.session = session.newSession()
        for key, value in TASK_SQL_CONF.items():
            self.session.conf.set(key, value)
        self.schema = self.session.read.parquet(self.tasks[0][0]).schema  # a TaskManager's memo
        self.threads = ThreadPoolExecutor(slots)
        self.scratch = scratch

    def scan(self, paths: list[str]) -> pa.Table:
        frame = self.session.read.schema(self.schema).parquet(*paths).select(*self.columns)
        return q1_partial(frame).toArrow()

    def run(self) -> pa.Table:
        if self.chained:
            (paths,) = self.tasks
            frame = self.session.read.schema(self.schema).parquet(*paths).select(*self.columns)
            return q1_final(q1_partial(frame)).toArrow()
        partials = pa.concat_tables(self.threads.map(self.scan, self.tasks))
        path = str(self.scratch / "partials.parquet")
        pq.write_table(partials, path, compression="none", use_dictionary=False)
        return q1_final(self.session.read.parquet(path)).toArrow()


def timed(run) -> tuple[float, pa.Table]:
    started = time.perf_counter()
    table = run()
    return time.perf_counter() - started, table


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor")
    parser.add_argument("--repeats", type=int, default=5, help="measured runs of each")
    parser.add_argument("--warmups", type=int, default=3, help="unmeasured runs of each first")
    parser.add_argument(
        "--data", default=None, help="data directory (default: a per-scale folder in the temp dir)"
    )
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.warmups < 0:
        parser.error("--repeats must be at least 1, --warmups at least 0")
    data = args.data or os.path.join(tempfile.gettempdir(), f"tidal-tpch-sf{args.scale:g}")
    generate(data, args.scale)
    session = spark_session()
    split_runs, single_runs, same = [], [], True
    with tempfile.TemporaryDirectory(prefix="tidal-bench-shape-") as scratch:
        split = SplitQuery(session, data, SLOTS, Path(scratch))
        try:
            for run in range(args.warmups + args.repeats):
                split_seconds, split_result = timed(split.run)
                single_seconds, single_result = timed(lambda: spark_q1(session, data).toArrow())
                same &= first_difference(split_result, single_result) is None
                if run >= args.warmups:
                    split_runs.append(split_seconds)
                    single_runs.append(single_seconds)
        finally:
            split.threads.shutdown()
            session.stop()
    split_median, single_median = statistics.median(split_runs), statistics.median(single_runs)
    shape = (
        "one chained task" if split.chained else f"{len(split.tasks)} source tasks and a final task"
    )
    print(
        f"q1 as {shape}, in plain PySpark: median "
        f"{split_median:.2f} s of {[round(s, 2) for s in split_runs]}; as one query: "
        f"{single_median:.2f} s of {[round(s, 2) for s in single_runs]}",
        flush=True,
    )
    summary = {
        "benchmark": "tpch_shape",
        "scale": args.scale,
        "repeats": args.repeats,
        "warmups": args.warmups,
        "slots": SLOTS,
        "source_tasks": len(split.tasks),
        "chained": split.chained,
        "split_seconds": round(split_median, 3),
        "single_query_seconds": round(single_median, 3),
        "same_result": same,
        "ratio": round(split_median / single_median, 3),
    }
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    sys.exit(0 if main()["same_result"] else 1)
