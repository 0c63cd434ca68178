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

import copy
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import duckdb
from duckdb.sqltypes import DuckDBPyType

from ragfault_core.errors import QueryRefused

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
# Databases of the instance that are the store's own, not the user's: a lake's catalog database
# (claims, leases) and DuckLake's metadata, and the in-memory database (this process's claim holder).
HIDDEN_CATALOGS = frozenset({"lake_catalog", "__ducklake_metadata_lake", "memory"})

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
            if str(node.get("catalog_name", "")).lower() in HIDDEN_CATALOGS:
                return f"database {node.get('catalog_name')} is not available to user SQL"
        elif node.get("class") == "FUNCTION":
            name = str(node.get("function_name", "")).lower()
            if name in HIDDEN_FUNCTIONS:
                return f"function {name}() is not available to user SQL"
    return None


def check(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    reason = refusal(con, sql)
    if reason is not None:
        raise QueryRefused(reason)


# --- bounding what a user query builds and returns ------------------------------------------------
#
# DuckDB computes a query 2,048 rows (one vector) at a time, and neither ``memory_limit`` nor
# ``operator_memory_limit`` counts the strings a vector holds: ``SELECT repeat('x', 1000000) FROM
# range(2500)`` held a 2 GB vector before its first row could be counted. Two rewrites bound it:
#
# - ``cap_values``: a call that builds a value from a count (``repeat``, ``lpad``, ``rpad``, the
#   list forms of ``range``/``generate_series``, ``list_resize``) first checks the size its
#   arguments ask for, so none builds more than ``max_value_bytes``; a vector of them stays under
#   2,048 × that.
# - ``cap_result``: the rows are counted as they stream, in the query itself (a running total in a
#   streaming window): the vector that would take the result past ``max_bytes`` raises before
#   DuckDB copies it out of the query, so a wide value shared by many rows (a constant, one side
#   of a join) is never copied once per row.

VALUE_MARK = "ragfault: value too wide"
RESULT_MARK = "ragfault: result too large"


def _num(text: str) -> str:
    return f"CAST(({text}) AS DOUBLE)"


def _range_size(a: list[str]) -> str:
    if len(a) == 1:
        return f"8 * {_num(a[0])}"
    span = f"({_num(a[1])} - {_num(a[0])})"
    return f"8 * {span}" if len(a) == 2 else f"8 * {span} / greatest(abs({_num(a[2])}), 1e-300)"


# bytes a call would build, from the SQL of its arguments (an upper bound, not exact)
BUILDERS: dict[str, Callable[[list[str]], str]] = {
    "repeat": lambda a: f"{_num(a[1])} * strlen(CAST(({a[0]}) AS VARCHAR))",
    "lpad": lambda a: f"4 * {_num(a[1])}",
    "rpad": lambda a: f"4 * {_num(a[1])}",
    "range": _range_size,
    "generate_series": _range_size,
    "list_resize": lambda a: f"16 * {_num(a[1])}",
    "array_resize": lambda a: f"16 * {_num(a[1])}",
}


# calls that join values: each adds its other arguments to the widest (values read from tables can
# be wide, so what is checked is what a call adds, not what it returns)
CONCATS = frozenset({"||", "concat", "concat_ws", "list_concat", "list_cat", "array_concat", "array_cat"})


def _args(node: dict[str, Any]) -> list[Any]:
    """A function node's argument expressions. DuckDB 2 writes ``arguments`` (each ``{name,
    expression}``), DuckDB 1.5 ``children`` (the expressions)."""
    if "arguments" in node:
        return [a.get("expression") if isinstance(a, dict) else None for a in node["arguments"] or []]
    return list(node.get("children") or [])


def _with_args(node: dict[str, Any], exprs: list[Any]) -> dict[str, Any]:
    """``node`` with its argument expressions replaced by ``exprs`` (in the same layout)."""
    if "arguments" in node:
        return dict(
            node, arguments=[dict(a, expression=e) for a, e in zip(node["arguments"], exprs, strict=True)]
        )
    return dict(node, children=exprs)


def _function(node: Any, names: frozenset[str] | dict[str, Any]) -> bool:
    """``node`` is a call of one of ``names`` whose arguments are all expressions."""
    if not isinstance(node, dict) or node.get("class") != "FUNCTION":
        return False
    if str(node.get("function_name", "")).lower() not in names:
        return False
    args = _args(node)
    return bool(args) and all(isinstance(a, dict) for a in args)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class _Trees:
    """SQL text of one expression node, and the node of one expression's text, through DuckDB's
    own serializer (``json_serialize_sql`` / ``json_deserialize_sql``)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self._shell = self.parse("SELECT 1")

    def parse(self, sql: str) -> dict[str, Any]:
        rows = self.con.execute("SELECT json_serialize_sql($sql)", {"sql": sql}).fetchall()
        tree: dict[str, Any] = json.loads(rows[0][0]) if rows else {"error": True}
        if tree.get("error"):
            raise QueryRefused(f"the statement cannot be checked: {tree.get('error_message', '')}")
        return tree

    def text(self, tree: dict[str, Any]) -> str:
        rows = self.con.execute("SELECT json_deserialize_sql($t::JSON)", {"t": json.dumps(tree)}).fetchall()
        return str(rows[0][0]) if rows else ""

    def expr_text(self, node: dict[str, Any]) -> str:
        shell = copy.deepcopy(self._shell)
        shell["statements"][0]["node"]["select_list"] = [node]
        return self.text(shell).removeprefix("SELECT ")

    def expr_node(self, text: str) -> dict[str, Any]:
        node: dict[str, Any] = self.parse("SELECT " + text)["statements"][0]["node"]["select_list"][0]
        return node


def _chain(node: dict[str, Any], trees: _Trees, limit: int, leaves: list[str]) -> dict[str, Any]:
    """A chain of joining calls (``a || b || c``, ``concat(a, b || c)``) with each of its leaves
    guarded, the leaves' SQL appended to ``leaves``."""
    exprs = []
    for expr in _args(node):
        if _function(expr, CONCATS):
            expr = _chain(expr, trees, limit, leaves)
        else:
            expr = _guard_calls(expr, trees, limit)
            leaves.append(trees.expr_text(expr))
        exprs.append(expr)
    return _with_args(node, exprs)


def _guard_concat(node: dict[str, Any], trees: _Trees, limit: int) -> dict[str, Any]:
    """The outermost call of a chain of joining calls, its first argument passing through a check
    of what the whole chain adds to its widest leaf: doubling a value again and again (``s || s``
    in a recursive CTE) raises once a step would add more than ``limit`` bytes."""
    leaves: list[str] = []
    out = _chain(node, trees, limit, leaves)
    sizes = ", ".join(f"coalesce(strlen(CAST(({t}) AS VARCHAR)), 0)" for t in leaves)
    added = f"coalesce(list_sum(list_sort([{sizes}], 'DESC')[2:]), 0)"  # all but the widest
    message = _quote(f"{VALUE_MARK}: joining values would add more than {limit} bytes to the widest")
    exprs = _args(out)
    check = f"CASE WHEN ({added}) > {limit} THEN error({message}) ELSE ({trees.expr_text(exprs[0])}) END"
    return _with_args(out, [trees.expr_node(check), *exprs[1:]])


def _guard_calls(node: Any, trees: _Trees, limit: int, table_fn: bool = False) -> Any:
    """``node`` with every builder call wrapped in a check of the size it would build, and every
    chain of joining calls in a check of what it adds."""
    if isinstance(node, list):
        return [_guard_calls(n, trees, limit) for n in node]
    if not isinstance(node, dict):
        return node
    if _function(node, CONCATS) and len(_args(node)) > 1:
        return _guard_concat(node, trees, limit)
    out = {
        k: _guard_calls(v, trees, limit, table_fn=(k == "function" and node.get("type") == "TABLE_FUNCTION"))
        for k, v in node.items()
    }
    name = str(out.get("function_name", "")).lower()
    if table_fn or not _function(out, BUILDERS):
        return out
    args = _args(out)
    if name not in ("range", "generate_series") and len(args) < 2:
        return out
    # the first argument passes through a check of the size: arguments are computed before the
    # call (a constant one is folded before it), so an over-wide call raises before it builds
    texts = [trees.expr_text(a) for a in args]
    message = _quote(f"{VALUE_MARK}: {name}() would build more than {limit} bytes")
    check = f"CASE WHEN ({BUILDERS[name](texts)}) > {limit} THEN error({message}) ELSE ({texts[0]}) END"
    return _with_args(out, [trees.expr_node(check), *args[1:]])


def cap_values(con: duckdb.DuckDBPyConnection, sql: str, max_value_bytes: int) -> str:
    """``sql`` (one checked SELECT) with every call that builds a value from a count checked first:
    past ``max_value_bytes`` it raises (``VALUE_MARK``) before building anything. The text is
    DuckDB's own rendering of the parse tree (no comments or trailing semicolon, so it can be
    nested in another query)."""
    trees = _Trees(con)
    tree = trees.parse(sql)
    if not any(
        n.get("class") == "FUNCTION" and str(n.get("function_name", "")).lower() in CONCATS.union(BUILDERS)
        for n in _nodes(tree.get("statements", []))
    ):
        return trees.text(tree)
    return trees.text(_guard_calls(tree, trees, max_value_bytes))


def _child(kind: DuckDBPyType, i: int) -> DuckDBPyType:
    child = kind.children[i][1]
    assert isinstance(child, DuckDBPyType)
    return child


def _list_width(expr: str, child: DuckDBPyType, depth: int) -> str:
    inner = _width(f"x{depth}", child, depth + 1)
    return f"(8 + coalesce(list_sum(list_transform({expr}, lambda x{depth}: {inner})), 0))"


def _width(expr: str, kind: DuckDBPyType, depth: int = 0) -> str:
    """SQL for the bytes of one value of type ``kind`` (about what Arrow holds for it)."""
    kid = kind.id
    if kid in ("varchar", "blob", "bit"):
        fn = "strlen" if kid == "varchar" else "octet_length" if kid == "blob" else "bit_length"
        size = f"{fn}({expr})" if kid != "bit" else f"{fn}({expr}) // 8"
        return f"(4 + coalesce({size}, 0))"
    if depth < 4 and kid in ("list", "array"):
        return _list_width(expr, _child(kind, 0), depth)
    if depth < 4 and kid == "struct":
        parts = [
            _width(f"struct_extract({expr}, {_quote(str(name))})", _child(kind, i), depth + 1)
            for i, (name, _) in enumerate(kind.children)
        ]
        return "(" + " + ".join(parts or ["0"]) + ")"
    if depth < 4 and kid == "map":
        keys = _list_width(f"map_keys({expr})", _child(kind, 0), depth)
        return f"({keys} + {_list_width(f'map_values({expr})', _child(kind, 1), depth)})"
    if kid in ("list", "array", "struct", "map", "union", "varint", "bignum"):  # too deep, or rare
        return f"(16 + coalesce(strlen(CAST({expr} AS VARCHAR)), 0))"
    return "16"


def cap_result(sql: str, types: list[DuckDBPyType], max_bytes: int) -> str:
    """``sql`` whose rows are counted as DuckDB streams them: once they pass ``max_bytes`` the query
    raises (``RESULT_MARK``) in the vector that crossed it, before DuckDB copies it out. The columns
    come back in their order (as ``c0, c1, ...``) and so do the rows."""
    cols = [f'"__c{i}"' for i in range(len(types))]
    if not cols:
        return sql
    width = " + ".join(_width(c, t) for c, t in zip(cols, types, strict=True))
    message = _quote(f"{RESULT_MARK}: the result exceeds {max_bytes} bytes")
    return (
        f"SELECT {', '.join(cols)} FROM ("
        f"SELECT *, sum({width}) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS __total "
        f"FROM (\n{sql}\n) AS __q({', '.join(cols)})) "
        f"WHERE CASE WHEN __total > {max_bytes} THEN error({message}) ELSE true END"
    )
