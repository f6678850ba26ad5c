"""TPC-H's queries 12 to 22 as PySpark DataFrame programs (the package's docstring says how
they are written)."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from .columns import Tables, date, discounted_price

__all__ = ["q12", "q13", "q14", "q15", "q16", "q17", "q18", "q19", "q20", "q21", "q22"]


def q12(spark: SparkSession, tables: Tables) -> DataFrame:
    """Shipping modes and order priority: modes MAIL and SHIP, received in 1994."""
    orders = spark.read.parquet(tables["orders"])
    lineitem = spark.read.parquet(tables["lineitem"])
    high = F.col("o_orderpriority").isin("1-URGENT", "2-HIGH")
    return (
        lineitem.where(
            F.col("l_shipmode").isin("MAIL", "SHIP")
            & (F.col("l_commitdate") < F.col("l_receiptdate"))
            & (F.col("l_shipdate") < F.col("l_commitdate"))
            & (F.col("l_receiptdate") >= date("1994-01-01"))
            & (F.col("l_receiptdate") < date("1995-01-01"))
        )
        .join(orders, F.col("o_orderkey") == F.col("l_orderkey"))
        .groupBy("l_shipmode")
        .agg(
            F.sum(F.when(high, 1).otherwise(0)).alias("high_line_count"),
            F.sum(F.when(~high, 1).otherwise(0)).alias("low_line_count"),
        )
        .orderBy("l_shipmode")
    )


def q13(spark: SparkSession, tables: Tables) -> DataFrame:
    """Customer distribution: order comments without 'special ... requests'."""
    customer = spark.read.parquet(tables["customer"])
    orders = spark.read.parquet(tables["orders"])
    c_orders = (
        customer.join(
            orders,
            (F.col("c_custkey") == F.col("o_custkey"))
            & ~F.col("o_comment").like("%special%requests%"),
            "left",
        )
        .groupBy("c_custkey")
        .agg(F.count("o_orderkey").alias("c_count"))
    )
    return (
        c_orders.groupBy("c_count")
        .agg(F.count("*").alias("custdist"))
        .orderBy(F.col("custdist").desc(), F.col("c_count").desc())
    )


def q14(spark: SparkSession, tables: Tables) -> DataFrame:
    """Promotion effect: the month from 1995-09-01."""
    lineitem = spark.read.parquet(tables["lineitem"])
    part = spark.read.parquet(tables["part"])
    promo = F.when(F.col("p_type").like("PROMO%"), discounted_price()).otherwise(0)
    return (
        lineitem.where(
            (F.col("l_shipdate") >= date("1995-09-01")) & (F.col("l_shipdate") < date("1995-10-01"))
        )
        .join(part, F.col("l_partkey") == F.col("p_partkey"))
        .agg((100.00 * F.sum(promo) / F.sum(discounted_price())).alias("promo_revenue"))
    )


def q15(spark: SparkSession, tables: Tables) -> DataFrame:
    """Top supplier: the quarter from 1996-01-01."""
    lineitem = spark.read.parquet(tables["lineitem"])
    supplier = spark.read.parquet(tables["supplier"])
    revenue = (
        lineitem.where(
            (F.col("l_shipdate") >= date("1996-01-01")) & (F.col("l_shipdate") < date("1996-04-01"))
        )
        .groupBy(F.col("l_suppkey").alias("supplier_no"))
        .agg(F.sum(discounted_price()).alias("total_revenue"))
    )
    top = revenue.agg(F.max("total_revenue").alias("total_revenue"))
    return (
        supplier.join(revenue, F.col("s_suppkey") == F.col("supplier_no"))
        .join(top, on="total_revenue")
        .select("s_suppkey", "s_name", "s_address", "s_phone", "total_revenue")
        .orderBy("s_suppkey")
    )


def q16(spark: SparkSession, tables: Tables) -> DataFrame:
    """Parts/supplier relationship: not Brand#45, not MEDIUM POLISHED, eight sizes."""
    partsupp = spark.read.parquet(tables["partsupp"])
    part = spark.read.parquet(tables["part"])
    supplier = spark.read.parquet(tables["supplier"])
    complained = supplier.where(F.col("s_comment").like("%Customer%Complaints%"))
    return (
        part.where(
            (F.col("p_brand") != "Brand#45")
            & ~F.col("p_type").like("MEDIUM POLISHED%")
            & F.col("p_size").isin(49, 14, 23, 45, 19, 3, 36, 9)
        )
        .join(partsupp, F.col("p_partkey") == F.col("ps_partkey"))
        .join(complained, F.col("ps_suppkey") == F.col("s_suppkey"), "left_anti")
        .groupBy("p_brand", "p_type", "p_size")
        .agg(F.countDistinct("ps_suppkey").alias("supplier_cnt"))
        .orderBy(F.col("supplier_cnt").desc(), "p_brand", "p_type", "p_size")
    )


