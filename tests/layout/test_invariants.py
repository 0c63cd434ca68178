"""Grep-able invariants of the layout, each with the allowlist of today's offenders.

An allowlist only shrinks: a test fails on an offender that is not listed (or a listed module that
gained more) and on a listed one that is gone or has fewer (lower the entry in the same change), so
every list says exactly what is left to do. The scanners read the syntax tree (``scan.py``); the
tests at the end show that each of them finds what it is meant to find.
"""

from __future__ import annotations

import ast

import pytest

from collector.store.sqlfiles import all_statements
from queries import Query, all_queries
from tests.layout import scan

# Modules outside the store that hold a raw DuckDB connection (``import duckdb``, the store's ``Con``
# alias imported, ``DuckDBPyConnection`` named): the store as a typed interface with an opaque
# handle removes them. Value: how many such places the module has.
DUCKDB_HANDLES: dict[str, int] = {}

# String constants outside the store that are SQL statements (``scan.is_sql``): statements belong in
# the store's files, run through its typed operations. Value: how many the module holds.
SQL_LITERALS: dict[str, int] = {}

# Parameters named ``runtime`` typed ``Any``: a service locator components patch attributes onto.
# Components are given a typed context (``collector.components.Context``) instead: none is left.
ANY_RUNTIME: dict[str, int] = {}

# Statements written in the store's Python rather than in its ``sql/`` files. What is left is of three
# kinds: session control that takes values a parameter cannot (``ATTACH '<path>'``, ``SET``, ``USE``,
# ``BEGIN``/``COMMIT``), statements composed from the model's columns (the lake's tables and views, its
# claims tables in PostgreSQL under a configured name), and the catalog probes of ``sqlguard`` and the
# migrations. Value: how many the module holds; the list only shrinks.
STORE_INLINE_SQL: dict[str, int] = {
    "collector/store/file/connect.py": 11,  # ATTACH, USE, SET: the file's session
    "collector/store/file/ingest.py": 2,
    "collector/store/file/store.py": 3,
    "collector/store/lake/attach.py": 7,  # LOAD, ATTACH of the catalog and data path
    "collector/store/lake/claims.py": 13,  # the claims table in PostgreSQL, under its configured name
    "collector/store/lake/ddl.py": 1,
    "collector/store/lake/holders.py": 10,  # the holders table and advisory locks in PostgreSQL
    "collector/store/lake/ingest.py": 4,
    "collector/store/lake/schema.py": 23,  # the lake's views, composed from the model's columns
    "collector/store/lake/store.py": 6,
    "collector/store/lake/tables.py": 11,  # the raw tables from the model, their compression options
    "collector/store/lease.py": 7,
    "collector/store/reader.py": 2,
    "collector/store/schema.py": 6,
    "collector/store/sqlguard.py": 7,  # probes of what user SQL may reach
    "collector/store/traces.py": 2,
    "collector/store/tx.py": 3,  # BEGIN, COMMIT, ROLLBACK
    "collector/store/ui_facts_tables.py": 3,
}

# Store operations whose rows are not typed (their return annotation mentions ``Any``): the reads return
# named tuples (``collector/store/rows.py``) or models instead. Value: how many the module has.
UNTYPED_OPERATIONS: dict[str, int] = {
    "collector/store/promote.py": 1,  # trace_row: a record of JSON values, by column name
    "collector/store/sampling.py": 1,  # feedback_rows: the root's and resource's parsed attributes
}

MAX_LINES = 400
# Modules over MAX_LINES, to be split by concern (none is generated or data: such a module would be
# listed in DATA_MODULES instead, which may be any length).
OVERSIZED: dict[str, str] = {}
DATA_MODULES: dict[str, str] = {}

# SQL files whose declared parameters (``-- params:``) differ from the ones their body uses: a
# statement is complete in its file, every window and filter a parameter it uses.
SQL_PARAMS: dict[str, str] = {}


def _outside_store() -> list[str]:
    return [m for m in scan.modules() if not m.startswith(scan.STORE)]


def _found(measure: dict[str, int]) -> dict[str, int]:
    return {m: n for m, n in measure.items() if n}


def test_no_duckdb_handle_outside_the_store() -> None:
    found = _found({m: scan.duckdb_handles(scan.tree(m)) for m in _outside_store()})
    assert not scan.compare(found, DUCKDB_HANDLES, "DuckDB handle(s)")


def test_no_sql_literal_outside_the_store() -> None:
    found = _found({m: scan.sql_literals(scan.tree(m)) for m in _outside_store()})
    assert not scan.compare(found, SQL_LITERALS, "SQL literal(s)")


