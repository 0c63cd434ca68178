"""Every bundled query: a well-formed header, declared parameters equal to used ones, and it runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from collector.store import Store
from collector.store.reader import run_select
from queries import all_queries, load_query, parse
from tests.demo_db import demo_db  # noqa: F401 (fixture)

QUERIES = all_queries()


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_header_and_parameters(name: str) -> None:
    q = QUERIES[name]
    assert q.name == name
    assert q.description and q.grain and q.returns, f"{name}: header needs description, grain and returns"
    assert set(q.params) == q.used_params(), (
        f"{name}: declared {sorted(q.params)} but uses {sorted(q.used_params())}"
    )
    if q.view:
        assert not q.params, "a view takes no parameters"


def test_parameter_check_catches_undeclared_use() -> None:
    q = parse("-- name: x\n-- params: $a VARCHAR\nSELECT $a, $b, '$c' AS literal")
    assert q.used_params() == {"a", "b"}
    with pytest.raises(KeyError):
        q.bind({"zzz": 1})


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_runs_on_demo_database(name: str, demo_db: Path) -> None:  # noqa: F811
    q = QUERIES[name]
    args: dict[str, Any] = {"base_run": "demo-v1", "new_run": "demo-v1"} if "base_run" in q.params else {}
    store = Store(demo_db, read_only=True)
    try:
        res = run_select(store.cursor(), q.sql, q.bind(args), row_cap=10_000)
    finally:
        store.con.close()
    assert res.columns, name
    returns = re.sub(r"\([^)]*\)", "", q.returns.replace("\n", " "))  # drop explanations in parentheses
    for col in (c.strip().strip('"') for c in returns.split(",")):
        if col and col != "...":
            assert col in res.columns, f"{name}: header says it returns {col!r}; got {res.columns}"
    if name in ("attribution", "root_causes", "case_results", "layer_metrics", "quadrant", "run_diff"):
        assert res.rows, f"{name} returned no rows on the demo database"


def test_root_causes_cover_demo_run(demo_db: Path) -> None:  # noqa: F811
    store = Store(demo_db, read_only=True)
    q = load_query("root_causes")
    try:
        res = run_select(store.cursor(), q.sql, q.bind({"run_id": "demo-v1"}))
    finally:
        store.con.close()
    total = sum(r[res.columns.index("traces")] for r in res.rows)
    assert total == 17
    shares = sum(r[res.columns.index("share")] for r in res.rows)
    assert abs(shares - 1.0) < 1e-9
