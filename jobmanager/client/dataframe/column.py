"""``pyspark.sql.column`` on Tidal: sqlframe's ``Column``, with PySpark's names it lacks
(``astype``, ``name``, ``isNaN``, ``try_cast``, ``bitwiseAND``/``OR``/``XOR``, ``transform``)."""

from sqlframe.base.column import Column
from sqlglot import exp

__all__ = ["Column"]


def _bitwise(kind):
    def operation(self, other):
        return Column(
            kind(this=self.column_expression, expression=Column.ensure_col(other).column_expression)
        )

    return operation


def _try_cast(self, dataType):
    cast = self.cast(dataType).column_expression
    return Column(exp.TryCast(this=cast.this, to=cast.args["to"], safe=True))


def _is_nan(self):
    return Column(exp.Anonymous(this="isnan", expressions=[self.column_expression]))


for _name, _value in {
    "astype": Column.cast,
    "name": Column.alias,
    "isNaN": _is_nan,
    "try_cast": _try_cast,
    "bitwiseAND": _bitwise(exp.BitwiseAnd),
    "bitwiseOR": _bitwise(exp.BitwiseOr),
    "bitwiseXOR": _bitwise(exp.BitwiseXor),
    "transform": lambda self, f: f(self),
}.items():
    if not hasattr(Column, _name):
        setattr(Column, _name, _value)
