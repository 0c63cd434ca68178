"""ragfault label import FILE: store human labels (JSON array, JSON object or JSONL) for judge calibration."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragfault.client import post, server_up, server_url


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("label", help="human labels for judge calibration")
    p.add_argument("action", choices=["import"], help="import: store the labels of a JSONL file")
    p.add_argument("file", help="labels: trace_id, metric, label, annotator, optional claim, span_id, anchor")
    p.add_argument("--db", default="./ragfault.duckdb", help="database file when no server runs")
    p.add_argument("--server", help="server URL (default $RAGFAULT_SERVER or http://127.0.0.1:4318)")
    return p


def run(args: argparse.Namespace) -> int:
    body = Path(args.file).read_bytes()
    url = server_url(args.server)
    if server_up(url):
        result = post(url, "/api/v1/labels", body, content_type="application/x-ndjson")
        print(f"loaded {result['loaded']} labels into the server at {url}")
        return 0
    from evaluators.judge.calibration import parse_labels, store_labels
    from ragfault.local import LocalStore

    labels = parse_labels(body)
    local = LocalStore(args.db)
    try:
        n = store_labels(local.write, labels)
    finally:
        local.close()
    print(f"loaded {n} labels into {args.db}")
    return 0
