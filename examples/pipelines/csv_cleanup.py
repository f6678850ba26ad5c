"""Clean a messy CSV of orders into typed Parquet.

Shows: reading a CSV with an explicit all-string schema; trim and lower-case; casts to int,
decimal(12,2), date and timestamp; dropping rows without a key or date (``na.drop``); filling
missing values (``fillna``); dropping exact duplicates (``dropDuplicates``) and then keeping the
latest version of each order (``row_number`` over a window ordered by ``updated_at``).

    python csv_cleanup.py --input orders_raw.csv --output out/
"""

import argparse

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

RAW_SCHEMA = StructType(
    [
        StructField("order_id", StringType()),
        StructField("customer", StringType()),
        StructField("country", StringType()),
        StructField("status", StringType()),
        StructField("amount", StringType()),
        StructField("quantity", StringType()),
        StructField("order_date", StringType()),
        StructField("updated_at", StringType()),
    ]
)


def main():
    parser = argparse.ArgumentParser(description="Clean a messy CSV of orders.")
    parser.add_argument("--input", default="orders_raw.csv", help="the raw orders CSV")
    parser.add_argument("--output", default="out/csv_cleanup", help="output directory")
    args = parser.parse_args()

    spark = SparkSession.builder.appName("csv_cleanup").getOrCreate()

    raw = spark.read.csv(args.input, header=True, schema=RAW_SCHEMA)

    typed = raw.select(
        F.trim(F.col("order_id")).cast("int").alias("order_id"),
        F.lower(F.trim(F.col("customer"))).alias("customer"),
        F.lower(F.trim(F.col("country"))).alias("country"),
        F.lower(F.trim(F.col("status"))).alias("status"),
        F.trim(F.col("amount")).cast("decimal(12,2)").alias("amount"),
        F.trim(F.col("quantity")).cast("int").alias("quantity"),
        F.to_date(F.trim(F.col("order_date")), "yyyy-MM-dd").alias("order_date"),
        F.to_timestamp(F.trim(F.col("updated_at")), "yyyy-MM-dd HH:mm:ss").alias("updated_at"),
    )

    cleaned = (
        typed.na.drop(subset=["order_id", "order_date"])
        .fillna({"customer": "unknown", "status": "pending", "quantity": 1})
        .fillna(0, subset=["amount"])
        .dropDuplicates()
    )

    latest_first = Window.partitionBy("order_id").orderBy(F.desc("updated_at"))
    orders = (
        cleaned.withColumn("version", F.row_number().over(latest_first))
        .where(F.col("version") == 1)
        .drop("version")
        .withColumn("is_large", F.when(F.col("amount") >= 1000, True).otherwise(False))
    )

    orders.write.mode("overwrite").parquet(f"{args.output}/orders")

    print(f"csv_cleanup: {raw.count()} raw rows -> {orders.count()} orders")
    orders.orderBy("order_id").show(5, truncate=False)
    spark.stop()


if __name__ == "__main__":
    main()
