"""A database filled by the demo (real server, real exporter, every evaluator), built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragfault.demo.run import run_demo


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    run_demo(db)
    return db
