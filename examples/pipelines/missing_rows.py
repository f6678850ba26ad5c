"""Find expected orders that never shipped, and shipments nobody expected.

Shows: reading two CSVs with schemas; ``left_anti`` joins both ways (rows of one table without
a match in the other; a shipment without an order id matches nothing); writing CSV with a
header.

    python missing_rows.py --input shipping/ --output out/
"""

import argparse

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

EXPECTED_SCHEMA = StructType(
    [
        StructField("order_id", IntegerType()),
        StructField("customer", StringType()),
        StructField("order_date", StringType()),
    ]
)
SHIPMENT_SCHEMA = StructType(
    [
        StructField("shipment_id", IntegerType()),
        StructField("order_id", IntegerType()),
        StructField("shipped_at", StringType()),
        StructField("carrier", StringType()),
    ]
)


def main():
    parser = argparse.ArgumentParser(description="Expected orders missing from shipments.")
    parser.add_argument(
        "--input", default="shipping", help="directory with expected_orders.csv and shipments.csv"
    )
    parser.add_argument("--output", default="out/missing_rows", help="output directory")
    args = parser.parse_args()

    spark = SparkSession.builder.appName("missing_rows").getOrCreate()

    expected = spark.read.csv(
        f"{args.input}/expected_orders.csv", header=True, schema=EXPECTED_SCHEMA
    ).withColumn("order_date", F.to_date(F.col("order_date"), "yyyy-MM-dd"))
    shipments = spark.read.csv(f"{args.input}/shipments.csv", header=True, schema=SHIPMENT_SCHEMA)

    missing = expected.join(shipments, on="order_id", how="left_anti").orderBy("order_id")
    unexpected = shipments.join(expected, on="order_id", how="left_anti").orderBy("shipment_id")

    missing.write.mode("overwrite").option("header", True).csv(f"{args.output}/missing")
    unexpected.write.mode("overwrite").option("header", True).csv(f"{args.output}/unexpected")

    print(
        f"missing_rows: {missing.count()} of {expected.count()} expected orders not shipped, "
        f"{unexpected.count()} unexpected shipments"
    )
    missing.show(5, truncate=False)
    spark.stop()


if __name__ == "__main__":
    main()