def test_the_stores_statements_are_in_its_files() -> None:
    found = _found({m: scan.sql_literals(scan.tree(m)) for m in scan.modules() if m.startswith(scan.STORE)})
    assert not scan.compare(found, STORE_INLINE_SQL, "inline SQL statement(s) in the store")


def test_store_operations_return_typed_rows() -> None:
    found = _found(
        {m: scan.untyped_operations(scan.tree(m)) for m in scan.modules() if m.startswith(scan.STORE)}
    )
    assert not scan.compare(found, UNTYPED_OPERATIONS, "store operation(s) returning untyped rows")


def test_no_any_typed_runtime_parameter() -> None:
    found = _found({m: scan.any_runtime_params(scan.tree(m)) for m in scan.modules()})
    assert not scan.compare(found, ANY_RUNTIME, "runtime: Any parameter(s)")


def test_no_module_over_the_line_limit() -> None:
    over = {m for m in scan.modules() if scan.line_count(m) > MAX_LINES and m not in DATA_MODULES}
    new = sorted(f"{m}: {scan.line_count(m)} lines" for m in over - set(OVERSIZED))
    gone = sorted(set(OVERSIZED) - over)
    assert not new, f"modules over {MAX_LINES} lines: split them by concern: {new}"
    assert not gone, f"no longer over {MAX_LINES} lines, take them off OVERSIZED: {gone}"
    missing = sorted(m for m in DATA_MODULES if m not in scan.modules())
    assert not missing, f"DATA_MODULES names modules that do not exist: {missing}"


def _param_mismatch(q: Query) -> str | None:
    declared, used = set(q.params), q.used_params()
    if declared == used:
        return None
    return f"declares unused {sorted(declared - used)}, uses undeclared {sorted(used - declared)}"


def test_sql_files_declare_exactly_the_parameters_they_use() -> None:
    """Read at test time, so the list follows the files: the store's statements and the bundled
    queries."""
    found = {f"store {k}": _param_mismatch(q) for k, q in all_statements().items()}
    found |= {f"query {k}": _param_mismatch(q) for k, q in all_queries().items()}
    bad = {k: why for k, why in found.items() if why}
    new = {k: why for k, why in bad.items() if k not in SQL_PARAMS}
    fixed = sorted(set(SQL_PARAMS) - set(bad))
    assert not new, f"SQL files whose parameters differ from their body's: {new}"
    assert not fixed, f"these now declare exactly what they use; take them off SQL_PARAMS: {fixed}"


# The scanners find what they are meant to find (so an empty result means something).


@pytest.mark.parametrize(
    ("text", "sql"),
    [
        ("SELECT 1", True),
        ("-- name: x\n-- params: none\nWITH t AS (SELECT 1) SELECT * FROM t", True),
        ("  INSERT INTO t VALUES (1)", True),
        ("select a from t where b = 1", True),
        ("create or replace table t (a INT)", True),
        ("CHECKPOINT", True),
        ("With the lake, the store attaches a catalog.", False),
        ("select a profile in the settings", False),
        ("Settings are read once", False),
        ("AND received_at BETWEEN $lo AND $hi", False),  # a fragment, not a statement
        ("SELECTED rows", False),
    ],
)
def test_what_counts_as_an_sql_literal(text: str, sql: bool) -> None:
    assert scan.is_sql(text) is sql


def test_the_scanners_count_what_they_are_meant_to() -> None:
    code = '''
"""SELECT in a docstring is prose."""
import duckdb
from collector.store.base import Con, Tx
from typing import Any
Q = "SELECT * FROM traces"
F = f"SELECT {1} FROM steps"
def f(runtime: Any, cursor: Con, handle: Tx) -> None:
    """DELETE nothing."""
def g(runtime: Any | None = None, other: Any = None) -> None: ...
def h(runtime: "Runtime") -> None: ...
def k(con: duckdb.DuckDBPyConnection, cur: base.Con, opaque: base.Tx) -> None: ...
@operation
def rows(con: Con) -> list[tuple[Any, ...]]: ...
@operation
def typed(con: Con) -> list[Row]: ...
'''
    module = ast.parse(code)
    assert scan.sql_literals(module) == 2
    assert scan.any_runtime_params(module) == 2
    assert scan.untyped_operations(module) == 1
    assert scan.duckdb_handles(module) == 4


def test_compare_fails_both_ways() -> None:
    assert scan.compare({"a.py": 2}, {"a.py": 2}, "x") == []
    assert "new ones" in scan.compare({"a.py": 3}, {"a.py": 2}, "x")[0]
    assert "new ones" in scan.compare({"b.py": 1}, {}, "x")[0]
    assert "only shrinks" in scan.compare({"a.py": 1}, {"a.py": 2}, "x")[0]
    assert "only shrinks" in scan.compare({}, {"a.py": 2}, "x")[0]
