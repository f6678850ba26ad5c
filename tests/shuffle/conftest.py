"""Fixtures for the data-plane tests: real directories, real files, real Arrow tables."""

from __future__ import annotations

import datetime

import numpy as np
import pyarrow as pa
import pytest

from shuffle import ShuffleDirectory


@pytest.fixture
def shuffle_directory(tmp_path):
    directory = ShuffleDirectory(tmp_path / "shuffle")
    yield directory
    directory.close()


def _mixed_table(num_rows: int, seed: int = 0) -> pa.Table:
    """Ints with repeats, floats, strings with nulls, dates: enough variety to catch a format
    or partitioning bug, small enough to compare row by row."""
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, max(1, num_rows // 3), num_rows)
    names = [None if i % 7 == 3 else f"name-{i % 11}-{'x' * (i % 5)}" for i in range(num_rows)]
    days = [datetime.date(2020, 1, 1) + datetime.timedelta(days=int(d)) for d in keys % 400]
    return pa.table(
        {
            "key": pa.array(keys, pa.int64()),
            "value": pa.array(rng.standard_normal(num_rows)),
            "name": pa.array(names, pa.string()),
            "day": pa.array(days, pa.date32()),
        }
    )


@pytest.fixture
def mixed_table():
    """A builder: ``mixed_table(num_rows, seed=0) -> pa.Table``."""
    return _mixed_table
