"""TPC-H's 22 queries as a PySpark user writes them: DataFrame programs, not SQL text.

Each query reads its tables with ``spark.read.parquet`` and is built from the common DataFrame
API -- ``where``, ``join``, ``groupBy().agg()``, ``select``, ``orderBy``, ``limit`` and the
``F.*`` functions -- with the specification's validation parameters (the constants of the query
texts DuckDB's TPC-H extension gives, ``examples.tpch_dbgen.queries()``), and each gives that
text's columns, names, order and limit. A subquery becomes what a DataFrame user writes for it:
an aggregate joined back (Q2's cheapest supply cost per part, Q17's average quantity per part,
Q20's shipped quantity per part and supplier, Q15's top revenue joined on its value), a
one-row aggregate cross-joined (Q11's threshold, Q22's average balance), ``EXISTS`` and ``IN`` a ``left_semi`` join, ``NOT EXISTS`` and
``NOT IN`` a ``left_anti`` one (Q4, Q16, Q18, Q20, Q21, Q22). The self-joins (Q7's and Q8's two
nations, Q21's three lineitems) rename the second copy's columns, so no name is ambiguous; so
does Q18's set of large orders, whose key would otherwise be ``l_orderkey`` twice. Ranges of
dates are ``between`` two ``datetime.date`` values, as sqlframe (4.10) cannot alias a literal
column inside ``between``.

The module is plain PySpark, nothing in it Tidal's: it is how unchanged DataFrame programs are
shown to give PySpark's answers on Tidal, run there through a PySpark-compatible session that
writes SQL (sqlframe) -- and checked under PySpark itself against DuckDB's answers to the query
texts (``tests/sql/test_tpch_dataframes.py``).

    df = run(spark, {"lineitem": "/data/lineitem", ...}, 1)   # or QUERIES[1](spark, tables)
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

__all__ = ["QUERIES", "run"] + [f"q{n}" for n in range(1, 23)]

Tables = Mapping[str, str]


def _date(text: str) -> Column:
    return F.lit(datetime.date.fromisoformat(text))


def _revenue() -> Column:
    """A line's discounted price, ``l_extendedprice * (1 - l_discount)``."""
    return F.col("l_extendedprice") * (1 - F.col("l_discount"))


