"""The README's demo job: revenue per nation for the orders of one year, on TPC-H-shaped data.

    orders   (o_orderdate in 1994) --hash(o_orderkey)-------------+
                                                                  +--> join_orders_lineitem
    lineitem (price * (1 - disc))  --hash(l_orderkey), splittable-+             |
                                                                              | rescale
    customer --broadcast (hashed on c_custkey when large)--------> join_customer
                                                                              | hash(c_nationkey)
    nation   --broadcast-----------------------------------------> revenue_by_nation
                                                                              | forward
                                                                            sink (Parquet)

No vertex sets a parallelism: the sources' come from their splits (FLIP-379) and every other
vertex's from the bytes its inputs actually produced (FLIP-187). ``main`` prints each decision
with the scheduler's reason next to the result.

    python examples/revenue_by_nation.py            # scale 2: about a minute on 2 cores
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script: the repository root, not examples/, comes first
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse  # noqa: E402
import datetime  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.dataset as ds  # noqa: E402
from pyspark.sql import DataFrame  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from examples.compare import read_result  # noqa: E402
from examples.options import add_option_flag, parse_options  # noqa: E402
from examples.tpch_data import generate  # noqa: E402
from jobmanager import FileSource, JobGraph, ParquetSink, Partitioner, spark  # noqa: E402
from jobmanager.model import storage  # noqa: E402

__all__ = ["build", "customer_partitioner", "main", "reference"]

DATE_FROM = datetime.date(1994, 1, 1)
DATE_TO = datetime.date(1995, 1, 1)
RESULT_COLUMNS = ("nation", "revenue")

# Up to this size on disk the customer table is broadcast. Its two projected int64 columns are
# about 2.3 MiB at scale 1: every join_customer task reading that whole costs less than
# shuffling the joined orders and lines (about 14 MiB at scale 1, growing at the same rate) a
# second time by customer key, and it lets the joined stream flow on without an exchange. Past
# a task's worth of data the broadcast copies would cost more than the shuffle, so both sides
# are hashed on the customer key instead.
BROADCAST_CUSTOMER_BYTES = 16 << 20


def orders_in_range(orders: DataFrame) -> DataFrame:
    day = F.col("o_orderdate")
    return orders.where((day >= F.lit(DATE_FROM)) & (day < F.lit(DATE_TO))).select(
        "o_orderkey", "o_custkey"
    )


def line_revenue(lineitem: DataFrame) -> DataFrame:
    """Projected to its revenue before the shuffle, so one double crosses it, not two."""
    return lineitem.select(
        "l_orderkey", (F.col("l_extendedprice") * (1 - F.col("l_discount"))).alias("revenue")
    )


def join_orders_lineitem(orders: DataFrame, lines: DataFrame) -> DataFrame:
    return orders.join(lines, orders.o_orderkey == lines.l_orderkey).select("o_custkey", "revenue")


def join_customer(sales: DataFrame, customer: DataFrame) -> DataFrame:
    """Revenue per customer nation, partial: a task sees only some of the sales."""
    joined = sales.join(customer, sales.o_custkey == customer.c_custkey)
    return joined.groupBy("c_nationkey").agg(F.sum("revenue").alias("revenue"))


def revenue_by_nation(partials: DataFrame, nation: DataFrame) -> DataFrame:
    """The final sums, named and sorted. Its input is at most 25 rows per join_customer task,
    so the scheduler gives this vertex one task and its order is the result's order."""
    totals = partials.groupBy("c_nationkey").agg(F.sum("revenue").alias("revenue"))
    named = totals.join(nation, totals.c_nationkey == nation.n_nationkey)
    return named.select(F.col("n_name").alias("nation"), "revenue").orderBy(
        F.col("revenue").desc(), "nation"
    )


def customer_partitioner(data_dir: str | os.PathLike) -> Partitioner:
    """BROADCAST while the customer table is small (see BROADCAST_CUSTOMER_BYTES)."""
    fs, root = storage.filesystem(storage.join(_location(data_dir), "customer"))
    size = sum(
        info["size"]
        for info in fs.find(root, detail=True).values()
        if info["name"].endswith(".parquet")
    )
    return (
        Partitioner.BROADCAST if size <= BROADCAST_CUSTOMER_BYTES else Partitioner.hash("c_custkey")
    )


def _location(path: str | os.PathLike) -> str:
    """A local directory made absolute, or an fsspec URL (``s3://bucket/tpch``) as given."""
    path = os.fspath(path)
    return path if "://" in path else os.path.abspath(path)


