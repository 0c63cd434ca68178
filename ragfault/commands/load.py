"""ragfault load gold|kb FILE: validate and store gold cases or knowledge-base documents."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragfault.client import DB_HELP, SERVER_HELP, post, require_database, target


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("load", help="load gold cases or knowledge-base documents from JSONL")
    p.add_argument("kind", choices=["gold", "kb"], help="gold cases or knowledge-base documents")
    p.add_argument("file", help="JSONL file, one case or document a line")
    p.add_argument("--db", help=DB_HELP)
    p.add_argument("--server", help=SERVER_HELP)
    return p


def run(args: argparse.Namespace) -> int:
    body = Path(args.file).read_bytes()
    url, db = target(args.server, args.db)
    if url is not None:
        path = "/api/v1/gold" if args.kind == "gold" else "/api/v1/kb"
        # the file name is the dataset's, URL-encoded: a name holding & or # stays one value
        params = {"dataset": Path(args.file).name} if args.kind == "gold" else None
        result = post(url, path, body, content_type="application/x-ndjson", params=params)
        print(
            f"loaded {result['loaded']} {'cases' if args.kind == 'gold' else 'documents'} into the server at {url}"
        )
        return 0
    require_database(db)  # before the engine is imported: a mistyped name is refused at once
    from evaluators.service.loading import store_gold, store_kb
    from ragfault.local import LocalStore

    local = LocalStore(db)
    try:
        if args.kind == "gold":
            ids = store_gold(local.write, body, Path(args.file).name)
            print(f"loaded {len(ids)} cases into {db} (run `ragfault evaluate` to evaluate stored traces)")
        else:
            ids = store_kb(local.write, body)
            print(f"loaded {len(ids)} documents into {db}")
    finally:
        local.close()
    return 0
