"""Spark SQL's types, as far as the planner must know them: what a column holds, what an
expression gives, and what the halves of a split aggregate must give to equal Spark's own.

Spark's rules are restated here, not guessed (``DecimalPrecision``, ``TypeCoercion`` and the
aggregates' ``resultType`` in Spark 4): integers widen to the wider integer; an integer meets a
decimal as ``decimal(3|5|10|20, 0)`` by its width, or, for an integer literal, as the fewest
digits that hold it; a decimal's arithmetic follows SQL Server's precision rules with precision
loss allowed (``spark.sql.decimalOperations.allowPrecisionLoss``, on by default); anything meeting
a float or double is a double. ``SUM`` of ``decimal(p, s)`` is ``decimal(p + 10, s)`` and ``AVG``
``decimal(p + 4, s + 4)``, both bounded by 38.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

__all__ = [
    "BIGINT",
    "BOOLEAN",
    "DATE",
    "DOUBLE",
    "INT",
    "NULL",
    "STRING",
    "UNKNOWN",
    "SqlType",
    "arithmetic",
    "avg_type",
    "decimal",
    "from_arrow",
    "sum_type",
    "wider",
]

MAX_PRECISION = 38
_INTEGRAL_RANK = {"tinyint": 1, "smallint": 2, "int": 3, "bigint": 4}
_INTEGRAL_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}


@dataclass(frozen=True, slots=True)
class SqlType:
    """A Spark SQL type by its name (``decimal`` with its precision and scale). ``unknown`` is a
    type the planner cannot tell (a function it does not know): nothing is checked against it,
    and nothing whose correctness depends on a type is planned from it."""

    name: str
    precision: int = 0
    scale: int = 0

    @property
    def is_integral(self) -> bool:
        return self.name in _INTEGRAL_RANK

    @property
    def is_decimal(self) -> bool:
        return self.name == "decimal"

    @property
    def is_fractional(self) -> bool:
        return self.name in ("float", "double")

    @property
    def is_numeric(self) -> bool:
        return self.is_integral or self.is_decimal or self.is_fractional

    @property
    def is_known(self) -> bool:
        return self.name != "unknown"

    def as_decimal(self) -> SqlType:
        """An integer as the decimal that holds every value of its width."""
        if self.is_decimal:
            return self
        return decimal(_INTEGRAL_DIGITS[self.name], 0)

    def __str__(self) -> str:
        if self.is_decimal:
            return f"decimal({self.precision},{self.scale})"
        return self.name


BOOLEAN = SqlType("boolean")
INT = SqlType("int")
BIGINT = SqlType("bigint")
DOUBLE = SqlType("double")
STRING = SqlType("string")
DATE = SqlType("date")
NULL = SqlType("null")
UNKNOWN = SqlType("unknown")


def decimal(precision: int, scale: int) -> SqlType:
    return SqlType("decimal", precision, scale)


def bounded(precision: int, scale: int) -> SqlType:
    """Spark's ``DecimalType.bounded``: each part capped at 38."""
    return decimal(min(precision, MAX_PRECISION), min(scale, MAX_PRECISION))


def adjusted(precision: int, scale: int) -> SqlType:
    """Spark's ``DecimalType.adjustPrecisionScale`` with precision loss allowed: past 38 digits
    the integral part is kept and the scale gives way, down to 6 (or less, if it was less)."""
    if precision <= MAX_PRECISION:
        return decimal(precision, scale)
    integral = precision - scale
    return decimal(MAX_PRECISION, max(MAX_PRECISION - integral, min(scale, 6)))


def literal_decimal(value: int) -> SqlType:
    """``DecimalType.fromLiteral``: an integer literal beside a decimal takes its own digits."""
    return decimal(max(1, len(str(abs(value)))), 0)


_ARROW_NAMES = (
    (pa.types.is_boolean, "boolean"), (pa.types.is_int8, "tinyint"),
    (pa.types.is_uint8, "smallint"),
    (pa.types.is_int16, "smallint"), (pa.types.is_uint16, "int"), (pa.types.is_int32, "int"),
    (pa.types.is_uint32, "bigint"), (pa.types.is_int64, "bigint"), (pa.types.is_float16, "float"),
    (pa.types.is_float32, "float"), (pa.types.is_float64, "double"), (pa.types.is_string, "string"),
    (pa.types.is_large_string, "string"), (pa.types.is_string_view, "string"),
    (pa.types.is_binary, "binary"), (pa.types.is_large_binary, "binary"),
    (pa.types.is_date, "date"), (pa.types.is_null, "null"),
)  # fmt: skip


