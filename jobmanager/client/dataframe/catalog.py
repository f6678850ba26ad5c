"""``spark.catalog`` and ``spark.udf`` of Tidal's session: the tables its readers named (with
the columns Spark would give them) and a refusal of Python UDFs, which run Python per row."""

from __future__ import annotations

from sqlframe.base.catalog import _BaseCatalog
from sqlframe.base.udf import _BaseUDFRegistration

from jobmanager.client.dataframe.unsupported import unsupported

__all__ = ["Catalog", "UDFRegistration"]


class Catalog(_BaseCatalog["SparkSession", "DataFrame", "Table"]):
    pass


class UDFRegistration(_BaseUDFRegistration["SparkSession"]):
    def register(self, name, f, returnType=None):
        raise unsupported("spark.udf.register", "a Python UDF runs Python per row", "udf")

    def registerJavaFunction(self, name, javaClassName, returnType=None):
        raise unsupported("spark.udf.registerJavaFunction", "Tidal runs no JVM functions of "
                          "yours", "use the built-in functions (pyspark.sql.functions)")
