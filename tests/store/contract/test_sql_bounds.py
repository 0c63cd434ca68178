"""The SQL API's bounds on what a user query builds hold on every backend and DuckDB version: the
guards are written into the query's parse tree, whose layout differs between DuckDB 1.5 (the lake's
pinned set) and 2.x."""

from __future__ import annotations

from typing import Any

import pytest

from collector.store.reader import run_select
from ragfault_core.errors import QueryResultTooLarge

BOMBS = [
    "SELECT repeat('x', 1000000) AS s FROM range(3)",
    "SELECT range(0, 10000000) AS l",
    "WITH RECURSIVE t(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM t WHERE n < 30) "
    "SELECT length(s) AS l FROM t",
    "SELECT length(concat(repeat('x', 60000), repeat('y', 60000), repeat('z', 60000))) AS l",
]


@pytest.mark.parametrize("sql", BOMBS)
def test_a_query_that_builds_a_wide_value_is_refused_naming_the_setting(backend: Any, sql: str) -> None:
    with pytest.raises(QueryResultTooLarge, match="sql_max_value_bytes"):
        run_select(
            backend.cursor(), sql, {}, row_cap=100, max_bytes=32 << 20, max_value_bytes=64 << 10, user=True
        )


def test_the_same_calls_under_the_bound_return_their_rows(backend: Any) -> None:
    sql = (
        "SELECT repeat('ab', 2) AS r, range(3) AS g, 'a' || 'b' || 'c' AS s, [1] || [2] AS l, "
        "concat('x', NULL, 'y') AS c, length(repeat('x', 60000) || 'y') AS w"
    )
    result = run_select(
        backend.cursor(), sql, {}, row_cap=10, max_bytes=32 << 20, max_value_bytes=64 << 10, user=True
    )
    assert result.as_dict()["rows"] == [["abab", [0, 1, 2], "abc", [1, 2], "xy", 60001]]
