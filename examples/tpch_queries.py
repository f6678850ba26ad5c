"""TPC-H Q1 and Q3 three ways: as Tidal jobs, in PySpark alone, and in pyarrow for checking.

The Tidal jobs split each query the way a distributed planner would -- scan, filter and a
partial aggregate in every source task; a hash exchange on the group keys; the final aggregate
-- and set no parallelism but one: the vertex that orders the whole result runs as one task,
as a global order needs; the adaptive scheduler sizes every other vertex from its bytes. The
PySpark versions are the queries as a Spark user would write them, planned by Spark itself.
The pyarrow versions share no code with either. They stay as examples of the JobGraph API
(and ``benchmarks/tpch_shape.py`` measures Q1's job shape); ``benchmarks/tpch.py`` races
Tidal's SQL front end, which plans all 22 queries from their text, against PySpark.

Q3's ties on revenue and order date are broken by order key in all three, so "top 10" is one
answer rather than several.
"""

from __future__ import annotations

import datetime
import os

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobmanager import FileSource, JobGraph, ParquetSink, Partitioner, spark

__all__ = [
    "Q1_COLUMNS",
    "Q3_COLUMNS",
    "q1",
    "q3",
    "reference_q1",
    "reference_q3",
    "spark_q1",
    "spark_q3",
]

Q1_SHIP_CUTOFF = datetime.date(1998, 12, 1) - datetime.timedelta(days=90)
Q1_KEYS = ("l_returnflag", "l_linestatus")
Q1_COLUMNS = (
    *Q1_KEYS,
    "sum_qty",
    "sum_base_price",
    "sum_disc_price",
    "sum_charge",
    "avg_qty",
    "avg_price",
    "avg_disc",
    "count_order",
)
_Q1_PARTIALS = (
    "sum_qty",
    "sum_base_price",
    "sum_disc_price",
    "sum_charge",
    "sum_disc",
    "count_order",
)

Q3_SEGMENT = "BUILDING"
Q3_DATE = datetime.date(1995, 3, 15)
Q3_GROUP = ("l_orderkey", "o_orderdate", "o_shippriority")
Q3_COLUMNS = ("l_orderkey", "revenue", "o_orderdate", "o_shippriority")
Q3_LIMIT = 10


def _table(data_dir: str | os.PathLike, name: str) -> str:
    return os.path.join(os.path.abspath(data_dir), name)


# --- Q1: pricing summary report ---------------------------------------------------------------


def q1_partial(lineitem: DataFrame) -> DataFrame:
    """Per source task: the lines shipped by the cutoff, summed per (flag, status)."""
    disc_price = F.col("l_extendedprice") * (1 - F.col("l_discount"))
    return (
        lineitem.where(F.col("l_shipdate") <= F.lit(Q1_SHIP_CUTOFF))
        .groupBy(*Q1_KEYS)
        .agg(
            F.sum("l_quantity").alias("sum_qty"),
            F.sum("l_extendedprice").alias("sum_base_price"),
            F.sum(disc_price).alias("sum_disc_price"),
            F.sum(disc_price * (1 + F.col("l_tax"))).alias("sum_charge"),
            F.sum("l_discount").alias("sum_disc"),
            F.count(F.lit(1)).alias("count_order"),
        )
    )


def q1_final(partials: DataFrame) -> DataFrame:
    """The partial sums of one (flag, status) meet here; averages are sums over the count.

    One task (the job sets it: a global order needs one), so its order is the result's order;
    its input is a few rows per source task."""
    totals = partials.groupBy(*Q1_KEYS).agg(*[F.sum(c).alias(c) for c in _Q1_PARTIALS])
    count = F.col("count_order")
    return totals.select(
        *Q1_KEYS,
        "sum_qty",
        "sum_base_price",
        "sum_disc_price",
        "sum_charge",
        (F.col("sum_qty") / count).alias("avg_qty"),
        (F.col("sum_base_price") / count).alias("avg_price"),
        (F.col("sum_disc") / count).alias("avg_disc"),
        "count_order",
    ).orderBy(*Q1_KEYS)


def q1(data_dir: str | os.PathLike, out_dir: str | os.PathLike) -> JobGraph:
    graph = JobGraph("tpch-q1")
    lineitem = graph.add_vertex(
        "lineitem",
        sources=[
            FileSource(
                _table(data_dir, "lineitem"),
                columns=[
                    "l_quantity",
                    "l_extendedprice",
                    "l_discount",
                    "l_tax",
                    "l_returnflag",
                    "l_linestatus",
                    "l_shipdate",
                ],
            )
        ],
        operator=spark(q1_partial),
    )
    summary = graph.add_vertex("pricing_summary", parallelism=1, operator=spark(q1_final))
    sink = graph.add_vertex("sink", operator=ParquetSink(os.fspath(out_dir), overwrite=True))
    graph.connect(lineitem, summary, Partitioner.hash(*Q1_KEYS))
    graph.connect(summary, sink, Partitioner.FORWARD)
    return graph