def q17(spark: SparkSession, tables: Tables) -> DataFrame:
    """Small-quantity-order revenue: Brand#23, container MED BOX."""
    lineitem = spark.read.parquet(tables["lineitem"])
    part = spark.read.parquet(tables["part"])
    small = lineitem.groupBy("l_partkey").agg((0.2 * F.avg("l_quantity")).alias("small_quantity"))
    return (
        part.where((F.col("p_brand") == "Brand#23") & (F.col("p_container") == "MED BOX"))
        .join(lineitem, F.col("p_partkey") == F.col("l_partkey"))
        .join(small, on="l_partkey")
        .where(F.col("l_quantity") < F.col("small_quantity"))
        .agg((F.sum("l_extendedprice") / 7.0).alias("avg_yearly"))
    )


def q18(spark: SparkSession, tables: Tables) -> DataFrame:
    """Large volume customer: orders of more than 300 units."""
    customer = spark.read.parquet(tables["customer"])
    orders = spark.read.parquet(tables["orders"])
    lineitem = spark.read.parquet(tables["lineitem"])
    large = (
        lineitem.groupBy("l_orderkey")
        .agg(F.sum("l_quantity").alias("sum_quantity"))
        .where(F.col("sum_quantity") > 300)
        .select(F.col("l_orderkey").alias("large_orderkey"))
    )
    return (
        orders.join(large, F.col("o_orderkey") == F.col("large_orderkey"), "left_semi")
        .join(customer, F.col("c_custkey") == F.col("o_custkey"))
        .join(lineitem, F.col("o_orderkey") == F.col("l_orderkey"))
        .groupBy("c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice")
        .agg(F.sum("l_quantity").alias("sum(l_quantity)"))  # the SQL text leaves it unnamed
        .orderBy(F.col("o_totalprice").desc(), "o_orderdate")
        .limit(100)
    )


def q19(spark: SparkSession, tables: Tables) -> DataFrame:
    """Discounted revenue: three brands, containers, quantities and sizes, by air in person."""
    lineitem = spark.read.parquet(tables["lineitem"])
    part = spark.read.parquet(tables["part"])

    def kind(brand: str, containers: list[str], quantity: int, size: int) -> Column:
        return (
            (F.col("p_brand") == brand)
            & F.col("p_container").isin(*containers)
            & F.col("l_quantity").between(quantity, quantity + 10)
            & F.col("p_size").between(1, size)
        )

    return (
        lineitem.where(
            F.col("l_shipmode").isin("AIR", "AIR REG")
            & (F.col("l_shipinstruct") == "DELIVER IN PERSON")
        )
        .join(part, F.col("p_partkey") == F.col("l_partkey"))
        .where(
            kind("Brand#12", ["SM CASE", "SM BOX", "SM PACK", "SM PKG"], 1, 5)
            | kind("Brand#23", ["MED BAG", "MED BOX", "MED PKG", "MED PACK"], 10, 10)
            | kind("Brand#34", ["LG CASE", "LG BOX", "LG PACK", "LG PKG"], 20, 15)
        )
        .agg(F.sum(discounted_price()).alias("revenue"))
    )


