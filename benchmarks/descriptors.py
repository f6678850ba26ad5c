"""Cached, compressed ShuffleDescriptors: size and the cost of deploying N consumers.

Builds the 10,000 x 10,000 all-to-all job in the real scheduling core, finishes every producer
on simulated TaskManagers, then measures, with medians over repeats:

- the size of one consumed partition group's descriptors, msgpack-encoded and then compressed
  (target: compressed at most 25% of encoded; Flink reports a 72% reduction);
- building that group's descriptors once (describe, encode, compress): the baseline;
- building the deployment descriptors of all N consumers of that group, which share the cached
  entry: ``ratio`` = that time / the baseline (target: at most 10);
- for reference, deploying without the cache (each consumer encodes the group itself), timed
  on a sample of consumers and scaled to N.

    python benchmarks/descriptors.py [--parallelism 10000] [--repeats 5]
"""

from __future__ import annotations

import sys
from pathlib import Path

# benchmarks/shuffle.py shares its name with the shuffle package; run as a script, this folder
# comes first on sys.path and would shadow it, so the repository root takes its place.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import msgpack  # noqa: E402
import structlog  # noqa: E402

from blob import BlobKey, InMemoryBlobStore  # noqa: E402
from jobmanager.core.deployment import TaskDeploymentDescriptorFactory  # noqa: E402
from jobmanager.core.state import JobManagerState  # noqa: E402
from jobmanager.messages import events as ev  # noqa: E402
from jobmanager.model.jobgraph import JobGraph, Partitioner  # noqa: E402
from jobmanager.runtime.descriptors import ShuffleDescriptorCache  # noqa: E402


def finished_producers(parallelism: int, task_managers: int) -> JobManagerState:
    job = JobGraph("descriptors")
    job.connect(
        job.add_vertex("producer", parallelism),
        job.add_vertex("consumer", parallelism),
        Partitioner.hash("key"),
    )
    state = JobManagerState(job, job_id="descriptors")
    state.handle(ev.JobStarted())
    per_tm = -(-parallelism // task_managers)
    for t in range(task_managers):
        state.handle(
            ev.TaskManagerRegistered(
                f"taskmanager-{t:04d}",
                per_tm,
                f"10.0.{t // 250}.{t % 250}",
                f"/var/lib/tidal/shuffle/job-descriptors/taskmanager-{t:04d}",
            )
        )
    counts = ev.ProducedPartition.of("producer->consumer", [1] * parallelism)
    for k in range(parallelism):
        state.handle(ev.TaskFinished("producer", k, 0, (counts,)))
    return state


def median_seconds(action, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parallelism", type=int, default=10_000)
    parser.add_argument("--task-managers", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sample", type=int, default=20, help="consumers timed without cache")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(30))
    state = finished_producers(args.parallelism, args.task_managers)
    consumers = state.graph.job_vertex("consumer").vertices
    (group,) = consumers[0].consumed_groups

    def new_factory() -> TaskDeploymentDescriptorFactory:
        cache = ShuffleDescriptorCache(InMemoryBlobStore())
        return TaskDeploymentDescriptorFactory(
            "descriptors", state.graph, state.task_managers, cache
        )

    probe = new_factory()
    encoded = len(msgpack.packb([probe.describe(p).to_list() for p in group.partitions]))
    entry = probe.cache.get(group, probe.describe)
    compressed = len(entry.inline) or len(probe.cache.blobs.get(BlobKey(entry.blob_key)))

    one_group = median_seconds(lambda: new_factory().cache.get(group, probe.describe), args.repeats)

    def deploy_all() -> None:
        f = new_factory()
        for v in consumers:
            f.create(v)

    all_consumers = median_seconds(deploy_all, args.repeats)

    def deploy_sample_uncached() -> None:
        for v in consumers[: args.sample]:
            new_factory().create(v)

    uncached = median_seconds(deploy_sample_uncached, args.repeats) * len(consumers) / args.sample
    ratio = all_consumers / one_group
    n = args.parallelism
    print(
        f"{n} descriptors of one group: {encoded / 2**20:.2f} MiB msgpack, "
        f"{compressed / 2**20:.2f} MiB compressed ({compressed / encoded:.1%}); "
        f"{'offloaded to the blob store' if entry.offloaded else 'inline'}"
    )
    print(f"build one group's descriptors: {one_group * 1000:.1f} ms (median of {args.repeats})")
    print(
        f"deployment descriptors of {n} consumers: {all_consumers * 1000:.1f} ms "
        f"= {ratio:.2f} x one group (target <= 10)"
    )
    print(f"without the cache (scaled from {args.sample} consumers): {uncached:.1f} s")
    print(
        json.dumps(
            {
                "benchmark": "descriptors",
                "baseline": "building one consumed partition group's descriptors once",
                "parallelism": n,
                "encoded_bytes": encoded,
                "compressed_bytes": compressed,
                "compressed_fraction": round(compressed / encoded, 4),
                "offloaded": entry.offloaded,
                "one_group_seconds": round(one_group, 6),
                "all_consumers_seconds": round(all_consumers, 6),
                "uncached_all_consumers_seconds_estimate": round(uncached, 3),
                "ratio": round(ratio, 3),
                "machine": f"{platform.machine()} {platform.python_implementation()} "
                f"{platform.python_version()}",
            }
        )
    )


if __name__ == "__main__":
    main()