def build(data_dir: str | os.PathLike, out_dir: str | os.PathLike) -> JobGraph:
    """The job over the tables under ``data_dir``, its result at ``out_dir``: local
    directories or URLs of any file system fsspec knows (``s3://``, ``gs://``, ...)."""
    data = _location(data_dir)
    graph = JobGraph("revenue-by-nation")

    def source(name: str, columns: list[str], operator=None):
        files = FileSource(storage.join(data, name), columns=columns)
        return graph.add_vertex(name, sources=[files], operator=operator)

    orders = source("orders", ["o_orderkey", "o_custkey", "o_orderdate"], spark(orders_in_range))
    lineitem = source(
        "lineitem", ["l_orderkey", "l_extendedprice", "l_discount"], spark(line_revenue)
    )
    customer = source("customer", ["c_custkey", "c_nationkey"])
    nation = source("nation", ["n_nationkey", "n_name"])
    sales = graph.add_vertex("join_orders_lineitem", operator=spark(join_orders_lineitem))
    by_customer = graph.add_vertex("join_customer", operator=spark(join_customer))
    by_nation = graph.add_vertex("revenue_by_nation", operator=spark(revenue_by_nation))
    sink = graph.add_vertex("sink", operator=ParquetSink(os.fspath(out_dir), overwrite=True))

    graph.connect(orders, sales, Partitioner.hash("o_orderkey"))
    # The probe side: a skewed order key may be cut across tasks, each reading that key's
    # orders whole; the sums downstream are per nation, so a cut order does no harm.
    graph.connect(lineitem, sales, Partitioner.hash("l_orderkey"), splittable=True)
    customers = customer_partitioner(data)
    if customers.is_broadcast:
        graph.connect(sales, by_customer, Partitioner.RESCALE)
    else:
        graph.connect(sales, by_customer, Partitioner.hash("o_custkey"), splittable=True)
    graph.connect(customer, by_customer, customers)
    graph.connect(by_customer, by_nation, Partitioner.hash("c_nationkey"))
    graph.connect(nation, by_nation, Partitioner.BROADCAST)
    graph.connect(by_nation, sink, Partitioner.FORWARD)
    return graph


def reference(data_dir: str | os.PathLike) -> pa.Table:
    """The same answer from pyarrow alone (no Spark, no Tidal), for checking the job."""
    data = _location(data_dir)

    def read(name: str, columns: list[str], filter=None) -> pa.Table:
        fs, path = storage.filesystem(storage.join(data, name))
        return ds.dataset(path, filesystem=fs).to_table(columns=columns, filter=filter)

    day = pc.field("o_orderdate")
    orders = read(
        "orders",
        ["o_orderkey", "o_custkey"],
        (day >= pa.scalar(DATE_FROM, pa.date32())) & (day < pa.scalar(DATE_TO, pa.date32())),
    )
    lines = read("lineitem", ["l_orderkey", "l_extendedprice", "l_discount"])
    lines = pa.table(
        {
            "l_orderkey": lines["l_orderkey"],
            "revenue": pc.multiply(lines["l_extendedprice"], pc.subtract(1.0, lines["l_discount"])),
        }
    )
    customer = read("customer", ["c_custkey", "c_nationkey"])
    nation = read("nation", ["n_nationkey", "n_name"])
    sales = lines.join(orders, "l_orderkey", "o_orderkey", join_type="inner")
    sales = sales.join(customer, "o_custkey", "c_custkey", join_type="inner")
    totals = sales.group_by("c_nationkey").aggregate([("revenue", "sum")])
    named = totals.join(nation, "c_nationkey", "n_nationkey", join_type="inner")
    result = pa.table({"nation": named["n_name"], "revenue": named["revenue_sum"]})
    return result.sort_by([("revenue", "descending"), ("nation", "ascending")])


def _print_result(table: pa.Table) -> None:
    print(f"\n{'nation':<16}{'revenue':>20}")
    for row in table.to_pylist():
        print(f"{row['nation']:<16}{row['revenue']:>20,.2f}")


def _print_decisions(result) -> None:
    print("\ndecided parallelism per vertex:")
    for name, vertex in result.vertices.items():
        chained = f"  (chained: {vertex.chain})" if vertex.chain else ""
        print(f"  {name:<22} {vertex.parallelism:>4}  {vertex.explanation}{chained}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=2.0, help="TPC-H scale factor")
    parser.add_argument(
        "--data",
        default=None,
        help="data directory or URL, e.g. s3://bucket/tpch (default: a per-scale "
        "folder in the temp dir)",
    )
    parser.add_argument(
        "--out",
        default=None,
        help="result directory or URL (default: DATA/result/revenue_by_nation)",
    )
    parser.add_argument(
        "--address", default=None, help="Ray cluster to join (default: start or join a local one)"
    )
    parser.add_argument(
        "--report",
        default=None,
        help="where to write the job's HTML report (default: a file named for "
        "the job under the temp dir's tidal-reports)",
    )
    add_option_flag(parser)
    args = parser.parse_args(argv)
    data = args.data or os.path.join(tempfile.gettempdir(), f"tidal-tpch-sf{args.scale:g}")
    out = args.out or storage.join(data, "result", "revenue_by_nation")

    from jobmanager import Client  # brings in Ray; building and checking the graph need neither

    generate(data, args.scale)
    client = Client(address=args.address)
    handle = client.submit(build(data, out), config=parse_options(args.options))
    result = handle.wait(progress=True)
    report = _write_report(handle, args.report)
    if result.status != "FINISHED":
        print(f"job {result.status.lower()}: {result.cause}", file=sys.stderr)
        print(f"report written to {report}", file=sys.stderr)
        return 1
    _print_result(read_result(out))
    _print_decisions(result)
    print(f"\nresult written to {out}")
    print(f"report written to {report} (or: tidal report {handle.job_id})")
    return 0


def _write_report(handle, path: str | None) -> str:
    if path is None:
        folder = os.path.join(tempfile.gettempdir(), "tidal-reports")
        os.makedirs(folder, exist_ok=True)
        return handle.report(os.path.join(folder, f"revenue_by_nation-{handle.job_id}.html"))
    return handle.report(path)


if __name__ == "__main__":
    sys.exit(main())
