#!/usr/bin/env python
"""CPU time of the judge sampler's facts for a written batch: read back from the tables after the
write (``collector.store.sampling.fact_rows``: the traces' rows, empty retrievals, the flagged
verdicts, feedback) against taken from the batch's own rows (``evaluators.service.sampling.written_facts``,
then feedback and root attributes read back), and whether both give the same facts.

A database of ``--traces`` RAG-shaped traces (``bench/evaluate.py``'s, a gold case each) is built;
the cheap tier evaluates it in batches of ``--batch`` as the server's scheduler does (verdicts
written batch after batch, so the later batches read a table that holds the earlier ones' rows);
then, for each batch after the first two, both ways are timed (``time.process_time``: DuckDB's threads
included) and their facts compared.

Run from the project root:

    .venv/bin/python bench/sampling_facts.py
    .venv/bin/python bench/sampling_facts.py --batch 18
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.evaluate import build_db  # noqa: E402
from evaluators.service.config import EvaluationSettings, evaluator_configs  # noqa: E402
from evaluators.service.registry import discover  # noqa: E402
from evaluators.service.runner import Runner, StoreRunner, utcnow  # noqa: E402
from evaluators.service.sampling import load_facts, written_facts  # noqa: E402
from evaluators.service.sampling_settings import SamplingSettings  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=4000)
    ap.add_argument("--kb-docs", type=int, default=400)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--batch", type=int, default=108, help="traces a batch (a settle round's at 216 a second)"
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ragfault-facts-") as tmp:
        local, _ = build_db(os.path.join(tmp, "facts.duckdb"), args.traces, args.kb_docs, args.seed)
        cur = local.store.cursor()
        ids = [
            r[0]
            for r in cur.execute(
                "SELECT trace_id FROM traces WHERE settled_at IS NOT NULL ORDER BY first_received_at, trace_id"
            ).fetchall()
        ]
        specs = discover()
        runner = StoreRunner(
            local.store.cursor(), local.write, Runner(specs, evaluator_configs(EvaluationSettings(), specs))
        )
        settings = SamplingSettings()
        read_s = batch_s = 0.0
        timed = 0
        for k in range(0, len(ids), args.batch):
            chunk = ids[k : k + args.batch]
            since = utcnow() - timedelta(seconds=1)
            seen: list = []
            runner.evaluate(chunk, on_tables=lambda tables, out, seen=seen: seen.append((tables, out)))
            if k < 2 * args.batch:
                continue  # the first batches import and warm up
            (tables, out) = seen[0]
            t0 = time.process_time()
            read_back = load_facts(cur, chunk, settings, None, since)
            t1 = time.process_time()
            known = written_facts(tables, out.evals, out.log, settings)
            from_batch = load_facts(cur, chunk, settings, None, since, known)
            t2 = time.process_time()
            key = lambda f: f.trace_id  # noqa: E731
            if sorted(read_back, key=key) != sorted(from_batch, key=key):
                print(f"the facts differ in the batch at {k}", file=sys.stderr)
                return 1
            read_s += t1 - t0
            batch_s += t2 - t1
            timed += len(chunk)
        local.close()
    us = 1e6 / max(timed, 1)
    print(
        f"batches of {args.batch}, {timed:,} traces timed ({len(ids):,} in the database), CPU µs a trace: "
        f"read back {read_s * us:,.0f}, from the batch {batch_s * us:,.0f} (ratio {read_s / max(batch_s, 1e-9):.1f}); "
        "the same facts for every trace"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
