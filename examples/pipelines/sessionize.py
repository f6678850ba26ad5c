"""Split click streams into sessions: a new session after more than 30 minutes of silence.

Shows: timestamps read as strings and parsed with ``to_timestamp``; window functions over
``Window.partitionBy("user_id").orderBy("ts")``: ``lag`` for the gap to the previous click, a
running ``sum`` of new-session flags for the session number, ``row_number`` within the session;
then a ``groupBy`` summary per session (start, end, events, distinct pages).

    python sessionize.py --input clicks.csv --output out/
"""

import argparse

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

SESSION_GAP_SECONDS = 30 * 60

CLICK_SCHEMA = StructType(
    [
        StructField("user_id", IntegerType()),
        StructField("ts", StringType()),
        StructField("url", StringType()),
    ]
)


def main():
    parser = argparse.ArgumentParser(description="Sessionize click events.")
    parser.add_argument("--input", default="clicks.csv", help="clicks CSV: user_id, ts, url")
    parser.add_argument("--output", default="out/sessionize", help="output directory")
    args = parser.parse_args()

    spark = SparkSession.builder.appName("sessionize").getOrCreate()

    clicks = (
        spark.read.csv(args.input, header=True, schema=CLICK_SCHEMA)
        .withColumn("ts", F.to_timestamp(F.col("ts"), "yyyy-MM-dd HH:mm:ss"))
        .dropna(subset=["user_id", "ts"])
        .dropDuplicates()
    )

    by_user = Window.partitionBy("user_id").orderBy("ts")
    running = by_user.rowsBetween(Window.unboundedPreceding, Window.currentRow)

    with_gaps = (
        clicks.withColumn("prev_ts", F.lag("ts").over(by_user))
        .withColumn("gap_seconds", F.unix_timestamp("ts") - F.unix_timestamp("prev_ts"))
        .withColumn(
            "new_session",
            F.when(
                F.col("prev_ts").isNull() | (F.col("gap_seconds") > SESSION_GAP_SECONDS), 1
            ).otherwise(0),
        )
    )
    numbered = with_gaps.withColumn("session_number", F.sum("new_session").over(running))

    by_session = Window.partitionBy("user_id", "session_number").orderBy("ts")
    events = (
        numbered.withColumn(
            "session_id",
            F.concat(
                F.col("user_id").cast("string"), F.lit("-"), F.col("session_number").cast("string")
            ),
        )
        .withColumn("event_in_session", F.row_number().over(by_session))
        .select(
            "user_id",
            "session_id",
            "session_number",
            "event_in_session",
            "ts",
            "url",
            "gap_seconds",
        )
    )

    sessions = (
        events.groupBy("user_id", "session_id", "session_number")
        .agg(
            F.min("ts").alias("session_start"),
            F.max("ts").alias("session_end"),
            F.count("*").alias("events"),
            F.countDistinct("url").alias("distinct_pages"),
        )
        .withColumn(
            "duration_seconds", F.unix_timestamp("session_end") - F.unix_timestamp("session_start")
        )
    )

    events.write.mode("overwrite").parquet(f"{args.output}/events")
    sessions.write.mode("overwrite").parquet(f"{args.output}/sessions")

    print(f"sessionize: {events.count()} events in {sessions.count()} sessions")
    sessions.orderBy(F.desc("events"), "user_id", "session_number").show(5, truncate=False)
    spark.stop()


if __name__ == "__main__":
    main()
