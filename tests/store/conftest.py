"""A throwaway PostgreSQL server for the store tests (``tests/pg.py``): one cluster a session, one
database and data directory a test."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.needs import missing
from tests.pg import Postgres, pg_bindir, postgres_cluster

_names = itertools.count()


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    if pg_bindir() is None:
        missing("postgresql", "PostgreSQL's initdb and pg_ctl are not installed")
    with postgres_cluster() as pg:
        yield pg


@dataclass
class Lake:
    catalog: str
    data_path: Path


@pytest.fixture
def lake(postgres: Postgres, tmp_path: Path) -> Lake:
    """An empty lake: a new catalog database and data directory."""
    return Lake(postgres.create_database(f"lake{next(_names)}"), tmp_path / "lake-data")
