"""What user SQL may reach, checked on DuckDB's own parse tree (``json_serialize_sql``).

The instance sandbox (``duck.sandbox``) turns file and network access off, but DuckDB still lets a
statement read the database's own files (the database file, its WAL, the temporary directory), and
a few table functions act on the instance (``checkpoint()``, ``force_checkpoint()``, logging and
profiling switches). So a user SELECT is walked before it runs and refused when it names:

- a table function outside ``TABLE_FUNCTIONS`` (every file reader, ``glob``, ``checkpoint``,
  ``query``/``query_table``, ``duckdb_settings``, ``duckdb_databases``, ...);
- a system view in ``HIDDEN_VIEWS`` (they show the server's paths and settings);
- a scalar function in ``HIDDEN_FUNCTIONS`` (settings and variables);
- a table reference that is not a plain name (``FROM 'file.csv'``, a path).

User SQL reaches tables and views, and nothing on disk.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import duckdb

from collector.errors import QueryRefused

# Table functions that only compute or read the catalog's names and types.
TABLE_FUNCTIONS = frozenset(
    {
        "range",
        "generate_series",
        "unnest",
        "json_each",
        "json_tree",
        "duckdb_tables",
        "duckdb_views",
        "duckdb_columns",
        "duckdb_schemas",
        "duckdb_types",
        "duckdb_constraints",
        "duckdb_indexes",
        "duckdb_functions",
        "duckdb_keywords",
        "pragma_table_info",
    }
)

# System views and scalar functions that show paths, settings or variables of the server.
HIDDEN_VIEWS = frozenset({"duckdb_databases", "pragma_database_list", "pg_settings", "duckdb_logs"})
HIDDEN_FUNCTIONS = frozenset({"current_setting", "getvariable", "getenv"})

_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def refusal(con: duckdb.DuckDBPyConnection, sql: str) -> str | None:
    """Why ``sql`` (one SELECT) may not run through the user SQL API, or None when it may."""
    row = con.execute("SELECT json_serialize_sql($sql)", {"sql": sql}).fetchone()
    tree = json.loads(row[0]) if row else {"error": True}
    if tree.get("error"):
        return f"the statement cannot be checked: {tree.get('error_message', 'not a plain SELECT')}"
    for node in _nodes(tree.get("statements", [])):
        kind = node.get("type")
        if kind == "TABLE_FUNCTION":
            fn = node.get("function") or {}
            name = str(fn.get("function_name", "")).lower()
            if name not in TABLE_FUNCTIONS:
                return f"table function {name}() is not available to user SQL"
        elif kind == "BASE_TABLE":
            name = str(node.get("table_name", ""))
            if not _PLAIN_NAME.match(name):
                return "a quoted file or path is not a table or view name (user SQL reads no files)"
            if name.lower() in HIDDEN_VIEWS:
                return f"{name} is not available to user SQL"
        elif node.get("class") == "FUNCTION":
            name = str(node.get("function_name", "")).lower()
            if name in HIDDEN_FUNCTIONS:
                return f"function {name}() is not available to user SQL"
    return None


def check(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    reason = refusal(con, sql)
    if reason is not None:
        raise QueryRefused(reason)
