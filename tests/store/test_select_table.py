"""``reader.select_table`` keeps a statement's rows as Arrow under ``run_select``'s guard: its first rows
are what ``run_select`` gives for the same statement (the JSON-ready values, a HUGEINT sum, times and
lists included), the row cap cuts it and says so, and a statement's error or its time limit comes out
as ``run_select``'s does."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count
from pathlib import Path

import duckdb
import pytest

from collector.store.reader import run_select, select_table
from ragfault_core.errors import QueryRefused, QueryTimeout

SQL = (
    "SELECT i, sum(i) OVER (ORDER BY i) AS total, TIMESTAMP '2026-12-01 10:00:00' + to_hours(i) AS at, "
    "[i, i + 1] AS pair, CASE WHEN i % 2 = 0 THEN 'even' END AS label "
    "FROM range($n) t(i) ORDER BY i"
)


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    c = duckdb.connect(str(tmp_path / "select.duckdb"))
    yield c
    c.close()


def test_the_first_rows_are_run_selects(con: duckdb.DuckDBPyConnection) -> None:
    kept = select_table(con, SQL, {"n": 20_000}, row_cap=100_000)
    assert kept.table.num_rows == 20_000 and not kept.truncated
    assert "HUGEINT" in kept.types  # sum of BIGINT: an int in JSON, not a float
    want = run_select(con, SQL, {"n": 20_000}, row_cap=50)
    got = kept.head(50)
    assert got.columns == want.columns and got.types == want.types
    assert got.rows == want.rows
    assert isinstance(got.rows[3][1], int) and got.rows[1][2] == "2026-12-01T11:00:00"


def test_the_row_cap_cuts_and_says_so(con: duckdb.DuckDBPyConnection) -> None:
    kept = select_table(con, SQL, {"n": 20_000}, row_cap=10_001)
    assert kept.table.num_rows == 10_001 and kept.truncated
    assert kept.table.column("i").to_pylist()[-1] == 10_000


def test_errors_and_the_time_limit_are_run_selects(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(QueryRefused, match="no_such_table"):
        select_table(con, "SELECT * FROM no_such_table", row_cap=10)
    with pytest.raises(QueryRefused, match="only SELECT"):
        select_table(con, "CREATE TABLE t (i INTEGER)", row_cap=10)
    ticks = count(step=20.0)  # each look at the clock is 20 s later: the first batch is over the limit
    with pytest.raises(QueryTimeout):
        select_table(con, SQL, {"n": 50_000}, row_cap=100_000, timeout=30.0, clock=lambda: next(ticks))
    assert con.execute("SELECT 42").fetchall() == [(42,)]  # the read-only transaction was rolled back
