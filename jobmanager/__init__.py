"""Tidal's JobManager and user API.

    from jobmanager import Client, JobGraph, Partitioner, FileSource, ParquetSink, spark, arrow

Names are imported on first use, so the pure scheduling core never pulls in Ray or Spark.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "JobGraph": "jobmanager.jobgraph",
    "JobVertex": "jobmanager.jobgraph",
    "Partitioner": "jobmanager.jobgraph",
    "ResultPartitionType": "jobmanager.jobgraph",
    "DistributionPattern": "jobmanager.jobgraph",
    "Configuration": "jobmanager.config",
    "FileSource": "jobmanager.sources",
    "ParquetSink": "jobmanager.operators",
    "spark": "jobmanager.operators",
    "arrow": "jobmanager.operators",
    "Client": "jobmanager.client",
    "JobHandle": "jobmanager.client",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'jobmanager' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
