"""The lake tests need DuckDB 1.5.5 with the ``lake`` extra; elsewhere they are run in that
environment by ``tests/store/test_lake_venv.py``."""

from __future__ import annotations

import pytest

from collector.store.lake.attach import EXTENSIONS, package_file


def _lake_set() -> bool:
    return all(package_file(package, name) for package, name in EXTENSIONS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _lake_set():
        return
    skip = pytest.mark.skip(
        reason="needs the lake extra (DuckDB 1.5.5 + extension packages); tests/store/test_lake_venv.py "
        "runs these in .lake-venv"
    )
    for item in items:
        if "tests/store/lake/" in str(item.path).replace("\\", "/"):
            item.add_marker(skip)
