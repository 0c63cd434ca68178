"""ragfault gold promote TRACE_ID | gold export: a live trace becomes a gold case; the promoted cases as JSONL.

``promote`` writes the case (the trace's question, the evidence, facts and behaviour given here),
records who promoted it and when, and evaluates the trace again with it, through the server when one
runs, else on the file. Without ``--cause`` the cause live attribution suggests is confirmed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, get_args

from ragfault.client import DB_HELP, SERVER_HELP, post, require_database, sql, target
from ragfault_core.errors import PermanentError

EXPECTED = ("answer", "refuse", "correct_premise", "clarify")
# evaluators.service.promote.DEFAULT_DATASET, spelled here: building the parser imports none of the engine
DEFAULT_DATASET = "production"


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("gold", help="promote a live trace to a gold case; export the promoted cases")
    p.add_argument("action", choices=["promote", "export"], help="promote: TRACE_ID to a case; export: JSONL")
    p.add_argument("trace_id", nargs="?", help="promote: the live trace (32 hex digits)")
    p.add_argument("--cause", help="the root cause confirmed or corrected (default: live attribution's)")
    p.add_argument(
        "--evidence",
        action="append",
        default=[],
        metavar="DOC:QUOTE",
        help="gold evidence, repeatable: a document id, a colon, a quote of its text (DOC alone: no quote)",
    )
    p.add_argument("--fact", action="append", default=[], metavar="TEXT", help="a required fact, repeatable")
    p.add_argument("--expect", choices=EXPECTED, default="answer", help="the expected behaviour")
    p.add_argument("--unanswerable", action="store_true", help="the knowledge base cannot answer it")
    p.add_argument("--case-id", help="the case's id (default: the trace's ragfault.case_id, else live-...)")
    p.add_argument("--category", help="the case's category (a slice for reports and gates)")
    p.add_argument("--risk", choices=["high", "normal"], default="normal", help="the case's risk (a slice)")
    p.add_argument("--dataset", help=f"gold set (promote default: {DEFAULT_DATASET}; export: only this one)")
    p.add_argument("--user", help="who promotes it (stored with the case)")
    p.add_argument("--notes", help="a note kept with the case")
    p.add_argument("--output", "-o", help="export: write the JSONL here (default: standard output)")
    p.add_argument("--config", help="TOML config file ([evaluation] table), when working on the file")
    p.add_argument("--db", help=DB_HELP)
    p.add_argument("--server", help=SERVER_HELP)
    return p


def parse_evidence(values: list[str]) -> list[dict[str, str]]:
    """``DOC:QUOTE`` (split at the first colon) into gold evidence items."""
    out = []
    for v in values:
        doc, sep, quote = v.partition(":")
        if not doc.strip():
            raise PermanentError(f"--evidence {v!r}: a document id comes first (DOC:QUOTE)")
        item = {"doc_id": doc.strip()}
        if sep and quote.strip():
            item["quote"] = quote.strip()
        out.append(item)
    return out


def _suggested(args: argparse.Namespace, trace_id: str) -> str:
    from collector.store.promote import suggested_cause
    from evaluators.service.promote import Cause

    def run(statement: str, params: dict[str, Any]) -> dict[str, Any]:
        return sql(statement, params, db=args.db, server=args.server)

    cause = suggested_cause(run, trace_id)
    if cause not in get_args(Cause):
        raise PermanentError(
            f"live attribution suggests no cause for trace {trace_id} ({cause or 'not evaluated'}): pass --cause"
        )
    return str(cause)


def request_of(args: argparse.Namespace) -> dict[str, Any]:
    if not args.trace_id:
        raise PermanentError("gold promote needs a TRACE_ID")
    trace_id = args.trace_id.lower()
    body: dict[str, Any] = {
        "trace_id": trace_id,
        "cause": args.cause or _suggested(args, trace_id),
        "evidence": parse_evidence(args.evidence),
        "required_facts": [{"id": f"f{i}", "text": t} for i, t in enumerate(args.fact, start=1)],
        "expected_behavior": args.expect,
        "risk": args.risk,
    }
    if args.unanswerable:
        body["answerable"] = False
    for key in ("case_id", "category", "dataset", "user", "notes"):
        if getattr(args, key):
            body[key] = getattr(args, key)
    return body


def _promote_on_file(db: str, config: str | None, body: dict[str, Any]) -> dict[str, Any]:
    from collector.config import build_settings
    from evaluators.service import loading
    from evaluators.service.config import evaluator_configs, load_evaluation_settings
    from evaluators.service.promote import PromoteRequest, promote
    from evaluators.service.registry import discover
    from evaluators.service.runner import Runner, StoreRunner, utcnow
    from ragfault.local import LocalStore

    req = PromoteRequest.model_validate(body)
    require_database(db)
    local = LocalStore(db)
    try:
        local.settle_all()
        cur = local.store.cursor()
        specs = discover()
        settings = load_evaluation_settings(config)
        runner = StoreRunner(
            cur,
            local.write,
            Runner(specs, evaluator_configs(settings, specs)),
            build_settings(config).source_keys,
        )
        out = promote(cur, local.write, lambda ids: runner.evaluate_many(ids), req, utcnow())
        others = [t for t in loading.traces_for_cases(cur, [out["case_id"]]) if t != out["trace_id"]]
        runner.evaluate_many(others)  # on a file nothing evaluates later: the rest of the case's traces now
        out["reevaluating"] = len(others)
        return out
    finally:
        local.close()


def _promote(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    body = request_of(args)
    url, db = target(args.server, args.db)
    if url is not None:
        out = post(url, "/api/v1/gold/promote", json.dumps(body).encode(), content_type="application/json")
        where = f"the server at {url}"
    else:
        try:
            out = _promote_on_file(db, args.config, body)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            raise PermanentError(f"field {'.'.join(map(str, err['loc']))}: {err['msg']}") from exc
        where = db
    print(f"promoted trace {out['trace_id']} to gold case {out['case_id']} ({out['dataset']}) in {where}")
    print(f"  cause: {out['cause']}   live attribution suggested: {out['suggested_cause'] or '-'}")
    print(
        f"  attribution with the case: {out['root_cause'] or 'not evaluated'}   layers: {out['failing_layers']}"
    )
    return 0


def _export(args: argparse.Namespace) -> int:
    from collector.store.promote import promoted

    def run(statement: str, params: dict[str, Any]) -> dict[str, Any]:
        return sql(statement, params, db=args.db, server=args.server, row_cap=10_000_000)

    lines = [
        json.dumps(json.loads(raw) if isinstance(raw, str) else raw, ensure_ascii=False)
        for raw in promoted(run, args.dataset)
    ]
    text = "".join(line + "\n" for line in lines)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {len(lines)} promoted cases to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def run(args: argparse.Namespace) -> int:
    return _promote(args) if args.action == "promote" else _export(args)
