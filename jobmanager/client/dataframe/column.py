"""``pyspark.sql.column`` on Tidal: sqlframe's ``Column``."""

from sqlframe.base.column import Column  # noqa: F401
