"""``pyspark.sql.types`` on Tidal: sqlframe's, which mirror PySpark's."""

from sqlframe.base.types import *  # noqa: F403
