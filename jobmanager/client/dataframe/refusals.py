"""The rest of PySpark's surface that Tidal refuses, by name: each a method (or property) that
raises ``UnsupportedCallError`` at the call, naming it, why, and what to use instead.

One table a class, installed on Tidal's classes where they do not define the name themselves,
so ``dir()`` over Tidal's classes has every name PySpark's have.
"""

from __future__ import annotations

from jobmanager.client.dataframe.unsupported import unsupported

__all__ = ["REFUSED", "install"]

_STREAM = ("Tidal runs batch jobs", "streaming")
_CONNECT = ("it belongs to Spark Connect's client, which Tidal is not", None)
_TABLES = (
    "Tidal's catalogue holds only the files the session read",
    "read the files with spark.read",
)
_PYTHON = ("it runs Python per row", "udf")

REFUSED: dict[str, dict[str, tuple[str, str | None]]] = {
    "DataFrame": {
        "asTable": ("table-valued arguments need a UDTF", "udf"),
        "colRegex": ("Tidal selects columns by name", "select the columns by name"),
        "createGlobalTempView": ("Tidal's views live in one session", "createOrReplaceTempView"),
        "createOrReplaceGlobalTempView": (
            "Tidal's views live in one session",
            "createOrReplaceTempView",
        ),
        "dropDuplicatesWithinWatermark": _STREAM,
        "withWatermark": _STREAM,
        "executionInfo": _CONNECT,
        "exists": ("subquery expressions are built by SQL", None),
        "scalar": ("subquery expressions are built by SQL", None),
        "inputFiles": ("Tidal lists a read's files when it plans the job", "tidal explain"),
        "lateralJoin": ("lateral joins are not in Tidal's planner", "join"),
        "nearestByJoin": ("nearest-neighbour joins are not in Tidal's planner", "join"),
        "mergeInto": _TABLES,
        "writeTo": _TABLES,
        "metadataColumn": ("Tidal's reads have no metadata columns", None),
        "pandas_api": ("Tidal runs PySpark's DataFrame API", "toPandas()"),
        "plot": ("Tidal draws no plots", "toPandas().plot"),
        "repartitionById": ("Tidal decides its own partitioning", None),
        "sameSemantics": ("Tidal does not compare plans", None),
        "semanticHash": ("Tidal does not hash plans", None),
        "storageLevel": ("Tidal keeps nothing cached", None),
        "toJSON": ("it returns an RDD", "rdd"),
        "transpose": (
            "the result's columns would be its rows' values",
            "collect() and transpose locally",
        ),
        "withMetadata": ("Tidal's columns carry no metadata", None),
        "zip": ("Tidal's rows have no positions to pair", "join on a key"),
        "zipWithIndex": ("Tidal's rows have no positions", "F.row_number() over a window"),
        "observe": ("Tidal collects no metrics during an action", "agg() the metrics"),
        "offset": ("OFFSET is not in Tidal's planner", "a row_number() window and a filter"),
    },
    "Column": {
        "dropFields": ("Tidal does not rebuild structs", "F.struct of the fields kept"),
        "withField": ("Tidal does not rebuild structs", "F.struct with the new field"),
        "outer": ("lateral references are not in Tidal's planner", None),
    },
    "GroupedData": {
        "applyInPandasWithState": _STREAM,
        "transformWithState": _STREAM,
        "transformWithStateInPandas": _STREAM,
    },
    "DataFrameReader": {
        "changes": _STREAM,
        "xml": ("Tidal reads Parquet and CSV files", "read.parquet"),
    },
    "DataFrameWriter": {
        name: ("Tidal writes Parquet and CSV files", "write.parquet")
        for name in ("jdbc", "orc", "text", "xml")
    }
    | {"clusterBy": _TABLES, "sortBy": _TABLES},
    "SparkSession": {
        name: _CONNECT
        for name in (
            "addArtifact",
            "addArtifacts",
            "addTag",
            "clearProgressHandlers",
            "clearTags",
            "client",
            "copyFromLocalToFs",
            "getTags",
            "interruptAll",
            "interruptOperation",
            "interruptTag",
            "profile",
            "registerProgressHandler",
            "removeProgressHandler",
            "removeTag",
        )
    }
    | {
        "dataSource": ("Python data sources run Python per row", "udf"),
        "udtf": ("a Python UDTF runs Python per row", "udf"),
        "tvf": ("table-valued functions are not in Tidal's planner", None),
        "newSession": ("Tidal's session is one per process", "use the same session"),
        "emptyDataFrame": ("Tidal's queries read files or rows", "createDataFrame([], schema)"),
    },
    "Catalog": {
        name: _TABLES
        for name in (
            "analyzeTable",
            "createDatabase",
            "dropDatabase",
            "dropTable",
            "dropView",
            "getCreateTableString",
            "getTableProperties",
            "listPartitions",
            "listViews",
            "truncateTable",
            "createExternalTable",
            "createTable",
            "recoverPartitions",
            "refreshByPath",
            "refreshTable",
        )
    }
    | {
        name: (
            "Tidal's functions are PySpark's built-in ones, listed in pyspark.sql.functions",
            None,
        )
        for name in ("functionExists", "getFunction", "listFunctions")
    }
    | {
        "registerFunction": _PYTHON,
        "dropGlobalTempView": ("Tidal's views live in one session", "dropTempView"),
        "isCached": ("Tidal keeps nothing cached (cacheTable changes nothing)", None),
    },
    "DataFrameStatFunctions": {},
}


def _refusal(owner: str, name: str, why: str, alternative: str | None, is_property: bool):
    method = f"{owner}.{name}"
    if is_property:
        return property(lambda self: (_ for _ in ()).throw(unsupported(method, why, alternative)))

    def refuse(self, *args, **kwargs):
        raise unsupported(method, why, alternative)

    refuse.__name__ = name
    return refuse


_PROPERTIES = {"executionInfo", "plot", "storageLevel", "emptyDataFrame", "client"}


def install(classes: dict[str, type]) -> None:
    """Each refused name onto its Tidal class, where the class does not give it."""
    for owner, names in REFUSED.items():
        cls = classes.get(owner)
        if cls is None:
            continue
        for name, (why, alternative) in names.items():
            if name not in vars(cls):
                setattr(cls, name, _refusal(owner, name, why, alternative, name in _PROPERTIES))
