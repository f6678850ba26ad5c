"""Shuffle throughput: Tidal's partition files against plain pyarrow IPC files, in one run.

Generates an Arrow table of about ``--bytes`` (int64, float64 and string columns), then, each
repeat, measures

- Tidal: hash-partition the table on its ``key`` column into ``--subpartitions``
  subpartitions and write one partition file (ResultPartitionWriter), then read every
  subpartition back as its own range ``[i, i]`` -- the way ``--subpartitions`` consumers would
  -- through one PartitionFileReader, checksums checked;
- baseline: write the same table to one Arrow IPC file with the same LZ4 compression, then
  read it back whole.

Throughput is the table's in-memory bytes over write + read seconds, from the median of the
repeats; ``ratio`` is Tidal's throughput over the baseline's (issue 4 asks for at least 0.5).
Prints human lines, then one JSON object as the last line.

    python benchmarks/shuffle.py                     # 1 GiB, 1000 subpartitions, 3 repeats
    python benchmarks/shuffle.py --bytes 4000000 --subpartitions 10 --repeats 1
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file is named like the package it measures; run as a script, its own folder comes first
# on sys.path and would shadow the ``shuffle`` package, so the repository root takes its place.
_ROOT = Path(__file__).resolve().parent.parent
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(_ROOT)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from shuffle import (  # noqa: E402
    HashPartitioner,
    IndexRange,
    PartitionFileReader,
    PartitionId,
    ResultPartitionWriter,
)

_BYTES_PER_ROW = 8 + 8 + 8 + 4 + 16  # key, value, count, string offset, ~16 string bytes
_TARGET_RATIO = 0.5


def make_table(target_bytes: int, seed: int = 0) -> pa.Table:
    """About ``target_bytes`` of rows: a key with repeats, a float, a small int, a string."""
    rng = np.random.default_rng(seed)
    rows = max(1, target_bytes // _BYTES_PER_ROW)
    lengths = rng.integers(8, 25, rows, dtype=np.int32)
    offsets = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    letters = rng.integers(ord("a"), ord("z") + 1, int(offsets[-1]), dtype=np.uint8)
    names = pa.StringArray.from_buffers(rows, pa.py_buffer(offsets), pa.py_buffer(letters))
    return pa.table(
        {
            "key": rng.integers(0, max(1, rows // 4), rows, dtype=np.int64),
            "value": rng.standard_normal(rows),
            "count": rng.integers(0, 1000, rows, dtype=np.int64),
            "name": names,
        }
    )


def run_tidal(table: pa.Table, subpartitions: int, folder: Path) -> dict[str, float]:
    partition_id = PartitionId("benchmark", 0)
    path = folder / "tidal.tpf"
    started = time.perf_counter()
    writer = ResultPartitionWriter(path, partition_id, subpartitions, HashPartitioner(("key",)))
    writer.write(table)
    written = writer.finish()
    wrote = time.perf_counter()
    rows = 0
    with PartitionFileReader(path, partition_id) as reader:
        for index in range(subpartitions):
            rows += reader.read_range(IndexRange(index, index)).num_rows
    read = time.perf_counter()
    if rows != table.num_rows:
        raise AssertionError(f"read back {rows} rows of {table.num_rows}")
    file_bytes = path.stat().st_size
    path.unlink()
    return {
        "write": wrote - started,
        "read": read - wrote,
        "file_bytes": file_bytes,
        "data_bytes": written.total_bytes,
    }


def run_baseline(table: pa.Table, folder: Path) -> dict[str, float]:
    path = folder / "baseline.arrow"
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    started = time.perf_counter()
    with (
        pa.OSFile(str(path), "wb") as sink,
        pa.ipc.new_file(sink, table.schema, options=options) as writer,
    ):
        writer.write_table(table)
    wrote = time.perf_counter()
    with pa.OSFile(str(path), "rb") as source:
        back = pa.ipc.open_file(source).read_all()
    read = time.perf_counter()
    if back.num_rows != table.num_rows:
        raise AssertionError(f"read back {back.num_rows} rows of {table.num_rows}")
    file_bytes = path.stat().st_size
    path.unlink()
    return {"write": wrote - started, "read": read - wrote, "file_bytes": file_bytes}


def _median(runs: list[dict[str, float]], field: str) -> float:
    return statistics.median(run[field] for run in runs)


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bytes", type=int, default=1 << 30, help="table size (default 1 GiB)")
    parser.add_argument("--subpartitions", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", default=None, help="where to write the files (default: temp)")
    args = parser.parse_args(argv)

    table = make_table(args.bytes)
    print(
        f"table: {table.num_rows:,} rows, {table.nbytes / 2**20:,.1f} MiB, "
        f"{args.subpartitions} subpartitions, {args.repeats} repeats",
        flush=True,
    )
    folder = Path(tempfile.mkdtemp(prefix="tidal-bench-", dir=args.dir))
    tidal_runs, baseline_runs = [], []
    try:
        for repeat in range(args.repeats):
            baseline_runs.append(run_baseline(table, folder))
            tidal_runs.append(run_tidal(table, args.subpartitions, folder))
            b, t = baseline_runs[-1], tidal_runs[-1]
            print(
                f"repeat {repeat + 1}: baseline write {b['write']:.2f}s read {b['read']:.2f}s | "
                f"tidal write {t['write']:.2f}s read {t['read']:.2f}s",
                flush=True,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    nbytes = table.nbytes
    figures: dict[str, object] = {
        "benchmark": "shuffle",
        "bytes": nbytes,
        "rows": table.num_rows,
        "subpartitions": args.subpartitions,
        "repeats": args.repeats,
        "reads": "one range per subpartition",
    }
    for name, runs in (("tidal", tidal_runs), ("baseline", baseline_runs)):
        seconds = statistics.median(run["write"] + run["read"] for run in runs)
        figures[f"{name}_write_seconds"] = round(_median(runs, "write"), 4)
        figures[f"{name}_read_seconds"] = round(_median(runs, "read"), 4)
        figures[f"{name}_seconds"] = round(seconds, 4)
        figures[f"{name}_throughput_mib_s"] = round(nbytes / seconds / 2**20, 1)
        figures[f"{name}_file_bytes"] = int(_median(runs, "file_bytes"))
    figures["ratio"] = round(figures["baseline_seconds"] / figures["tidal_seconds"], 3)
    figures["target_ratio"] = _TARGET_RATIO
    figures["machine"] = (
        f"{platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"pyarrow {pa.__version__}"
    )
    print(
        f"tidal {figures['tidal_throughput_mib_s']} MiB/s, baseline "
        f"{figures['baseline_throughput_mib_s']} MiB/s: ratio {figures['ratio']} "
        f"(target >= {_TARGET_RATIO})"
    )
    print(json.dumps(figures), flush=True)
    return figures


if __name__ == "__main__":
    main()
