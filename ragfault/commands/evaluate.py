"""ragfault evaluate: re-run the evaluators over stored traces (all, a run, a time range)."""

from __future__ import annotations

import argparse
import json
from contextlib import nullcontext
from datetime import datetime
from typing import Any

from ragfault.client import DB_HELP, SERVER_HELP, post, require_database, target
from ragfault.progress import Progress


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("evaluate", help="re-run evaluators over stored traces")
    p.add_argument("--run", dest="run_id", help="only traces of this run id")
    p.add_argument(
        "--since", type=datetime.fromisoformat, help="only traces starting at or after (ISO time, UTC)"
    )
    p.add_argument("--until", type=datetime.fromisoformat, help="only traces starting before (ISO time, UTC)")
    p.add_argument("--db", help=DB_HELP)
    p.add_argument("--server", help=SERVER_HELP)
    p.add_argument("--config", help="TOML config file ([evaluation] table)")
    p.add_argument("--batch", type=int, default=500, help="traces per batch")
    p.add_argument(
        "--workers",
        type=int,
        help="worker processes evaluating on a database file (0: in-process; default: [evaluation] workers)",
    )
    return p


def _iso(d: datetime | None) -> str | None:
    return d.isoformat() if d else None


def run(args: argparse.Namespace) -> int:
    url, db = target(args.server, args.db)
    if url is not None:
        from collector.store.verdicts import settled_ids
        from ragfault.client import sql

        def on_server(statement: str, params: dict[str, Any]) -> dict[str, Any]:
            return sql(statement, params, server=url, row_cap=10_000_000)

        ids = settled_ids(on_server, args.run_id, _iso(args.since), _iso(args.until))
        bar = Progress(len(ids), "evaluating")
        for i in range(0, len(ids), args.batch):
            chunk = ids[i : i + args.batch]
            post(url, "/api/v1/evaluate", json.dumps({"trace_ids": chunk}).encode())
            bar.update(len(chunk))
        bar.close()
        print(f"evaluated {len(ids)} traces on the server at {url}")
        return 0

    require_database(db)  # before the engine is imported: a mistyped name is refused at once
    from collector.config import build_settings
    from evaluators.service.component import select_traces_received
    from evaluators.service.config import evaluator_configs, load_evaluation_settings
    from evaluators.service.pool import EvalPool, default_workers
    from evaluators.service.registry import discover
    from evaluators.service.runner import Runner, StoreRunner
    from ragfault.local import LocalStore

    settings = load_evaluation_settings(args.config)
    specs = discover()

    local = LocalStore(db)
    try:
        settled = local.settle_all()
        cur = local.store.cursor()
        source_keys = build_settings(args.config).source_keys
        runner = StoreRunner(cur, local.write, Runner(specs, evaluator_configs(settings, specs)), source_keys)
        received = select_traces_received(cur, args.run_id, args.since, args.until, 10**12)
        ids = list(received)
        workers = args.workers if args.workers is not None else settings.workers
        if workers is None:  # a pool pays for its start-up only on a long run
            workers = default_workers() if len(ids) > 2 * args.batch else 0
        bar = Progress(len(ids), "evaluating")
        with EvalPool(workers, runner.runner, source_keys) if workers > 0 else nullcontext() as pool:
            runner.evaluate_many(ids, args.batch, pool, on_batch=bar.update, received=received)
        bar.close()
        extra = f" ({settled} assembled first)" if settled else ""
        print(f"evaluated {len(ids)} traces in {db}{extra}")
    finally:
        local.close()
    return 0
