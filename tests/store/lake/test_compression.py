"""The lake's raw tables, its appended state tables and its signal tables write ZSTD Parquet, set once
per table in the catalog; a value an operator set there stays."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from collector.store.lake.attach import LAKE
from collector.store.lake.schema import SIGNAL_TABLES, STATE_TABLES
from collector.store.lake.store import LakeStore
from collector.store.lake.tables import RAW_TABLES
from tests.collector.test_store_write import arrow, rag_trace
from tests.store.conftest import Lake


@pytest.fixture
def opened() -> Iterator[list[LakeStore]]:
    stores: list[LakeStore] = []
    yield stores
    for s in stores:
        s.close()


def open_lake(lake: Lake, stores: list[LakeStore]) -> LakeStore:
    s = LakeStore(lake.catalog, lake.data_path, extension_repository=False)
    stores.append(s)
    return s


def table_options(store: LakeStore) -> list[tuple[str, str]]:
    return sorted(
        (str(entry), str(value))
        for entry, value in store.con.execute(
            f"SELECT scope_entry, value FROM {LAKE}.options() WHERE option_name = 'parquet_compression' "
            "AND scope = 'TABLE'"
        ).fetchall()
    )


def parquet_codecs(data_path: Path) -> dict[str, set[str]]:
    """The compression of every column chunk of every Parquet file, by the table's directory."""
    files = sorted(str(p) for p in data_path.rglob("*.parquet"))
    assert files, "nothing written to the data path"
    con = duckdb.connect(":memory:")
    try:
        out: dict[str, set[str]] = {}
        for name, codec in con.execute(
            "SELECT DISTINCT file_name, compression FROM parquet_metadata(?)", [files]
        ).fetchall():
            out.setdefault(Path(name).parent.name, set()).add(str(codec))
        return out
    finally:
        con.close()


def many_traces() -> list:
    """Enough spans that a commit writes Parquet files (a small one is inlined in the catalog)."""
    return [span for _ in range(50) for span in rag_trace()]


COMPRESSED = (*RAW_TABLES.values(), *STATE_TABLES, *SIGNAL_TABLES)


def test_raw_state_and_signal_tables_are_written_zstd(lake: Lake, opened: list[LakeStore]) -> None:
    store = open_lake(lake, opened)
    assert table_options(store) == sorted((f"main.{table}", "zstd") for table in COMPRESSED)
    assert store.write_spans(store.cursor(), arrow(many_traces())) == 100
    # a state and a signal table's rows (enough of them to be written to files, not inlined)
    store.con.execute(
        "INSERT INTO trace_settles (trace_id, settle_id, query_text) SELECT trace_id, 's', span_id FROM span_rows"
    )
    store.con.execute(
        "INSERT INTO log_records (record_id, trace_id, body_text) SELECT trace_id || span_id, trace_id, name "
        "FROM span_rows"
    )
    codecs = parquet_codecs(lake.data_path)
    for table in ("span_rows", "step_rows", "step_document_rows", "trace_settles", "log_records"):
        assert codecs.get(table) == {"ZSTD"}, (table, codecs)
    # a second collector on the same lake sets nothing again
    other = open_lake(lake, opened)
    assert table_options(other) == table_options(store)


def test_a_compression_set_in_the_catalog_stays(lake: Lake, opened: list[LakeStore]) -> None:
    first = open_lake(lake, opened)
    first.con.execute(f"CALL {LAKE}.set_option('parquet_compression', 'snappy', table_name => 'step_rows')")
    first.close()
    opened.remove(first)
    store = open_lake(lake, opened)
    assert dict(table_options(store))["main.step_rows"] == "snappy"
    assert store.write_spans(store.cursor(), arrow(many_traces())) == 100
    assert parquet_codecs(lake.data_path)["step_rows"] == {"SNAPPY"}
