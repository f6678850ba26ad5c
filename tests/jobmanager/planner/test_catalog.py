"""The catalogue on real Parquet files: a table's footers are read once for the files as they
were listed, and a file written again is described again."""

import pyarrow as pa
import pyarrow.parquet as pq

from jobmanager.planner import Catalog
from jobmanager.planner import catalog as catalog_module


def footers_read(monkeypatch) -> list[str]:
    read: list[str] = []
    real = catalog_module.pq.read_metadata

    def counted(handle, *args, **kwargs):
        read.append(getattr(handle, "path", str(handle)))
        return real(handle, *args, **kwargs)

    monkeypatch.setattr(catalog_module.pq, "read_metadata", counted)
    return read


def test_a_tables_footers_are_read_once_for_the_same_files(tmp_path, monkeypatch):
    folder = tmp_path / "orders"
    folder.mkdir()
    for part in range(2):
        pq.write_table(pa.table({"o_orderkey": [part, part + 10]}), folder / f"part-{part}.parquet")
    read = footers_read(monkeypatch)
    first = Catalog.from_tables({"orders": str(folder)}).table("orders")
    again = Catalog.from_tables({"o": str(folder)}).table("o")
    assert len(read) == 2  # one per file, the first time only
    assert first.columns == again.columns and again.rows == first.rows == 4


def test_a_file_written_again_is_described_again(tmp_path, monkeypatch):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": [1, 2]}), path)
    read = footers_read(monkeypatch)
    assert [c.name for c in Catalog.from_tables({"t": str(path)}).table("t").columns] == ["a"]
    pq.write_table(pa.table({"a": [1, 2, 3], "b": ["x", "y", "z"]}), path)
    table = Catalog.from_tables({"t": str(path)}).table("t")
    assert [c.name for c in table.columns] == ["a", "b"] and table.rows == 3
    assert len(read) == 2
