"""A seeded generator of small PySpark DataFrame programs over the fuzzer's tables.

A program is Python source over ``spark``, ``F`` (``pyspark.sql.functions``), ``Window`` and
``paths`` (table name to Parquet directory) that binds ``result`` to a DataFrame. The same text
runs in plain PySpark and through Tidal's DataFrame layer (``jobmanager.client.dataframe``,
what ``tidal run`` binds ``pyspark`` to), so a difference is Tidal's: its translation of the
DataFrame API into SQL (sqlframe's, on sqlglot) or its planning of that SQL.

The same rules as the SQL generator keep answers determined (``queries``' docstring): a window
that numbers rows or reads neighbours orders by ``id`` last, ``orderBy`` orders by every output
column, and ``limit`` comes only after it.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator

from examples.fuzzing.families import DATAFRAME_FAMILIES, FuzzCase
from examples.fuzzing.tables import STRINGS, TABLES, TableSpec

__all__ = ["generate_programs"]

_JOINS = ("inner", "left", "right", "full", "left_semi", "left_anti", "cross")


def generate_programs(
    seed: int, count: int, families: Iterable[str] | None = None, start: int = 0
) -> Iterator[FuzzCase]:
    """``count`` programs of the DataFrame ``families`` (all by default), from ``start``."""
    enabled = tuple(f for f in (families or DATAFRAME_FAMILIES) if f in DATAFRAME_FAMILIES)
    if not enabled:
        return
    for index in range(start, start + count):
        rng = random.Random(f"{seed}:program:{index}")
        family = rng.choice(enabled)
        writer = ProgramWriter(rng)
        getattr(writer, family)()
        yield FuzzCase(
            f"seed {seed} program {index}",
            family,
            (family,),
            program=writer.text(),
            ordered=writer.ordered,
        )


class ProgramWriter:
    """Writes one program line by line; ``columns`` are the current frame's column names and
    kinds (the last line's frame is ``result``)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: list[str] = []
        self.ordered = False
        self._names = iter("abcdefgh")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def read(self, non_empty: bool = False) -> tuple[str, TableSpec]:
        spec = self.rng.choice([t for t in TABLES if not non_empty or t.rows[1] > 0])
        name = next(self._names)
        self.lines.append(f'{name} = spark.read.parquet(paths["{spec.name}"])')
        return name, spec

    # --- values and conditions, as source text ----------------------------------------------

    def literal(self, kind: str) -> str:
        rng = self.rng
        if kind in ("int", "bigint"):
            return str(rng.randint(0, 7))
        if kind == "double":
            return repr(rng.randint(-40, 40) / 4)
        if kind == "decimal":
            return f'F.lit({rng.randint(-999, 999) / 4!r}).cast("decimal(12,2)")'
        if kind == "string":
            return repr(rng.choice(STRINGS))
        if kind == "date":
            return f'F.lit("2024-01-{rng.randint(1, 28):02d}").cast("date")'
        if kind == "boolean":
            return rng.choice(["True", "False"])
        return f'F.lit("2024-01-{rng.randint(1, 28):02d} 12:00:00").cast("timestamp")'

    def condition(self, frame: str, columns, depth: int = 1) -> str:
        rng = self.rng
        if depth > 0 and rng.random() < 0.3:
            left, right = self.condition(frame, columns, 0), self.condition(frame, columns, 0)
            return rng.choice([f"({left}) & ({right})", f"({left}) | ({right})", f"~({left})"])
        name, kind = rng.choice(columns)
        column = f'{frame}["{name}"]'
        pick = rng.randrange(5)
        if kind == "boolean" or pick == 0:
            return f"{column}.{rng.choice(['isNull', 'isNotNull'])}()"
        if pick == 1 and kind != "timestamp":
            values = ", ".join(self.literal(kind) for _ in range(rng.randint(1, 3)))
            return f"{column}.isin({values})"
        if pick == 2 and kind == "string":
            return f'{column}.like("{rng.choice(["a%", "%b", "_", "A%", " %"])}")'
        operator = rng.choice(["==", "!=", "<", "<=", ">", ">="])
        return f"{column} {operator} {self.literal(kind)}"

    def value(self, frame: str, columns) -> tuple[str, str]:
        """A column expression and its kind."""
        rng = self.rng
        name, kind = rng.choice(columns)
        column = f'{frame}["{name}"]'
        pick = rng.randrange(6)
        if pick == 0 and kind == "string":
            function = rng.choice(["upper", "lower", "trim", "ltrim", "length"])
            return f"F.{function}({column})", "int" if function == "length" else "string"
        if pick == 1 and kind == "string":
            return f"F.substring({column}, {rng.randint(1, 2)}, {rng.randint(1, 3)})", "string"
        if pick == 1 and kind == "date":
            return f"F.date_add({column}, {rng.randint(-3, 5)})", "date"
        if pick == 2 and kind in ("date", "timestamp"):
            return f"F.{rng.choice(['year', 'month', 'dayofmonth'])}({column})", "int"
        if pick == 2 and kind in ("int", "decimal", "double"):
            return f"({column} + {self.literal(kind)})", kind
        if pick == 3 and kind != "boolean":
            return f"F.coalesce({column}, {_lit(self.literal(kind))})", kind
        if pick == 4:
            condition = self.condition(frame, columns, 0)
            return f"F.when({condition}, {column}).otherwise({_lit(self.literal(kind))})", kind
        return column, kind

    # --- the families ------------------------------------------------------------------------

    def df_joins(self) -> None:
        rng = self.rng
        left, left_spec = self.read(non_empty=True)
        right, right_spec = self.read()
        how = rng.choice(_JOINS)
        shared = [
            c.name
            for c in left_spec.columns
            if right_spec.column(c.name) and c.name in ("k", "k2", "s", "id", "dt", "d")
        ]
        if how == "cross" or not shared:
            join = f"{left}.crossJoin({right})"
        else:
            key = rng.choice(shared)
            on = f'{left}["{key}"] == {right}["{key}"]'
            numbers = [c.name for c in right_spec.columns if c.kind in ("int", "decimal")]
            if rng.random() < 0.3 and numbers and left_spec.column(numbers[0]):
                other = rng.choice(numbers)
                if left_spec.column(other):
                    on = f'({on}) & ({left}["{other}"] <= {right}["{other}"])'
            join = f'{left}.join({right}, {on}, "{how}")'
        kept = [(left, c) for c in left_spec.columns]
        if "semi" not in how and "anti" not in how:
            kept += [(right, c) for c in right_spec.columns]
        chosen = rng.sample(kept, rng.randint(1, min(4, len(kept))))
        items = ", ".join(
            f'{frame}["{c.name}"].alias("c{i}")' for i, (frame, c) in enumerate(chosen)
        )
        condition = ""
        if rng.random() < 0.4:
            condition = (
                f".filter({self.condition(left, [(c.name, c.kind) for c in left_spec.columns])})"
            )
        self.lines.append(f"result = {join}{condition}.select({items})")
        self.finish([f"c{i}" for i in range(len(chosen))])

    def df_aggregates(self) -> None:
        rng = self.rng
        frame, spec = self.read()
        columns = [(c.name, c.kind) for c in spec.columns]
        keys = rng.sample([c for c in columns if c[1] != "double"], rng.randint(1, 2))
        grouping = rng.choice(["groupBy", "groupBy", "rollup", "cube"])
        calls = []
        for i in range(rng.randint(1, 3)):
            name, kind = rng.choice(columns)
            if kind in ("int", "bigint", "double", "decimal") and rng.random() < 0.5:
                function = rng.choice(["sum", "avg", "min", "max"])
            else:
                function = rng.choice(["count", "countDistinct", "min", "max"])
            if kind == "boolean" and function in ("min", "max"):
                function = "count"
            calls.append(f'F.{function}({frame}["{name}"]).alias("a{i}")')
        if rng.random() < 0.3:
            calls.append(f'F.count(F.lit(1)).alias("a{len(calls)}")')
        keys_text = ", ".join(f'{frame}["{name}"]' for name, _ in keys)
        source = frame
        if rng.random() < 0.4:
            source = f"{frame}.filter({self.condition(frame, columns)})"
        self.lines.append(f"grouped = {source}.{grouping}({keys_text}).agg({', '.join(calls)})")
        names = [name for name, _ in keys] + [f"a{i}" for i in range(len(calls))]
        if rng.random() < 0.3:
            self.lines.append(f'grouped = grouped.filter(F.col("a0").isNotNull())')
        items = ", ".join(f'F.col("{name}").alias("c{i}")' for i, name in enumerate(names))
        self.lines.append(f"result = grouped.select({items})")
        self.finish([f"c{i}" for i in range(len(names))])

    def df_windows(self) -> None:
        rng = self.rng
        frame, spec = self.read(non_empty=True)
        columns = [(c.name, c.kind) for c in spec.columns]
        partition = rng.sample([c for c in columns if c[1] != "double"], rng.randint(0, 1))
        order = [name for name, kind in rng.sample(columns, 1) if kind != "boolean"]
        part = ", ".join(f'"{name}"' for name, _ in partition)
        self.lines.append(
            f"window = Window.partitionBy({part}).orderBy("
            f"{', '.join(repr(n) for n in order + ['id'])})"
        )
        pick = rng.randrange(5)
        numeric = [name for name, kind in columns if kind in ("int", "decimal", "double")]
        if pick == 0:
            call = "F.row_number().over(window)"
        elif pick == 1:
            call = f"F.{rng.choice(['rank', 'dense_rank'])}().over(window)"
        elif pick == 2:
            name = rng.choice(columns)[0]
            call = f'F.{rng.choice(["lag", "lead"])}("{name}", {rng.randint(1, 2)}).over(window)'
        elif pick == 3:
            name = rng.choice(numeric)
            frame_text = rng.choice(
                [
                    "-1, 0",
                    "Window.unboundedPreceding, Window.currentRow",
                    "0, 1",
                    "Window.unboundedPreceding, Window.unboundedFollowing",
                ]
            )
            call = (
                f'F.{rng.choice(["sum", "avg", "min", "max", "count"])}("{name}")'
                f".over(window.rowsBetween({frame_text}))"
            )
        else:
            name = rng.choice(numeric)
            call = f'F.{rng.choice(["sum", "min", "max", "count"])}("{name}").over(Window.partitionBy({part}))'
        kept = rng.sample(columns, rng.randint(1, 2))
        items = [f'F.col("{name}").alias("c{i}")' for i, (name, _) in enumerate(kept)]
        items.append(f'F.col("w").alias("c{len(items)}")')
        source = frame
        if rng.random() < 0.3:
            source = f"{frame}.filter({self.condition(frame, columns)})"
        self.lines.append(f'result = {source}.withColumn("w", {call}).select({", ".join(items)})')
        self.finish([f"c{i}" for i in range(len(items))])

    def df_columns(self) -> None:
        rng = self.rng
        frame, spec = self.read()
        columns = [(c.name, c.kind) for c in spec.columns]
        line = frame
        for i in range(rng.randint(1, 3)):
            text, kind = self.value(frame, columns)
            line += f'.withColumn("v{i}", {text})'
        if rng.random() < 0.6:
            line += f".filter({self.condition(frame, columns)})"
        count = i + 1
        kept = rng.sample(columns, rng.randint(0, 2))
        items = [f'F.col("v{j}").alias("c{j}")' for j in range(count)]
        items += [f'F.col("{name}").alias("c{count + j}")' for j, (name, _) in enumerate(kept)]
        self.lines.append(f"result = {line}.select({', '.join(items)})")
        if rng.random() < 0.2:
            self.lines.append("result = result.distinct()")
        self.finish([f"c{j}" for j in range(len(items))], chance=0.5)

    def finish(self, names: list[str], chance: float = 0.3) -> None:
        """Perhaps order by every column (each asc or desc, nulls first or last), then perhaps
        limit: the answer is then compared in order."""
        rng = self.rng
        if rng.random() >= chance:
            return
        keys = [
            f'F.col("{name}").{rng.choice(["asc", "desc"])}_nulls_{rng.choice(["first", "last"])}()'
            for name in rng.sample(names, len(names))
        ]
        limit = f".limit({rng.randint(0, 10)})" if rng.random() < 0.5 else ""
        self.lines.append(f"result = result.orderBy({', '.join(keys)}){limit}")
        self.ordered = True


def _lit(text: str) -> str:
    """A literal as a Column: ``F.lit`` around a Python value; F-expressions as they are."""
    return text if text.startswith("F.") else f"F.lit({text})"
