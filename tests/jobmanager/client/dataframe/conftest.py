"""A small Parquet table and a Tidal DataFrame session over it, with no cluster: planning and
the refusals happen in the client, before anything is submitted."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest


@pytest.fixture
def sales(tmp_path) -> str:
    path = tmp_path / "sales"
    path.mkdir()
    pq.write_table(
        pa.table(
            {
                "region": ["east", "west", "east"],
                "amount": [1.5, 2.0, None],
                "units": pa.array([1, 2, 3], pa.int32()),
            }
        ),
        path / "part-0.parquet",
    )
    return str(path)


@pytest.fixture
def spark():
    from jobmanager.client.dataframe import SparkSession

    session = SparkSession.builder.getOrCreate()
    yield session
    session.stop()
