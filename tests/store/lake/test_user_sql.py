"""User SQL on a lake reaches the lake's tables and views, not the store's own databases: the
catalog's PostgreSQL database (claims and leases), DuckLake's metadata (the data files' paths) and
the in-memory database (this process's claim holder)."""

from __future__ import annotations

import pytest

from collector.store.lake.store import LakeStore
from collector.store.reader import run_select
from ragfault_core.errors import QueryRefused
from tests.store.conftest import Lake


def test_user_sql_cannot_name_the_catalog_the_metadata_or_the_claim_holder(lake: Lake) -> None:
    store = LakeStore(lake.catalog, lake.data_path, extension_repository=False)
    try:
        con = store.cursor()
        for name in (
            "lake_catalog.public.ragfault_claim",
            "__ducklake_metadata_lake.public.ducklake_data_file",
            "memory.main.ragfault_claimer",
        ):
            assert con.execute(f"SELECT count(*) FROM {name}").fetchall()  # there, for the store itself
            with pytest.raises(QueryRefused, match="not available to user SQL"):
                run_select(store.cursor(), f"SELECT * FROM {name}", user=True)
        # the lake's own names are what user SQL reads
        result = run_select(
            store.cursor(), "SELECT count(*) FROM traces JOIN trace_settles USING (trace_id)", user=True
        )
        assert [list(r) for r in result.rows] == [[0]]
    finally:
        store.close()
