"""``spark.catalog`` and ``spark.udf`` of Tidal's session.

Tidal's catalogue is one catalogue (``spark_catalog``) of one database (``default``) holding the
session's temporary views, as PySpark's holds them: they can be listed, looked up, described and
dropped. Tables of a metastore (create, refresh, recover partitions) and functions of one are
refused, as are Python UDFs, which run Python per row. Tidal keeps nothing cached, so caching a
table, like ``DataFrame.cache``, changes nothing.
"""

from __future__ import annotations

from sqlframe.base.catalog import CatalogMetadata, Column, Database, Table, _BaseCatalog
from sqlframe.base.udf import _BaseUDFRegistration

from jobmanager.client.dataframe.unsupported import unsupported

__all__ = ["Catalog", "UDFRegistration"]

_CATALOG, _DATABASE = "spark_catalog", "default"
_METASTORE = (
    "Tidal's catalogue holds only the session's temporary views",
    "read the files with spark.read and createOrReplaceTempView",
)


class Catalog(_BaseCatalog["SparkSession", "DataFrame", "Table"]):
    def currentCatalog(self) -> str:
        return _CATALOG

    def currentDatabase(self) -> str:
        return _DATABASE

    def setCurrentCatalog(self, catalogName: str) -> None:
        self._only(catalogName, _CATALOG, "setCurrentCatalog")

    def setCurrentDatabase(self, dbName: str) -> None:
        self._only(dbName, _DATABASE, "setCurrentDatabase")

    def listCatalogs(self, pattern: str | None = None) -> list[CatalogMetadata]:
        return [CatalogMetadata(name=_CATALOG, description=None)]

    def listDatabases(self, pattern: str | None = None) -> list[Database]:
        return [self.getDatabase(_DATABASE)]

    def databaseExists(self, dbName: str) -> bool:
        return dbName.split(".")[-1] == _DATABASE

    def getDatabase(self, dbName: str) -> Database:
        self._only(dbName.split(".")[-1], _DATABASE, "getDatabase")
        return Database(
            name=_DATABASE, catalog=_CATALOG, description="default database", locationUri=""
        )

    def listTables(self, dbName: str | None = None, pattern: str | None = None) -> list[Table]:
        import fnmatch

        names = sorted(self.session.temp_views)
        if pattern:
            names = [n for n in names if fnmatch.fnmatch(n, pattern)]
        return [self.getTable(n) for n in names]

    def tableExists(self, tableName: str, dbName: str | None = None) -> bool:
        return tableName in self.session.temp_views

    def getTable(self, tableName: str) -> Table:
        if tableName not in self.session.temp_views:
            raise unsupported(
                f"Catalog.getTable({tableName!r})",
                "no such temporary view; " + _METASTORE[0],
                _METASTORE[1],
            )
        return Table(
            name=tableName,
            catalog=None,
            namespace=[],
            description=None,
            tableType="TEMPORARY",
            isTemporary=True,
        )

    def listColumns(self, tableName: str, dbName: str | None = None) -> list[Column]:
        frame = self.session.table(tableName)
        return [
            Column(
                name=f.name,
                description=None,
                dataType=f.dataType.simpleString(),
                nullable=f.nullable,
                isPartition=False,
                isBucket=False,
            )
            for f in frame.schema.fields
        ]

    def dropTempView(self, viewName: str) -> bool:
        return self.session.temp_views.pop(viewName, None) is not None

    def cacheTable(self, tableName: str, storageLevel=None) -> None:
        pass

    def uncacheTable(self, tableName: str) -> None:
        pass

    def clearCache(self) -> None:
        pass

    @staticmethod
    def _only(name: str, allowed: str, method: str) -> None:
        if name != allowed:
            raise unsupported(
                f"Catalog.{method}({name!r})", f"Tidal has one, {allowed!r}", f"use {allowed!r}"
            )


class UDFRegistration(_BaseUDFRegistration["SparkSession"]):
    def register(self, name, f, returnType=None):
        raise unsupported("spark.udf.register", "a Python UDF runs Python per row", "udf")

    def registerJavaFunction(self, name, javaClassName, returnType=None):
        raise unsupported(
            "spark.udf.registerJavaFunction",
            "Tidal runs no JVM functions of yours",
            "use the built-in functions (pyspark.sql.functions)",
        )