def from_arrow(arrow_type: pa.DataType) -> SqlType:
    """The type Spark reads an Arrow (Parquet) column as."""
    if pa.types.is_decimal(arrow_type):
        return decimal(arrow_type.precision, arrow_type.scale)
    if pa.types.is_timestamp(arrow_type):
        return SqlType("timestamp" if arrow_type.tz else "timestamp_ntz")
    if pa.types.is_dictionary(arrow_type):
        return from_arrow(arrow_type.value_type)
    for test, name in _ARROW_NAMES:
        if test(arrow_type):
            return SqlType(name)
    return UNKNOWN


def parse_type(text: str) -> SqlType:
    """A type as a CAST names it (``DECIMAL(15, 2)``, ``INT``, ``DATE`` ...)."""
    name = text.strip().lower()
    if name.startswith(("decimal", "numeric", "dec")):
        inside = name[name.find("(") + 1 : name.rfind(")")] if "(" in name else ""
        parts = [int(p) for p in inside.split(",") if p.strip()] if inside else []
        precision = parts[0] if parts else 10
        return decimal(precision, parts[1] if len(parts) > 1 else 0)
    aliases = {
        "integer": "int",
        "long": "bigint",
        "short": "smallint",
        "byte": "tinyint",
        "real": "float",
        "text": "string",
        "varchar": "string",
        "char": "string",
        "bool": "boolean",
        "timestamp_ltz": "timestamp",
    }
    base = name.split("(")[0].strip()
    base = aliases.get(base, base)
    known = {
        *_INTEGRAL_RANK,
        "float",
        "double",
        "string",
        "boolean",
        "date",
        "timestamp",
        "timestamp_ntz",
        "binary",
    }
    return SqlType(base) if base in known else UNKNOWN


def wider(a: SqlType, b: SqlType) -> SqlType | None:
    """The type both widen to (``TypeCoercion.findWiderTypeForTwo``), as CASE, COALESCE, IN
    and set operations need; None when Spark finds none."""
    if a == b or b.name == "null":
        return a
    if a.name == "null":
        return b
    if not (a.is_known and b.is_known):
        return UNKNOWN
    if a.is_integral and b.is_integral:
        return a if _INTEGRAL_RANK[a.name] >= _INTEGRAL_RANK[b.name] else b
    if a.is_numeric and b.is_numeric:
        if a.is_fractional or b.is_fractional:
            decimal_or_double = a.is_decimal or b.is_decimal or "double" in (a.name, b.name)
            return DOUBLE if decimal_or_double else SqlType("float")
        x, y = a.as_decimal(), b.as_decimal()
        scale = max(x.scale, y.scale)
        return bounded(max(x.precision - x.scale, y.precision - y.scale) + scale, scale)
    if {a.name, b.name} <= {"date", "timestamp", "timestamp_ntz"}:
        return SqlType("timestamp") if "timestamp" in (a.name, b.name) else SqlType("timestamp_ntz")
    if "string" in (a.name, b.name):
        return STRING
    return None


def arithmetic(
    operator: str, a: SqlType, b: SqlType, literal: tuple[int | None, int | None] = (None, None)
) -> SqlType | None:
    """The type of ``a <operator> b`` for ``+ - * / %`` on numbers; None when the operands are
    not both numbers (the caller handles dates and intervals). ``literal``: the value of either
    operand when it is an integer literal (it meets a decimal with its own digits)."""
    if not (a.is_numeric and b.is_numeric):
        return None
    if operator == "/" and not (a.is_decimal or b.is_decimal):
        return DOUBLE
    if a.is_fractional or b.is_fractional:
        return DOUBLE if operator == "/" or "double" in (a.name, b.name) else SqlType("float")
    if a.is_integral and b.is_integral:
        return wider(a, b)
    x = literal_decimal(literal[0]) if literal[0] is not None and a.is_integral else a.as_decimal()
    y = literal_decimal(literal[1]) if literal[1] is not None and b.is_integral else b.as_decimal()
    p1, s1, p2, s2 = x.precision, x.scale, y.precision, y.scale
    if operator in ("+", "-"):
        scale = max(s1, s2)
        return adjusted(max(p1 - s1, p2 - s2) + scale + 1, scale)
    if operator == "*":
        return adjusted(p1 + p2 + 1, s1 + s2)
    if operator == "/":
        scale = max(6, s1 + p2 + 1)
        return adjusted(p1 - s1 + s2 + scale, scale)
    scale = max(s1, s2)
    return adjusted(min(p1 - s1, p2 - s2) + scale, scale)


def sum_type(argument: SqlType) -> SqlType:
    if argument.is_integral:
        return BIGINT
    if argument.is_decimal:
        return bounded(argument.precision + 10, argument.scale)
    if argument.is_fractional:
        return DOUBLE
    return UNKNOWN


def avg_type(argument: SqlType) -> SqlType:
    if argument.is_decimal:
        return bounded(argument.precision + 4, argument.scale + 4)
    if argument.is_numeric:
        return DOUBLE
    return UNKNOWN
