"""``pyspark.sql.window`` on Tidal: sqlframe's ``Window`` and ``WindowSpec``."""

from sqlframe.base.window import Window, WindowSpec  # noqa: F401