def spark_q1(session: SparkSession, data_dir: str | os.PathLike) -> DataFrame:
    lineitem = session.read.parquet(_table(data_dir, "lineitem"))
    disc_price = F.col("l_extendedprice") * (1 - F.col("l_discount"))
    return (
        lineitem.where(F.col("l_shipdate") <= F.lit(Q1_SHIP_CUTOFF))
        .groupBy(*Q1_KEYS)
        .agg(
            F.sum("l_quantity").alias("sum_qty"),
            F.sum("l_extendedprice").alias("sum_base_price"),
            F.sum(disc_price).alias("sum_disc_price"),
            F.sum(disc_price * (1 + F.col("l_tax"))).alias("sum_charge"),
            F.avg("l_quantity").alias("avg_qty"),
            F.avg("l_extendedprice").alias("avg_price"),
            F.avg("l_discount").alias("avg_disc"),
            F.count(F.lit(1)).alias("count_order"),
        )
        .orderBy(*Q1_KEYS)
    )


def reference_q1(data_dir: str | os.PathLike) -> pa.Table:
    lineitem = ds.dataset(_table(data_dir, "lineitem")).to_table(
        filter=pc.field("l_shipdate") <= pa.scalar(Q1_SHIP_CUTOFF, pa.date32())
    )
    disc_price = pc.multiply(lineitem["l_extendedprice"], pc.subtract(1.0, lineitem["l_discount"]))
    lineitem = lineitem.append_column("disc_price", disc_price).append_column(
        "charge", pc.multiply(disc_price, pc.add(1.0, lineitem["l_tax"]))
    )
    grouped = lineitem.group_by(list(Q1_KEYS)).aggregate(
        [
            ("l_quantity", "sum"),
            ("l_extendedprice", "sum"),
            ("disc_price", "sum"),
            ("charge", "sum"),
            ("l_quantity", "mean"),
            ("l_extendedprice", "mean"),
            ("l_discount", "mean"),
            ([], "count_all"),
        ]
    )
    names = {
        "l_quantity_sum": "sum_qty",
        "l_extendedprice_sum": "sum_base_price",
        "disc_price_sum": "sum_disc_price",
        "charge_sum": "sum_charge",
        "l_quantity_mean": "avg_qty",
        "l_extendedprice_mean": "avg_price",
        "l_discount_mean": "avg_disc",
        "count_all": "count_order",
    }
    grouped = grouped.rename_columns([names.get(c, c) for c in grouped.column_names])
    return grouped.select(list(Q1_COLUMNS)).sort_by([(k, "ascending") for k in Q1_KEYS])


# --- Q3: shipping priority ---------------------------------------------------------------------


def q3_customers(customer: DataFrame) -> DataFrame:
    return customer.where(F.col("c_mktsegment") == Q3_SEGMENT).select("c_custkey")


def q3_orders(orders: DataFrame) -> DataFrame:
    return orders.where(F.col("o_orderdate") < F.lit(Q3_DATE)).select(
        "o_orderkey", "o_custkey", "o_orderdate", "o_shippriority"
    )


def q3_order_revenue(lineitem: DataFrame, orders: DataFrame, customers: DataFrame) -> DataFrame:
    """Per lineitem task: its lines shipped after the date, joined with the segment's orders
    placed before it, summed per order. The orders and customers come whole to every task
    (Spark's adaptive plan, at scale 1, broadcasts the same side: their join, 146,000 rows);
    the hint says so to this task's Spark, which plans without adaptive execution and would
    otherwise sort and merge. An order's lines can fall into two tasks' files, so these sums
    are partial."""
    lines = lineitem.where(F.col("l_shipdate") > F.lit(Q3_DATE))
    mine = orders.join(customers, orders.o_custkey == customers.c_custkey, "left_semi")
    joined = lines.join(F.broadcast(mine), lines.l_orderkey == mine.o_orderkey)
    volume = F.col("l_extendedprice") * (1 - F.col("l_discount"))
    return joined.groupBy(*Q3_GROUP).agg(F.sum(volume).alias("revenue"))


def q3_top_orders(partials: DataFrame) -> DataFrame:
    """Every task's partial sums meet here, in one task (the job sets it: the top 10 of all),
    a few per order."""
    revenue = partials.groupBy(*Q3_GROUP).agg(F.sum("revenue").alias("revenue"))
    return (
        revenue.orderBy(F.col("revenue").desc(), "o_orderdate", "l_orderkey")
        .limit(Q3_LIMIT)
        .select(*Q3_COLUMNS)
    )


