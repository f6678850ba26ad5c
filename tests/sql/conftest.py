"""Fixtures for the SQL tests: the real TPC-H tables (DuckDB's dbgen) at scale 0.01.

Generated once per test session into the session's temporary folder (about a second, so no
cache across sessions: concurrent runs on one machine then share nothing). The part files are
cut small (files of 1 MiB in row groups of 128 KiB, where the default is 64 MiB and 8 MiB), so
that the 1.8 MiB of lineitem is 2 files of 15 row groups a source can split: at the default
layout every table is one row group, one split, and so one task, whatever the volume per task,
and a planned query would run as one chained task that never crosses an exchange."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.tpch_dbgen import generate

DBGEN_SCALE = 0.01
LAYOUT = {"file_bytes": 1 << 20, "row_group_bytes": 128 << 10}


@pytest.fixture(scope="session")
def tpch_dbgen_data(tmp_path_factory) -> Path:
    """The directory holding the 8 TPC-H tables at scale 0.01, one folder each."""
    directory = tmp_path_factory.mktemp("tpch-dbgen")
    generate(directory, DBGEN_SCALE, **LAYOUT)
    return directory


@pytest.fixture(scope="session")
def tpch_dbgen_tables(tpch_dbgen_data) -> dict[str, str]:
    """The tables' paths by name, as ``Client.sql(tables=...)`` takes them."""
    return generate(tpch_dbgen_data, DBGEN_SCALE, **LAYOUT)
