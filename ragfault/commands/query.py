"""ragfault query: run SQL (text or a .sql file) through the server, or on the file read-only."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from ragfault.client import DB_HELP, SERVER_HELP, sql
from ragfault.output import render
from ragfault_core.errors import ConfigError


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("query", help="run a read-only SQL statement or a .sql file")
    p.add_argument("sql", help="SQL text, a .sql file, or the name of a bundled query (see queries/)")
    p.add_argument(
        "--param", "-p", action="append", default=[], metavar="NAME=VALUE", help="a $name parameter"
    )
    p.add_argument("--db", help=DB_HELP)
    p.add_argument("--server", help=SERVER_HELP)
    p.add_argument(
        "--catalog",
        help="query a DuckLake directly, read-only, instead: its catalog, postgresql://USER@HOST:PORT/DB "
        "(with --data-path; default: none, use the server or --db)",
    )
    p.add_argument("--data-path", help="the lake's data directory (with --catalog; default: none)")
    p.add_argument("--format", "-f", choices=["table", "json", "csv"], default="table", help="output format")
    p.add_argument("--max-rows", type=int, default=10_000, help="most rows to return")
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
    if text.endswith(".sql"):
        if not Path(text).is_file():
            raise ConfigError(f"no file {text}")
        return Path(text).read_text(encoding="utf-8")
    name = text.strip()
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):  # one word: a bundled query, never SQL
        from queries import all_queries

        queries = all_queries()
        if name not in queries:
            raise ConfigError(
                f"no bundled query {name!r}; the bundled queries are: {', '.join(sorted(queries))}"
            )
        q = queries[name]
        if q.view:  # a query that declares a view runs as the view: its rows, kept as facts on a file
            from collector.store.views import view_statement

            return view_statement(q.view)
        return q.sql
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
    if bool(args.catalog) != bool(args.data_path):
        raise ConfigError("--catalog and --data-path go together: the lake's catalog and its data directory")
    lake = (args.catalog, args.data_path) if args.catalog else None
    result = sql(text, params, db=args.db, server=args.server, row_cap=args.max_rows, lake=lake)
    print(render(result, args.format))
    return 0
