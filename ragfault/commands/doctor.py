"""ragfault doctor: what the stored traces carry that attribution needs, and how to fill each gap.

Through the server when one runs (``GET /api/v1/coverage``), else on the database file read-only.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ragfault.client import DB_HELP, SERVER_HELP, get, open_read_only, target


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "doctor", help="what the traces carry that attribution needs, and how to fill the gaps"
    )
    p.add_argument("--service", help="only this service")
    p.add_argument("--since", help="only traces that started at or after this time (ISO)")
    p.add_argument("--db", help=DB_HELP)
    p.add_argument("--server", help=SERVER_HELP)
    p.add_argument("--format", "-f", choices=["text", "json"], default="text", help="output format")
    return p


def load(service: str | None, since: str | None, db: str | None, server: str | None) -> dict[str, Any]:
    url, path = target(server, db)
    if url is not None:
        return get(url, "/api/v1/coverage", {"service": service, "since": since})
    from collector.api.coverage import coverage

    store = open_read_only(path)
    try:
        return coverage(store.cursor(), service, since)
    finally:
        store.con.close()


def run(args: argparse.Namespace) -> int:
    from collector.api.coverage import render

    rep = load(args.service, args.since, args.db, args.server)
    print(
        json.dumps(rep, indent=2) if args.format == "json" else render(rep),
        end="" if args.format == "text" else "\n",
    )
    # a service no settled trace has, while others have some: a mistyped name, not an empty store
    return 1 if args.service and not rep["groups"] and rep.get("services") else 0
