"""ragfault query: run SQL (text or a .sql file) through the server, or on the file read-only."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ragfault.client import sql
from ragfault.output import render


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("query", help="run a read-only SQL statement or a .sql file")
    p.add_argument("sql", help="SQL text, a .sql file, or the name of a bundled query (see queries/)")
    p.add_argument(
        "--param", "-p", action="append", default=[], metavar="NAME=VALUE", help="a $name parameter"
    )
    p.add_argument("--db", help="database file when no server runs (default ./ragfault.duckdb)")
    p.add_argument("--server", help="server URL (default $RAGFAULT_SERVER or http://127.0.0.1:4318)")
    p.add_argument("--format", "-f", choices=["table", "json", "csv"], default="table")
    p.add_argument("--max-rows", type=int, default=10_000)
    return p


def parse_params(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"ragfault: --param needs NAME=VALUE, got {item!r}")
        out[name.lstrip("$")] = None if value.upper() == "NULL" else value
    return out


def resolve_sql(text: str) -> str:
    """SQL text itself, the contents of a .sql file, or a bundled query by name."""
    if text.endswith(".sql") and Path(text).is_file():
        return Path(text).read_text(encoding="utf-8")
    if " " not in text.strip():
        try:
            from queries import load_query

            return load_query(text).sql
        except (ImportError, KeyError):
            pass
    return text


def bind_params(text: str, given: dict[str, Any]) -> dict[str, Any]:
    """The parameters to run ``text`` with: a query whose header declares ``params`` (a bundled query
    or a .sql file) gets its declared defaults for the ones not given; other SQL gets what was given."""
    from queries import parse

    q = parse(text)
    return q.bind(given) if q.params else given


def run(args: argparse.Namespace) -> int:
    text = resolve_sql(args.sql)
    try:
        params = bind_params(text, parse_params(args.param))
    except KeyError as exc:
        raise SystemExit(f"ragfault: {exc.args[0]}") from None
    result = sql(text, params, db=args.db, server=args.server, row_cap=args.max_rows)
    print(render(result, args.format))
    return 0
