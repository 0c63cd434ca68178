"""What a test does when a program it needs from the system is missing (haproxy, PostgreSQL's server
programs, chromium and a font with CJK glyphs): it fails, naming ``./scripts/test.sh``, which installs
them, because a skip goes unseen and the suite would pass without having tested the lake or the UI.
A machine that is to go without one says so in ``RAGFAULT_TESTS_WITHOUT`` (names separated by spaces
or commas, or ``all``, as the script reads it); the tests that need it then skip, saying why."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

WITHOUT = "RAGFAULT_TESTS_WITHOUT"
NAMES = ("haproxy", "postgresql", "chromium")


def going_without(name: str) -> bool:
    """Whether ``RAGFAULT_TESTS_WITHOUT`` lets the tests needing ``name`` skip."""
    names = set(os.environ.get(WITHOUT, "").replace(",", " ").split())
    return name in names or "all" in names


def missing(name: str, what: str) -> NoReturn:
    """Fail the test (``what`` is missing), or skip it where the machine goes without ``name``."""
    assert name in NAMES, name
    if going_without(name):
        pytest.skip(f"{what} ({WITHOUT}={os.environ[WITHOUT]})")
    pytest.fail(
        f"{what}: ./scripts/test.sh installs it (or set {WITHOUT}={name} to skip the tests that need it)",
        pytrace=False,
    )


def duckdb_at_least(major: int, why: str) -> pytest.MarkDecorator:
    """Skip a test of a DuckDB behaviour that an older DuckDB (the ``lake`` extra pins 1.x) does not
    have, saying which; the suite's own environment runs it."""
    import duckdb

    have = int(duckdb.__version__.split(".", 1)[0])
    return pytest.mark.skipif(
        have < major, reason=f"DuckDB {duckdb.__version__}: {why} (DuckDB {major} and later)"
    )
