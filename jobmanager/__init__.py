"""Tidal's JobManager and user API.

    from jobmanager import Client, JobGraph, Partitioner, FileSource, ParquetSink, spark, arrow
    rows = Client().sql("SELECT ...", tables={"lineitem": "/data/lineitem"}).wait().to_arrow()

Names are imported on first use, so the pure scheduling core never pulls in Ray or Spark.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "JobGraph": "jobmanager.model.jobgraph",
    "JobVertex": "jobmanager.model.jobgraph",
    "Partitioner": "jobmanager.model.jobgraph",
    "ResultPartitionType": "jobmanager.model.jobgraph",
    "DistributionPattern": "jobmanager.model.jobgraph",
    "Configuration": "jobmanager.model.config",
    "FileSource": "jobmanager.model.sources",
    "ParquetSink": "jobmanager.model.operators",
    "spark": "jobmanager.model.operators",
    "arrow": "jobmanager.model.operators",
    "Client": "jobmanager.client.client",
    "JobHandle": "jobmanager.client.client",
    "TidalError": "jobmanager.errors",
    "JobManagerLost": "jobmanager.errors",
    "JobStoreError": "jobmanager.errors",
    "NonRecoverableError": "jobmanager.errors",
    "SqlError": "jobmanager.errors",
    "ResultTooLargeError": "jobmanager.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'jobmanager' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