def q1(spark: SparkSession, tables: Tables) -> DataFrame:
    """Pricing summary report: shipped by 1998-12-01 less 90 days."""
    lineitem = spark.read.parquet(tables["lineitem"])
    return (
        lineitem.where(F.col("l_shipdate") <= _date("1998-09-02"))
        .groupBy("l_returnflag", "l_linestatus")
        .agg(
            F.sum("l_quantity").alias("sum_qty"),
            F.sum("l_extendedprice").alias("sum_base_price"),
            F.sum(_revenue()).alias("sum_disc_price"),
            F.sum(_revenue() * (1 + F.col("l_tax"))).alias("sum_charge"),
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
        .select("s_acctbal", "s_name", "n_name", "p_partkey", "p_mfgr", "s_address", "s_phone",
                "s_comment")
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
        .join(orders.where(F.col("o_orderdate") < _date("1995-03-15")),
              F.col("c_custkey") == F.col("o_custkey"))
        .join(lineitem.where(F.col("l_shipdate") > _date("1995-03-15")),
              F.col("l_orderkey") == F.col("o_orderkey"))
        .groupBy("l_orderkey", "o_orderdate", "o_shippriority")
        .agg(F.sum(_revenue()).alias("revenue"))
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
        orders.where((F.col("o_orderdate") >= _date("1993-07-01"))
                     & (F.col("o_orderdate") < _date("1993-10-01")))
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
        .join(orders.where((F.col("o_orderdate") >= _date("1994-01-01"))
                           & (F.col("o_orderdate") < _date("1995-01-01"))),
              F.col("c_custkey") == F.col("o_custkey"))
        .join(lineitem, F.col("l_orderkey") == F.col("o_orderkey"))
        .join(supplier, (F.col("l_suppkey") == F.col("s_suppkey"))
              & (F.col("c_nationkey") == F.col("s_nationkey")))
        .groupBy("n_name")
        .agg(F.sum(_revenue()).alias("revenue"))
        .orderBy(F.col("revenue").desc())
    )


def q6(spark: SparkSession, tables: Tables) -> DataFrame:
    """Forecasting revenue change: the year 1994, discount 0.06 +- 0.01, quantity < 24."""
    lineitem = spark.read.parquet(tables["lineitem"])
    return (
        lineitem.where((F.col("l_shipdate") >= _date("1994-01-01"))
                       & (F.col("l_shipdate") < _date("1995-01-01"))
                       & F.col("l_discount").between(0.05, 0.07)
                       & (F.col("l_quantity") < 24))
        .agg(F.sum(F.col("l_extendedprice") * F.col("l_discount")).alias("revenue"))
    )


def q7(spark: SparkSession, tables: Tables) -> DataFrame:
    """Volume shipping: between FRANCE and GERMANY, 1995 and 1996."""
    supplier = spark.read.parquet(tables["supplier"])
    lineitem = spark.read.parquet(tables["lineitem"])
    orders = spark.read.parquet(tables["orders"])
    customer = spark.read.parquet(tables["customer"])
    nation = spark.read.parquet(tables["nation"])
    supp_nation = nation.select(F.col("n_nationkey").alias("supp_nationkey"),
                                F.col("n_name").alias("supp_nation"))
    cust_nation = nation.select(F.col("n_nationkey").alias("cust_nationkey"),
                                F.col("n_name").alias("cust_nation"))
    shipping = (
        lineitem.where(F.col("l_shipdate").between(datetime.date(1995, 1, 1),
                                                   datetime.date(1996, 12, 31)))
        .join(supplier, F.col("s_suppkey") == F.col("l_suppkey"))
        .join(orders, F.col("o_orderkey") == F.col("l_orderkey"))
        .join(customer, F.col("c_custkey") == F.col("o_custkey"))
        .join(supp_nation, F.col("s_nationkey") == F.col("supp_nationkey"))
        .join(cust_nation, F.col("c_nationkey") == F.col("cust_nationkey"))
        .where(((F.col("supp_nation") == "FRANCE") & (F.col("cust_nation") == "GERMANY"))
               | ((F.col("supp_nation") == "GERMANY") & (F.col("cust_nation") == "FRANCE")))
        .select("supp_nation", "cust_nation", F.year("l_shipdate").alias("l_year"),
                _revenue().alias("volume"))
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
    cust_nation = nation.select(F.col("n_nationkey").alias("cust_nationkey"),
                                F.col("n_regionkey").alias("cust_regionkey"))
    supp_nation = nation.select(F.col("n_nationkey").alias("supp_nationkey"),
                                F.col("n_name").alias("nation"))
    all_nations = (
        part.where(F.col("p_type") == "ECONOMY ANODIZED STEEL")
        .join(lineitem, F.col("p_partkey") == F.col("l_partkey"))
        .join(supplier, F.col("s_suppkey") == F.col("l_suppkey"))
        .join(orders.where(F.col("o_orderdate").between(datetime.date(1995, 1, 1),
                                                        datetime.date(1996, 12, 31))),
              F.col("l_orderkey") == F.col("o_orderkey"))
        .join(customer, F.col("o_custkey") == F.col("c_custkey"))
        .join(cust_nation, F.col("c_nationkey") == F.col("cust_nationkey"))
        .join(region.where(F.col("r_name") == "AMERICA"),
              F.col("cust_regionkey") == F.col("r_regionkey"))
        .join(supp_nation, F.col("s_nationkey") == F.col("supp_nationkey"))
        .select(F.year("o_orderdate").alias("o_year"), _revenue().alias("volume"), "nation")
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
        .join(partsupp, (F.col("ps_suppkey") == F.col("l_suppkey"))
              & (F.col("ps_partkey") == F.col("l_partkey")))
        .join(orders, F.col("o_orderkey") == F.col("l_orderkey"))
        .join(nation, F.col("s_nationkey") == F.col("n_nationkey"))
        .select(F.col("n_name").alias("nation"), F.year("o_orderdate").alias("o_year"),
                (_revenue() - F.col("ps_supplycost") * F.col("l_quantity")).alias("amount"))
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
        orders.where((F.col("o_orderdate") >= _date("1993-10-01"))
                     & (F.col("o_orderdate") < _date("1994-01-01")))
        .join(customer, F.col("c_custkey") == F.col("o_custkey"))
        .join(lineitem.where(F.col("l_returnflag") == "R"),
              F.col("l_orderkey") == F.col("o_orderkey"))
        .join(nation, F.col("c_nationkey") == F.col("n_nationkey"))
        .groupBy("c_custkey", "c_name", "c_acctbal", "c_phone", "n_name", "c_address",
                 "c_comment")
        .agg(F.sum(_revenue()).alias("revenue"))
        .select("c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address",
                "c_phone", "c_comment")
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


def q12(spark: SparkSession, tables: Tables) -> DataFrame:
    """Shipping modes and order priority: modes MAIL and SHIP, received in 1994."""
    orders = spark.read.parquet(tables["orders"])
    lineitem = spark.read.parquet(tables["lineitem"])
    high = F.col("o_orderpriority").isin("1-URGENT", "2-HIGH")
    return (
        lineitem.where(F.col("l_shipmode").isin("MAIL", "SHIP")
                       & (F.col("l_commitdate") < F.col("l_receiptdate"))
                       & (F.col("l_shipdate") < F.col("l_commitdate"))
                       & (F.col("l_receiptdate") >= _date("1994-01-01"))
                       & (F.col("l_receiptdate") < _date("1995-01-01")))
        .join(orders, F.col("o_orderkey") == F.col("l_orderkey"))
        .groupBy("l_shipmode")
        .agg(F.sum(F.when(high, 1).otherwise(0)).alias("high_line_count"),
             F.sum(F.when(~high, 1).otherwise(0)).alias("low_line_count"))
        .orderBy("l_shipmode")
    )


def q13(spark: SparkSession, tables: Tables) -> DataFrame:
    """Customer distribution: order comments without 'special ... requests'."""
    customer = spark.read.parquet(tables["customer"])
    orders = spark.read.parquet(tables["orders"])
    c_orders = (
        customer.join(orders, (F.col("c_custkey") == F.col("o_custkey"))
                      & ~F.col("o_comment").like("%special%requests%"), "left")
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
    promo = F.when(F.col("p_type").like("PROMO%"), _revenue()).otherwise(0)
    return (
        lineitem.where((F.col("l_shipdate") >= _date("1995-09-01"))
                       & (F.col("l_shipdate") < _date("1995-10-01")))
        .join(part, F.col("l_partkey") == F.col("p_partkey"))
        .agg((100.00 * F.sum(promo) / F.sum(_revenue())).alias("promo_revenue"))
    )


def q15(spark: SparkSession, tables: Tables) -> DataFrame:
    """Top supplier: the quarter from 1996-01-01."""
    lineitem = spark.read.parquet(tables["lineitem"])
    supplier = spark.read.parquet(tables["supplier"])
    revenue = (
        lineitem.where((F.col("l_shipdate") >= _date("1996-01-01"))
                       & (F.col("l_shipdate") < _date("1996-04-01")))
        .groupBy(F.col("l_suppkey").alias("supplier_no"))
        .agg(F.sum(_revenue()).alias("total_revenue"))
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
        part.where((F.col("p_brand") != "Brand#45")
                   & ~F.col("p_type").like("MEDIUM POLISHED%")
                   & F.col("p_size").isin(49, 14, 23, 45, 19, 3, 36, 9))
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
        return ((F.col("p_brand") == brand)
                & F.col("p_container").isin(*containers)
                & F.col("l_quantity").between(quantity, quantity + 10)
                & F.col("p_size").between(1, size))

    return (
        lineitem.where(F.col("l_shipmode").isin("AIR", "AIR REG")
                       & (F.col("l_shipinstruct") == "DELIVER IN PERSON"))
        .join(part, F.col("p_partkey") == F.col("l_partkey"))
        .where(kind("Brand#12", ["SM CASE", "SM BOX", "SM PACK", "SM PKG"], 1, 5)
               | kind("Brand#23", ["MED BAG", "MED BOX", "MED PKG", "MED PACK"], 10, 10)
               | kind("Brand#34", ["LG CASE", "LG BOX", "LG PACK", "LG PKG"], 20, 15))
        .agg(F.sum(_revenue()).alias("revenue"))
    )


def q20(spark: SparkSession, tables: Tables) -> DataFrame:
    """Potential part promotion: parts named forest%, shipped in 1994, nation CANADA."""
    supplier = spark.read.parquet(tables["supplier"])
    nation = spark.read.parquet(tables["nation"])
    partsupp = spark.read.parquet(tables["partsupp"])
    part = spark.read.parquet(tables["part"])
    lineitem = spark.read.parquet(tables["lineitem"])
    shipped = (
        lineitem.where((F.col("l_shipdate") >= _date("1994-01-01"))
                       & (F.col("l_shipdate") < _date("1995-01-01")))
        .groupBy("l_partkey", "l_suppkey")
        .agg((0.5 * F.sum("l_quantity")).alias("half_quantity"))
    )
    excess = (
        partsupp.join(part.where(F.col("p_name").like("forest%")),
                      F.col("ps_partkey") == F.col("p_partkey"), "left_semi")
        .join(shipped, (F.col("l_partkey") == F.col("ps_partkey"))
              & (F.col("l_suppkey") == F.col("ps_suppkey")))
        .where(F.col("ps_availqty") > F.col("half_quantity"))
    )
    return (
        supplier.join(excess, F.col("s_suppkey") == F.col("ps_suppkey"), "left_semi")
        .join(nation.where(F.col("n_name") == "CANADA"),
              F.col("s_nationkey") == F.col("n_nationkey"))
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
    others = lineitem.select(F.col("l_orderkey").alias("l2_orderkey"),
                             F.col("l_suppkey").alias("l2_suppkey"))
    others_late = lineitem.where(late).select(F.col("l_orderkey").alias("l3_orderkey"),
                                              F.col("l_suppkey").alias("l3_suppkey"))
    return (
        lineitem.where(late)
        .join(supplier, F.col("s_suppkey") == F.col("l_suppkey"))
        .join(orders.where(F.col("o_orderstatus") == "F"),
              F.col("o_orderkey") == F.col("l_orderkey"))
        .join(nation.where(F.col("n_name") == "SAUDI ARABIA"),
              F.col("s_nationkey") == F.col("n_nationkey"))
        .join(others, (F.col("l2_orderkey") == F.col("l_orderkey"))
              & (F.col("l2_suppkey") != F.col("l_suppkey")), "left_semi")
        .join(others_late, (F.col("l3_orderkey") == F.col("l_orderkey"))
              & (F.col("l3_suppkey") != F.col("l_suppkey")), "left_anti")
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
        F.col("cntrycode").isin(*codes))
    average = in_codes.where(F.col("c_acctbal") > 0.00).agg(
        F.avg("c_acctbal").alias("avg_acctbal"))
    return (
        in_codes.crossJoin(average)
        .where(F.col("c_acctbal") > F.col("avg_acctbal"))
        .join(orders, F.col("o_custkey") == F.col("c_custkey"), "left_anti")
        .groupBy("cntrycode")
        .agg(F.count("*").alias("numcust"), F.sum("c_acctbal").alias("totacctbal"))
        .orderBy("cntrycode")
    )


QUERIES = {
    1: q1, 2: q2, 3: q3, 4: q4, 5: q5, 6: q6, 7: q7, 8: q8, 9: q9, 10: q10, 11: q11,
    12: q12, 13: q13, 14: q14, 15: q15, 16: q16, 17: q17, 18: q18, 19: q19, 20: q20, 21: q21,
    22: q22,
}


def run(spark: SparkSession, tables: Tables, number: int) -> DataFrame:
    """TPC-H query ``number`` (1 to 22) over ``tables`` (each table's Parquet directory by
    name), as a DataFrame still to run."""
    try:
        query = QUERIES[number]
    except KeyError:
        raise ValueError(f"TPC-H has queries 1 to 22, not {number!r}") from None
    return query(spark, tables)
