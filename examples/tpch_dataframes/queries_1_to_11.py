"""TPC-H's queries 1 to 11 as PySpark DataFrame programs (the package's docstring says how
they are written)."""

from __future__ import annotations

import datetime

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .columns import Tables, date, discounted_price

__all__ = ["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "q11"]


def q1(spark: SparkSession, tables: Tables) -> DataFrame:
    """Pricing summary report: shipped by 1998-12-01 less 90 days."""
    lineitem = spark.read.parquet(tables["lineitem"])
    return (
        lineitem.where(F.col("l_shipdate") <= date("1998-09-02"))
        .groupBy("l_returnflag", "l_linestatus")
        .agg(
            F.sum("l_quantity").alias("sum_qty"),
            F.sum("l_extendedprice").alias("sum_base_price"),
            F.sum(discounted_price()).alias("sum_disc_price"),
            F.sum(discounted_price() * (1 + F.col("l_tax"))).alias("sum_charge"),
            F.avg("l_quantity").alias("avg_qty"),
            F.avg("l_extendedprice").alias("avg_price"),
            F.avg("l_discount").alias("avg_disc"),
            F.count("*").alias("count_order"),
        )
        .orderBy("l_returnflag", "l_linestatus")
    )


def q2(spark: SparkSession, tables: Tables) -> DataFrame:
    """Minimum cost supplier: size 15, type %BRASS, region EUROPE."""
    part = spark.read.parquet(tables["part"])
    supplier = spark.read.parquet(tables["supplier"])
    partsupp = spark.read.parquet(tables["partsupp"])
    nation = spark.read.parquet(tables["nation"])
    region = spark.read.parquet(tables["region"])

    europe = (
        region.where(F.col("r_name") == "EUROPE")
        .join(nation, F.col("r_regionkey") == F.col("n_regionkey"))
        .join(supplier, F.col("n_nationkey") == F.col("s_nationkey"))
        .join(partsupp, F.col("s_suppkey") == F.col("ps_suppkey"))
    )
    cheapest = europe.groupBy("ps_partkey").agg(F.min("ps_supplycost").alias("ps_supplycost"))
    brass = part.where((F.col("p_size") == 15) & F.col("p_type").like("%BRASS"))
    return (
        brass.join(europe, F.col("p_partkey") == F.col("ps_partkey"))
        .join(cheapest, on=["ps_partkey", "ps_supplycost"])
        .select(
            "s_acctbal",
            "s_name",
            "n_name",
            "p_partkey",
            "p_mfgr",
            "s_address",
            "s_phone",
            "s_comment",
        )
        .orderBy(F.col("s_acctbal").desc(), "n_name", "s_name", "p_partkey")
        .limit(100)
    )


def q3(spark: SparkSession, tables: Tables) -> DataFrame:
    """Shipping priority: segment BUILDING, date 1995-03-15."""
    customer = spark.read.parquet(tables["customer"])
    orders = spark.read.parquet(tables["orders"])
    lineitem = spark.read.parquet(tables["lineitem"])
    return (
        customer.where(F.col("c_mktsegment") == "BUILDING")
        .join(
            orders.where(F.col("o_orderdate") < date("1995-03-15")),
            F.col("c_custkey") == F.col("o_custkey"),
        )
        .join(
            lineitem.where(F.col("l_shipdate") > date("1995-03-15")),
            F.col("l_orderkey") == F.col("o_orderkey"),
        )
        .groupBy("l_orderkey", "o_orderdate", "o_shippriority")
        .agg(F.sum(discounted_price()).alias("revenue"))
        .select("l_orderkey", "revenue", "o_orderdate", "o_shippriority")
        .orderBy(F.col("revenue").desc(), "o_orderdate")
        .limit(10)
    )


def q4(spark: SparkSession, tables: Tables) -> DataFrame:
    """Order priority checking: the quarter from 1993-07-01, an order with a late line."""
    orders = spark.read.parquet(tables["orders"])
    lineitem = spark.read.parquet(tables["lineitem"])
    late = lineitem.where(F.col("l_commitdate") < F.col("l_receiptdate"))
    return (
        orders.where(
            (F.col("o_orderdate") >= date("1993-07-01"))
            & (F.col("o_orderdate") < date("1993-10-01"))
        )
        .join(late, F.col("l_orderkey") == F.col("o_orderkey"), "left_semi")
        .groupBy("o_orderpriority")
        .agg(F.count("*").alias("order_count"))
        .orderBy("o_orderpriority")
    )


def q5(spark: SparkSession, tables: Tables) -> DataFrame:
    """Local supplier volume: region ASIA, the year 1994."""
    customer = spark.read.parquet(tables["customer"])
    orders = spark.read.parquet(tables["orders"])
    lineitem = spark.read.parquet(tables["lineitem"])
    supplier = spark.read.parquet(tables["supplier"])
    nation = spark.read.parquet(tables["nation"])
    region = spark.read.parquet(tables["region"])
    return (
        region.where(F.col("r_name") == "ASIA")
        .join(nation, F.col("r_regionkey") == F.col("n_regionkey"))
        .join(customer, F.col("n_nationkey") == F.col("c_nationkey"))
        .join(
            orders.where(
                (F.col("o_orderdate") >= date("1994-01-01"))
                & (F.col("o_orderdate") < date("1995-01-01"))
            ),
            F.col("c_custkey") == F.col("o_custkey"),
        )
        .join(lineitem, F.col("l_orderkey") == F.col("o_orderkey"))
        .join(
            supplier,
            (F.col("l_suppkey") == F.col("s_suppkey"))
            & (F.col("c_nationkey") == F.col("s_nationkey")),
        )
        .groupBy("n_name")
        .agg(F.sum(discounted_price()).alias("revenue"))
        .orderBy(F.col("revenue").desc())
    )


def q6(spark: SparkSession, tables: Tables) -> DataFrame:
    """Forecasting revenue change: the year 1994, discount 0.06 +- 0.01, quantity < 24."""
    lineitem = spark.read.parquet(tables["lineitem"])
    return lineitem.where(
        (F.col("l_shipdate") >= date("1994-01-01"))
        & (F.col("l_shipdate") < date("1995-01-01"))
        & F.col("l_discount").between(0.05, 0.07)
        & (F.col("l_quantity") < 24)
    ).agg(F.sum(F.col("l_extendedprice") * F.col("l_discount")).alias("revenue"))


def q7(spark: SparkSession, tables: Tables) -> DataFrame:
    """Volume shipping: between FRANCE and GERMANY, 1995 and 1996."""
    supplier = spark.read.parquet(tables["supplier"])
    lineitem = spark.read.parquet(tables["lineitem"])
    orders = spark.read.parquet(tables["orders"])
    customer = spark.read.parquet(tables["customer"])
    nation = spark.read.parquet(tables["nation"])
    supp_nation = nation.select(
        F.col("n_nationkey").alias("supp_nationkey"), F.col("n_name").alias("supp_nation")
    )
    cust_nation = nation.select(
        F.col("n_nationkey").alias("cust_nationkey"), F.col("n_name").alias("cust_nation")
    )
    shipping = (
        lineitem.where(
            F.col("l_shipdate").between(datetime.date(1995, 1, 1), datetime.date(1996, 12, 31))
        )
        .join(supplier, F.col("s_suppkey") == F.col("l_suppkey"))
        .join(orders, F.col("o_orderkey") == F.col("l_orderkey"))
        .join(customer, F.col("c_custkey") == F.col("o_custkey"))
        .join(supp_nation, F.col("s_nationkey") == F.col("supp_nationkey"))
        .join(cust_nation, F.col("c_nationkey") == F.col("cust_nationkey"))
        .where(
            ((F.col("supp_nation") == "FRANCE") & (F.col("cust_nation") == "GERMANY"))
            | ((F.col("supp_nation") == "GERMANY") & (F.col("cust_nation") == "FRANCE"))
        )
        .select(
            "supp_nation",
            "cust_nation",
            F.year("l_shipdate").alias("l_year"),
            discounted_price().alias("volume"),
        )
    )
    return (
        shipping.groupBy("supp_nation", "cust_nation", "l_year")
        .agg(F.sum("volume").alias("revenue"))
        .orderBy("supp_nation", "cust_nation", "l_year")
    )


def q8(spark: SparkSession, tables: Tables) -> DataFrame:
    """National market share: BRAZIL in region AMERICA, type ECONOMY ANODIZED STEEL."""
    part = spark.read.parquet(tables["part"])
    supplier = spark.read.parquet(tables["supplier"])
    lineitem = spark.read.parquet(tables["lineitem"])
    orders = spark.read.parquet(tables["orders"])
    customer = spark.read.parquet(tables["customer"])
    nation = spark.read.parquet(tables["nation"])
    region = spark.read.parquet(tables["region"])
    # n1, the customer's nation (in the region); n2, the supplier's
    cust_nation = nation.select(
        F.col("n_nationkey").alias("cust_nationkey"), F.col("n_regionkey").alias("cust_regionkey")
    )
    supp_nation = nation.select(
        F.col("n_nationkey").alias("supp_nationkey"), F.col("n_name").alias("nation")
    )
    all_nations = (
        part.where(F.col("p_type") == "ECONOMY ANODIZED STEEL")
        .join(lineitem, F.col("p_partkey") == F.col("l_partkey"))
        .join(supplier, F.col("s_suppkey") == F.col("l_suppkey"))
        .join(
            orders.where(
                F.col("o_orderdate").between(datetime.date(1995, 1, 1), datetime.date(1996, 12, 31))
            ),
            F.col("l_orderkey") == F.col("o_orderkey"),
        )
        .join(customer, F.col("o_custkey") == F.col("c_custkey"))
        .join(cust_nation, F.col("c_nationkey") == F.col("cust_nationkey"))
        .join(
            region.where(F.col("r_name") == "AMERICA"),
            F.col("cust_regionkey") == F.col("r_regionkey"),
        )
        .join(supp_nation, F.col("s_nationkey") == F.col("supp_nationkey"))
        .select(F.year("o_orderdate").alias("o_year"), discounted_price().alias("volume"), "nation")
    )
    brazil = F.when(F.col("nation") == "BRAZIL", F.col("volume")).otherwise(0)
    return (
        all_nations.groupBy("o_year")
        .agg((F.sum(brazil) / F.sum("volume")).alias("mkt_share"))
        .orderBy("o_year")
    )


def q9(spark: SparkSession, tables: Tables) -> DataFrame:
    """Product type profit measure: part names with 'green'."""
    part = spark.read.parquet(tables["part"])
    supplier = spark.read.parquet(tables["supplier"])
    lineitem = spark.read.parquet(tables["lineitem"])
    partsupp = spark.read.parquet(tables["partsupp"])
    orders = spark.read.parquet(tables["orders"])
    nation = spark.read.parquet(tables["nation"])
    profit = (
        part.where(F.col("p_name").like("%green%"))
        .join(lineitem, F.col("p_partkey") == F.col("l_partkey"))
        .join(supplier, F.col("s_suppkey") == F.col("l_suppkey"))
        .join(
            partsupp,
            (F.col("ps_suppkey") == F.col("l_suppkey"))
            & (F.col("ps_partkey") == F.col("l_partkey")),
        )
        .join(orders, F.col("o_orderkey") == F.col("l_orderkey"))
        .join(nation, F.col("s_nationkey") == F.col("n_nationkey"))
        .select(
            F.col("n_name").alias("nation"),
            F.year("o_orderdate").alias("o_year"),
            (discounted_price() - F.col("ps_supplycost") * F.col("l_quantity")).alias("amount"),
        )
    )
    return (
        profit.groupBy("nation", "o_year")
        .agg(F.sum("amount").alias("sum_profit"))
        .orderBy("nation", F.col("o_year").desc())
    )


def q10(spark: SparkSession, tables: Tables) -> DataFrame:
    """Returned item reporting: the quarter from 1993-10-01."""
    customer = spark.read.parquet(tables["customer"])
    orders = spark.read.parquet(tables["orders"])
    lineitem = spark.read.parquet(tables["lineitem"])
    nation = spark.read.parquet(tables["nation"])
    return (
        orders.where(
            (F.col("o_orderdate") >= date("1993-10-01"))
            & (F.col("o_orderdate") < date("1994-01-01"))
        )
        .join(customer, F.col("c_custkey") == F.col("o_custkey"))
        .join(
            lineitem.where(F.col("l_returnflag") == "R"), F.col("l_orderkey") == F.col("o_orderkey")
        )
        .join(nation, F.col("c_nationkey") == F.col("n_nationkey"))
        .groupBy("c_custkey", "c_name", "c_acctbal", "c_phone", "n_name", "c_address", "c_comment")
        .agg(F.sum(discounted_price()).alias("revenue"))
        .select(
            "c_custkey",
            "c_name",
            "revenue",
            "c_acctbal",
            "n_name",
            "c_address",
            "c_phone",
            "c_comment",
        )
        .orderBy(F.col("revenue").desc())
        .limit(20)
    )


def q11(spark: SparkSession, tables: Tables) -> DataFrame:
    """Important stock identification: nation GERMANY, fraction 0.0001."""
    partsupp = spark.read.parquet(tables["partsupp"])
    supplier = spark.read.parquet(tables["supplier"])
    nation = spark.read.parquet(tables["nation"])
    german = (
        nation.where(F.col("n_name") == "GERMANY")
        .join(supplier, F.col("s_nationkey") == F.col("n_nationkey"))
        .join(partsupp, F.col("ps_suppkey") == F.col("s_suppkey"))
        .select("ps_partkey", (F.col("ps_supplycost") * F.col("ps_availqty")).alias("value"))
    )
    threshold = german.agg((F.sum("value") * 0.0001).alias("threshold"))
    return (
        german.groupBy("ps_partkey")
        .agg(F.sum("value").alias("value"))
        .crossJoin(threshold)
        .where(F.col("value") > F.col("threshold"))
        .select("ps_partkey", "value")
        .orderBy(F.col("value").desc())
    )
