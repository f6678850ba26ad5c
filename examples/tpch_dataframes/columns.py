"""What the queries share: the tables they read, a date literal and a line's discounted price."""

from __future__ import annotations

import datetime
from collections.abc import Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F

__all__ = ["Tables", "date", "discounted_price"]

Tables = Mapping[str, str]
"""Each table's Parquet directory by name."""


def date(text: str) -> Column:
    return F.lit(datetime.date.fromisoformat(text))


def discounted_price() -> Column:
    """A line's discounted price, ``l_extendedprice * (1 - l_discount)``."""
    return F.col("l_extendedprice") * (1 - F.col("l_discount"))