def q3(data_dir: str | os.PathLike, out_dir: str | os.PathLike) -> JobGraph:
    """Q3 as Spark's adaptive execution ends up running it at scale 1: the small sides joined
    into the lineitem scan, sent whole, so the 3.2 million shipped lines never cross an
    exchange. At scales where the segment's orders are hundreds of megabytes, hash both
    sides on the order key instead."""
    graph = JobGraph("tpch-q3")
    customer = graph.add_vertex(
        "customer",
        sources=[FileSource(_table(data_dir, "customer"), columns=["c_custkey", "c_mktsegment"])],
        operator=spark(q3_customers),
    )
    orders = graph.add_vertex(
        "orders",
        sources=[
            FileSource(
                _table(data_dir, "orders"),
                columns=["o_orderkey", "o_custkey", "o_orderdate", "o_shippriority"],
            )
        ],
        operator=spark(q3_orders),
    )
    lineitem = graph.add_vertex(
        "lineitem",
        sources=[
            FileSource(
                _table(data_dir, "lineitem"),
                columns=["l_orderkey", "l_extendedprice", "l_discount", "l_shipdate"],
            )
        ],
        operator=spark(q3_order_revenue),
    )
    top = graph.add_vertex("top_orders", parallelism=1, operator=spark(q3_top_orders))
    sink = graph.add_vertex("sink", operator=ParquetSink(os.fspath(out_dir), overwrite=True))
    graph.connect(orders, lineitem, Partitioner.BROADCAST)
    graph.connect(customer, lineitem, Partitioner.BROADCAST)
    graph.connect(lineitem, top, Partitioner.REBALANCE)
    graph.connect(top, sink, Partitioner.FORWARD)
    return graph


def spark_q3(
    session: SparkSession, data_dir: str | os.PathLike, *, as_the_job: bool = False
) -> DataFrame:
    """``as_the_job``: the plan Tidal's job runs, the joined customers and orders broadcast
    into the lineitem scan from the start (a hint), where adaptive execution reaches that join
    only after shuffling the lines; the same result."""
    customer = session.read.parquet(_table(data_dir, "customer"))
    orders = session.read.parquet(_table(data_dir, "orders"))
    lineitem = session.read.parquet(_table(data_dir, "lineitem"))
    small = customer.where(F.col("c_mktsegment") == Q3_SEGMENT).join(
        orders.where(F.col("o_orderdate") < F.lit(Q3_DATE)),
        F.col("c_custkey") == F.col("o_custkey"),
    )
    joined = (F.broadcast(small) if as_the_job else small).join(
        lineitem.where(F.col("l_shipdate") > F.lit(Q3_DATE)),
        F.col("l_orderkey") == F.col("o_orderkey"),
    )
    revenue = joined.groupBy(*Q3_GROUP).agg(
        F.sum(F.col("l_extendedprice") * (1 - F.col("l_discount"))).alias("revenue")
    )
    return (
        revenue.orderBy(F.col("revenue").desc(), "o_orderdate", "l_orderkey")
        .limit(Q3_LIMIT)
        .select(*Q3_COLUMNS)
    )


def reference_q3(data_dir: str | os.PathLike) -> pa.Table:
    customer = ds.dataset(_table(data_dir, "customer")).to_table(
        columns=["c_custkey"], filter=pc.field("c_mktsegment") == Q3_SEGMENT
    )
    orders = ds.dataset(_table(data_dir, "orders")).to_table(
        columns=["o_orderkey", "o_custkey", "o_orderdate", "o_shippriority"],
        filter=pc.field("o_orderdate") < pa.scalar(Q3_DATE, pa.date32()),
    )
    lineitem = ds.dataset(_table(data_dir, "lineitem")).to_table(
        columns=["l_orderkey", "l_extendedprice", "l_discount"],
        filter=pc.field("l_shipdate") > pa.scalar(Q3_DATE, pa.date32()),
    )
    lineitem = lineitem.append_column(
        "volume", pc.multiply(lineitem["l_extendedprice"], pc.subtract(1.0, lineitem["l_discount"]))
    )
    orders = orders.join(customer, "o_custkey", "c_custkey", join_type="left semi")
    joined = lineitem.join(orders, "l_orderkey", "o_orderkey", join_type="inner")
    revenue = joined.group_by(list(Q3_GROUP)).aggregate([("volume", "sum")])
    revenue = revenue.rename_columns(
        ["revenue" if c == "volume_sum" else c for c in revenue.column_names]
    )
    ordered = revenue.sort_by(
        [("revenue", "descending"), ("o_orderdate", "ascending"), ("l_orderkey", "ascending")]
    )
    return ordered.slice(0, Q3_LIMIT).select(list(Q3_COLUMNS))
