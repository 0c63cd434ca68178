"""ragfault label import FILE: store human labels (JSON array, JSON object or JSONL) for judge calibration."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragfault.client import DB_HELP, SERVER_HELP, post, require_database, target


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("label", help="human labels for judge calibration")
    p.add_argument("action", choices=["import"], help="import: store the labels of a JSONL file")
    p.add_argument("file", help="labels: trace_id, metric, label, annotator, optional claim, span_id, anchor")
    p.add_argument("--db", help=DB_HELP)
    p.add_argument("--server", help=SERVER_HELP)
    return p


def run(args: argparse.Namespace) -> int:
    body = Path(args.file).read_bytes()
    url, db = target(args.server, args.db)
    if url is not None:
        result = post(url, "/api/v1/labels", body, content_type="application/x-ndjson")
        print(f"loaded {result['loaded']} labels into the server at {url}")
        return 0
    from evaluators.judge.calibration import parse_labels, store_labels
    from ragfault.local import LocalStore

    labels = parse_labels(body)
    require_database(db)
    local = LocalStore(db)
    try:
        n = store_labels(local.write, labels)
    finally:
        local.close()
    print(f"loaded {n} labels into {db}")
    return 0
