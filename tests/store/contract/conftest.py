"""The store contract: the same tests against every backend.

``backend`` opens an empty store of each kind: a DuckDB file, and a DuckLake (a throwaway PostgreSQL
catalog and a data directory) where this environment has the ``lake`` set; elsewhere the lake
half runs inside that environment by ``tests/store/test_lake_venv.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collector.store.lake.attach import EXTENSIONS, package_file

BACKENDS = ("duckdb", "ducklake")

# What the lake backend does not implement yet, by operation: a test of one of them skips there,
# saying which (it is not a pass).
LAKE_MISSING: dict[str, str] = {}


def requires(store: Any, operation: str) -> None:
    """Skip on a backend that does not implement ``operation`` yet, naming it."""
    if type(store).__name__ == "LakeStore" and operation in LAKE_MISSING:
        pytest.skip(f"not on ducklake yet: {LAKE_MISSING[operation]}")


def lake_set() -> bool:
    return all(package_file(package, name) for package, name in EXTENSIONS)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """An empty, writable store of each backend (``file.store.Store`` or ``lake.store.LakeStore``)."""
    if request.param == "duckdb":
        from collector.store import Store

        store: Any = Store(tmp_path / "contract.duckdb")
    else:
        if not lake_set():
            pytest.skip("needs the lake extra (DuckDB 1.5.5 + extension packages): run in .lake-venv")
        from collector.store.lake.store import LakeStore

        lake = request.getfixturevalue("lake")
        store = LakeStore(lake.catalog, lake.data_path, extension_repository=False)  # offline: the packages
    try:
        yield store
    finally:
        store.close()
