"""ragfault load gold|kb FILE: validate and store gold cases or knowledge-base documents."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragfault.client import post, server_up, server_url


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("load", help="load gold cases or knowledge-base documents from JSONL")
    p.add_argument("kind", choices=["gold", "kb"])
    p.add_argument("file", help="JSONL file, one case or document a line")
    p.add_argument("--db", default="./ragfault.duckdb", help="database file when no server runs")
    p.add_argument("--server", help="server URL (default $RAGFAULT_SERVER or http://127.0.0.1:4318)")
    return p


def run(args: argparse.Namespace) -> int:
    body = Path(args.file).read_bytes()
    url = server_url(args.server)
    if server_up(url):
        path = "/api/v1/gold" if args.kind == "gold" else "/api/v1/kb"
        if args.kind == "gold":
            path += f"?dataset={Path(args.file).name}"
        result = post(url, path, body, content_type="application/x-ndjson")
        print(
            f"loaded {result['loaded']} {'cases' if args.kind == 'gold' else 'documents'} into the server at {url}"
        )
        return 0
    from evaluators.loading import store_gold, store_kb
    from ragfault.local import LocalStore

    local = LocalStore(args.db)
    try:
        if args.kind == "gold":
            ids = store_gold(local.write, body, Path(args.file).name)
            print(
                f"loaded {len(ids)} cases into {args.db} (run `ragfault evaluate` to evaluate stored traces)"
            )
        else:
            ids = store_kb(local.write, body)
            print(f"loaded {len(ids)} documents into {args.db}")
    finally:
        local.close()
    return 0
