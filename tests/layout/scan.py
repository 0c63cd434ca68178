"""Reading the source tree for the layout invariants: every Python module of the packages, parsed
once, and the questions the invariants ask of it, answered from the syntax tree rather than from
the text (a word in a comment or a docstring is not code).

The invariants compare what they find with an allowlist of today's offenders; ``compare`` fails
both ways, on a new offender and on a listed one that is gone, so the lists stay true and can only
shrink."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("collector", "evaluators", "queries", "ragfault", "ragfault_core")
STORE = "collector/store/"

# The statements a string constant opens with to count as SQL (after leading ``--`` comment lines and
# blanks). Upper case is how SQL is written here; a lower-case keyword counts only when it is followed
# by what only a statement has (``select ... from``, ``insert into``, ``create table`` ...), so prose
# such as "With the lake, ..." or "set by the caller" is not SQL.
_SQL_KEYWORDS = (
    "SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "CREATE", "DROP", "ALTER", "ATTACH", "DETACH", "COPY",
    "PRAGMA", "INSTALL", "LOAD", "MERGE", "EXPORT", "IMPORT", "CHECKPOINT", "VACUUM", "EXPLAIN", "DESCRIBE",
    "SUMMARIZE", "TRUNCATE", "BEGIN", "COMMIT", "ROLLBACK", "USE", "SET", "RESET", "CALL", "FROM",
)  # fmt: skip
_UPPER_SQL = re.compile(rf"(?:{'|'.join(_SQL_KEYWORDS)})(?:\s|\(|;|$)")
_LOWER_SQL = re.compile(
    r"(?:select\s.*\bfrom\b|insert\s+(?:or\s+\w+\s+)?into\b|update\s+\w+\s+set\b|delete\s+from\b"
    r"|with\s+(?:recursive\s+)?\w+\s+as\s*\(|create\s+(?:or\s+replace\s+)?(?:temp\w*\s+)?(?:table|view|index"
    r"|schema|macro|sequence)\b|drop\s+(?:table|view|index|schema|macro)\b|alter\s+table\b|attach\s+['\"]"
    r"|copy\s+\w+\s+(?:to|from)\b)",
    re.S,
)


def modules() -> list[str]:
    """The package modules, as paths relative to the root (``collector/store/reader.py``)."""
    return sorted(
        p.relative_to(ROOT).as_posix()
        for pkg in PACKAGES
        for p in (ROOT / pkg).rglob("*.py")
        if "__pycache__" not in p.parts
    )


@cache
def tree(path: str) -> ast.Module:
    return ast.parse((ROOT / path).read_text(encoding="utf-8"), filename=path)


def line_count(path: str) -> int:
    return len((ROOT / path).read_text(encoding="utf-8").splitlines())


def _docstrings(module: ast.Module) -> set[int]:
    """``id`` of every docstring node: the first string statement of a module, class or function."""
    out: set[int] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def is_sql(text: str) -> bool:
    """Whether a string constant is (the start of) an SQL statement."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip() and not ln.strip().startswith("--")]
    head = "\n".join(lines).lstrip()
    return bool(_UPPER_SQL.match(head) or _LOWER_SQL.match(head))


def _strings(module: ast.Module) -> Iterator[str]:
    """String constants that are code (docstrings left out); an f-string yields its literal text with
    each placeholder as ``x``, so ``f"SELECT {cols} FROM t"`` reads as a statement."""
    docs = _docstrings(module)
    in_fstring: set[int] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                in_fstring.add(id(v))
                parts.append(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "x")
            yield "".join(parts)
    for node in ast.walk(module):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docs
            and id(node) not in in_fstring
        ):
            yield node.value


def sql_literals(module: ast.Module) -> int:
    return sum(1 for s in _strings(module) if is_sql(s))


def duckdb_handles(module: ast.Module) -> int:
    """Places a module holds a raw DuckDB connection: ``import duckdb``, the store's ``Con`` alias of
    ``duckdb.DuckDBPyConnection`` imported or read off a store module, or ``DuckDBPyConnection`` named.
    The store's opaque ``Tx`` is no raw handle: nothing can be run on it but the store's operations
    (the type checker refuses any method call on it)."""
    n = 0
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            n += sum(1 for a in node.names if a.name.split(".")[0] == "duckdb")
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] == "duckdb":
                n += 1
            elif node.module.startswith("collector.store"):
                n += sum(1 for a in node.names if a.name == "Con")
        elif isinstance(node, ast.Attribute) and node.attr in ("DuckDBPyConnection", "Con"):
            n += 1  # duckdb.DuckDBPyConnection, base.Con
    return n


def untyped_operations(module: ast.Module) -> int:
    """Store operations (functions marked ``@operation``) whose return annotation mentions ``Any``:
    a caller then reads positions of tuples the type checker knows nothing about."""
    n = 0
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            isinstance(d, ast.Name) and d.id == "operation" for d in node.decorator_list
        ):
            n += _mentions_any(node.returns)
    return n


def _mentions_any(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "Any":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "Any":
            return True
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and re.search(r"\bAny\b", node.value)
        ):
            return True
    return False


def any_runtime_params(module: ast.Module) -> int:
    """Parameters named ``runtime`` typed ``Any`` (alone or in a union: ``Any | None``)."""
    n = 0
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                if arg.arg == "runtime" and _mentions_any(arg.annotation):
                    n += 1
    return n


def compare(found: Mapping[str, int], allowed: Mapping[str, int], what: str) -> list[str]:
    """The differences between what the tree holds and the allowlist, worded for the reader who
    must fix one or the other: a new offender, a listed one that grew, or one that shrank or went."""
    problems = []
    for key in sorted(set(found) | set(allowed)):
        have, listed = found.get(key, 0), allowed.get(key, 0)
        if have > listed:
            problems.append(f"{key}: {have} {what} (allowed {listed}): new ones are not allowed")
        elif have < listed:
            problems.append(
                f"{key}: {have} {what}, the allowlist says {listed}: lower the entry (the list only shrinks)"
            )
    return problems
