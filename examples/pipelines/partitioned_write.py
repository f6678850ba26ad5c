"""Write events partitioned by date, then read one day back and summarise it.

Shows: ``to_timestamp``/``to_date`` on string timestamps; ``write.partitionBy("date")``
(directories ``date=2024-01-01/``, ...); reading the dataset back and selecting one partition
with ``where(F.col("date") == ...)`` on the whole dataset (Spark prunes the other directories;
reading ``out/events/date=2024-01-02`` directly would also work but drops the ``date`` column);
an aggregate of that day written as Parquet.

    python partitioned_write.py --input events.csv --output out/ --date 2024-01-02
"""

import argparse

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

EVENT_SCHEMA = StructType(
    [
        StructField("event_id", StringType()),
        StructField("event_time", StringType()),
        StructField("user_id", StringType()),
        StructField("event_type", StringType()),
        StructField("amount", StringType()),
    ]
)


def main():
    parser = argparse.ArgumentParser(description="Partitioned write and read-back of events.")
    parser.add_argument("--input", default="events.csv", help="events CSV")
    parser.add_argument("--output", default="out/partitioned_write", help="output directory")
    parser.add_argument("--date", default="2024-01-02", help="the day to summarise")
    args = parser.parse_args()

    spark = SparkSession.builder.appName("partitioned_write").getOrCreate()

    events = (
        spark.read.option("header", True)
        .schema(EVENT_SCHEMA)
        .csv(args.input)
        .select(
            F.col("event_id").cast("long").alias("event_id"),
            F.to_timestamp(F.col("event_time"), "yyyy-MM-dd HH:mm:ss").alias("event_time"),
            F.col("user_id").cast("int").alias("user_id"),
            F.col("event_type"),
            F.col("amount").cast("decimal(10,2)").alias("amount"),
        )
        .withColumn("date", F.to_date(F.col("event_time")))
    )

    events_path = f"{args.output}/events"
    events.write.partitionBy("date").mode("overwrite").parquet(events_path)

    day = spark.read.parquet(events_path).where(F.col("date") == args.date)

    summary = (
        day.groupBy("event_type")
        .agg(
            F.count("*").alias("events"),
            F.countDistinct("user_id").alias("users"),
            F.sum("amount").alias("amount"),
            F.min("event_time").alias("first_event"),
            F.max("event_time").alias("last_event"),
        )
        .withColumn("date", F.lit(args.date).cast("date"))
        .orderBy(F.desc("events"), "event_type")
    )

    summary.write.mode("overwrite").parquet(f"{args.output}/summary")

    print(f"partitioned_write: {events.count()} events written, {day.count()} on {args.date}")
    summary.show(truncate=False)
    spark.stop()


if __name__ == "__main__":
    main()
