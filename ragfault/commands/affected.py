"""ragfault affected: the cases a knowledge-base change affects, and which must be re-run."""

from __future__ import annotations

import argparse
from typing import Any

import orjson

from ragfault.client import DB_HELP, SERVER_HELP, sql
from ragfault.output import table


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("affected", help="list the cases a changed knowledge-base document affects")
    p.add_argument("--run", dest="run_id", help="only the latest traces of this run")
    p.add_argument("--since", help="only changes at or after (ISO time, UTC)")
    p.add_argument("--format", "-f", choices=["text", "json"], default="text", help="output format")
    p.add_argument("--db", help=DB_HELP)
    p.add_argument("--server", help=SERVER_HELP)
    return p


def run(args: argparse.Namespace) -> int:
    from ragfault.experiments import affected

    def q(text: str, params: dict[str, Any]) -> dict[str, Any]:
        return sql(text, params, db=args.db, server=args.server, row_cap=1_000_000)

    out = affected.changes(q, args.run_id, args.since)
    if args.format == "json":
        print(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode())
        return 0
    cols = ["doc_id", "change", "old_version", "new_version", "changed_at"]
    print(f"== Documents changed ({len(out['changes'])}) ==")
    print(table(cols, [[c[k] for k in cols] for c in out["changes"]]) if out["changes"] else "(none)")
    cols = ["case_id", "run_id", "doc_id", "why", "trace_id", "predates_change"]
    print(f"\n== Cases affected ({len({r['case_id'] for r in out['affected']})}) ==")
    print(table(cols, [[r[k] for k in cols] for r in out["affected"]]) if out["affected"] else "(none)")
    waiting = out["affected_not_rerun"]
    print(f"\n{len(waiting)} to re-run" + (": " + ", ".join(waiting) if waiting else ""))
    return 0
