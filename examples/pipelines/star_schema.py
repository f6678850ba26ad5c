"""Revenue by year, product category and store region from a sales star schema.

Shows: reading Parquet; a fact table joined to three dimensions (inner joins to the date and
store dimensions, a left join to the product dimension with ``fillna`` for unknown products);
a derived column; ``groupBy().agg`` with ``sum``, ``count`` and ``countDistinct``; ``orderBy``
with ``F.desc``.

    python star_schema.py --input star/ --output out/
"""

import argparse

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main():
    parser = argparse.ArgumentParser(description="Aggregate a sales star schema.")
    parser.add_argument(
        "--input",
        default="star",
        help="directory with sales.parquet, dim_date.parquet, "
        "dim_product.parquet and dim_store.parquet",
    )
    parser.add_argument("--output", default="out/star_schema", help="output directory")
    args = parser.parse_args()

    spark = SparkSession.builder.appName("star_schema").getOrCreate()

    sales = spark.read.parquet(f"{args.input}/sales.parquet")
    dates = spark.read.parquet(f"{args.input}/dim_date.parquet").select("date_key", "year")
    products = spark.read.parquet(f"{args.input}/dim_product.parquet").select(
        "product_id", "category"
    )
    stores = spark.read.parquet(f"{args.input}/dim_store.parquet").select("store_id", "region")

    enriched = (
        sales.join(dates, on="date_key", how="inner")
        .join(products, on="product_id", how="left")
        .join(stores, on="store_id", how="inner")
        .fillna({"category": "unknown"})
        .withColumn("revenue", F.col("quantity") * F.col("unit_price"))
    )

    report = (
        enriched.groupBy("year", "category", "region")
        .agg(
            F.sum("revenue").alias("revenue"),
            F.sum("quantity").alias("quantity"),
            F.count("sale_id").alias("sales"),
            F.countDistinct("product_id").alias("products"),
        )
        .orderBy("year", F.desc("revenue"), "category", "region")
    )

    report.write.mode("overwrite").parquet(f"{args.output}/revenue")

    print(f"star_schema: {enriched.count()} sales in {report.count()} groups")
    report.show(5, truncate=False)
    spark.stop()


if __name__ == "__main__":
    main()