def q20(spark: SparkSession, tables: Tables) -> DataFrame:
    """Potential part promotion: parts named forest%, shipped in 1994, nation CANADA."""
    supplier = spark.read.parquet(tables["supplier"])
    nation = spark.read.parquet(tables["nation"])
    partsupp = spark.read.parquet(tables["partsupp"])
    part = spark.read.parquet(tables["part"])
    lineitem = spark.read.parquet(tables["lineitem"])
    shipped = (
        lineitem.where(
            (F.col("l_shipdate") >= date("1994-01-01")) & (F.col("l_shipdate") < date("1995-01-01"))
        )
        .groupBy("l_partkey", "l_suppkey")
        .agg((0.5 * F.sum("l_quantity")).alias("half_quantity"))
    )
    excess = (
        partsupp.join(
            part.where(F.col("p_name").like("forest%")),
            F.col("ps_partkey") == F.col("p_partkey"),
            "left_semi",
        )
        .join(
            shipped,
            (F.col("l_partkey") == F.col("ps_partkey"))
            & (F.col("l_suppkey") == F.col("ps_suppkey")),
        )
        .where(F.col("ps_availqty") > F.col("half_quantity"))
    )
    return (
        supplier.join(excess, F.col("s_suppkey") == F.col("ps_suppkey"), "left_semi")
        .join(
            nation.where(F.col("n_name") == "CANADA"), F.col("s_nationkey") == F.col("n_nationkey")
        )
        .select("s_name", "s_address")
        .orderBy("s_name")
    )


def q21(spark: SparkSession, tables: Tables) -> DataFrame:
    """Suppliers who kept orders waiting: nation SAUDI ARABIA."""
    supplier = spark.read.parquet(tables["supplier"])
    lineitem = spark.read.parquet(tables["lineitem"])
    orders = spark.read.parquet(tables["orders"])
    nation = spark.read.parquet(tables["nation"])
    late = F.col("l_receiptdate") > F.col("l_commitdate")
    # l2: any line of the order; l3: its late lines -- each from another supplier than l1's
    others = lineitem.select(
        F.col("l_orderkey").alias("l2_orderkey"), F.col("l_suppkey").alias("l2_suppkey")
    )
    others_late = lineitem.where(late).select(
        F.col("l_orderkey").alias("l3_orderkey"), F.col("l_suppkey").alias("l3_suppkey")
    )
    return (
        lineitem.where(late)
        .join(supplier, F.col("s_suppkey") == F.col("l_suppkey"))
        .join(
            orders.where(F.col("o_orderstatus") == "F"), F.col("o_orderkey") == F.col("l_orderkey")
        )
        .join(
            nation.where(F.col("n_name") == "SAUDI ARABIA"),
            F.col("s_nationkey") == F.col("n_nationkey"),
        )
        .join(
            others,
            (F.col("l2_orderkey") == F.col("l_orderkey"))
            & (F.col("l2_suppkey") != F.col("l_suppkey")),
            "left_semi",
        )
        .join(
            others_late,
            (F.col("l3_orderkey") == F.col("l_orderkey"))
            & (F.col("l3_suppkey") != F.col("l_suppkey")),
            "left_anti",
        )
        .groupBy("s_name")
        .agg(F.count("*").alias("numwait"))
        .orderBy(F.col("numwait").desc(), "s_name")
        .limit(100)
    )


def q22(spark: SparkSession, tables: Tables) -> DataFrame:
    """Global sales opportunity: seven country codes, above-average balances, no orders."""
    customer = spark.read.parquet(tables["customer"])
    orders = spark.read.parquet(tables["orders"])
    codes = ("13", "31", "23", "29", "30", "18", "17")
    in_codes = customer.withColumn("cntrycode", F.substring("c_phone", 1, 2)).where(
        F.col("cntrycode").isin(*codes)
    )
    average = in_codes.where(F.col("c_acctbal") > 0.00).agg(F.avg("c_acctbal").alias("avg_acctbal"))
    return (
        in_codes.crossJoin(average)
        .where(F.col("c_acctbal") > F.col("avg_acctbal"))
        .join(orders, F.col("o_custkey") == F.col("c_custkey"), "left_anti")
        .groupBy("cntrycode")
        .agg(F.count("*").alias("numcust"), F.sum("c_acctbal").alias("totacctbal"))
        .orderBy("cntrycode")
    )
