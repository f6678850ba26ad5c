import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.appName("priorities").getOrCreate()
orders = spark.read.parquet(sys.argv[1])
by_priority = (
    orders.where(F.col("o_orderdate") >= "1995-01-01")
    .groupBy("o_orderpriority")
    .agg(F.sum("o_totalprice").alias("revenue"), F.count("*"))
    .orderBy(F.desc("revenue"))
)
by_priority.show()
by_priority.write.mode("overwrite").parquet(sys.argv[2])
