"""Writing a sink's part files in a task: whole or not at all, each attempt its own.
"""

from __future__ import annotations

import os
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

from jobmanager.model import storage

__all__ = ["write_part_file"]


def write_part_file(table: pa.Table, path: str) -> None:
    """Write ``table`` to ``path`` whole or not at all. On a local disk: a hidden temporary file
    (ignored by readers and by the sink's commit) renamed into place; on an object store: one
    object, which appears only once its upload completes."""
    if not storage.is_local(path):
        fs, key = storage.filesystem(path)
        with fs.open(key, "wb") as file:
            pq.write_table(table, file)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = os.path.join(os.path.dirname(path), f".{uuid.uuid4().hex}.tmp")
    try:
        pq.write_table(table, temporary)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
