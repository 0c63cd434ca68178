#!/usr/bin/env python
"""What one ingest commit costs the writer, by the size of the request it holds.

The writer stores each request (or the requests that queued while it was busy) in one transaction:
the spans, steps, documents and traces inserts and a commit (``Store.write_spans``). Part of that is
paid once a commit whatever it holds, and DuckDB's part of it grows with the columns written (each
of the four tables' columns is set up for the transaction and merged at commit). This sends the
bench's RAG-shaped traces (``bench/evaluate.py``: four spans, 20 candidates, 5 reranked, a 3 KB
prompt) through ``write_spans`` as the server does (Arrow tables from the decode step, untimed) in
requests of each size of ``--sizes``, on a fresh file each, and prints CPU µs a trace (the process's
CPU time: DuckDB's threads included), checkpoints left out (``bench/sustain.py --stages`` has
them), the first fifth of the commits left out as warm-up. With ``--statements`` it also prints each
statement's CPU ms a commit.

Run from the project root:

    .venv/bin/python bench/commit_size.py
    .venv/bin/python bench/commit_size.py --sizes 10,30,128 --statements
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.evaluate import export_requests, make_kb  # noqa: E402  (the same traces)


def _requests(size: int, traces: int, seed: int) -> list:
    from collector.ingest.span_rows import flatten
    from collector.normalize import DEFAULT_SOURCE_KEYS
    from collector.store.schema import batch_to_arrow

    rng = random.Random(seed)
    kb = make_kb(rng, 400)
    reqs = export_requests(rng, kb, traces, size, time.time_ns())
    return [batch_to_arrow(flatten(r, source_keys=DEFAULT_SOURCE_KEYS)) for r, _ in reqs]


def write_cost(size: int, traces: int, seed: int) -> float:
    """CPU µs a trace of ``write_spans`` in requests of ``size`` traces."""
    from ragfault.local import LocalStore

    batches = _requests(size, traces, seed)
    with tempfile.TemporaryDirectory(prefix="ragfault-commit-") as tmp:
        local = LocalStore(str(Path(tmp) / "c.duckdb"))
        con = local.store.con
        spent, timed = 0.0, 0
        for i, b in enumerate(batches):
            t0 = time.process_time()
            local.store.write_spans(con, b)
            if i >= len(batches) // 5:
                spent += time.process_time() - t0
                timed += size
            if i % 10 == 9:
                local.store.checkpoint_if_idle(con)
        local.close()
    return spent / timed * 1e6


def statement_costs(size: int, traces: int, seed: int) -> dict[str, float]:
    """CPU ms a commit of each statement of the ingest transaction (all spans new)."""
    from collector.store.file import ingest
    from ragfault.local import LocalStore

    batches = _requests(size, traces, seed)
    statements = ingest._APPEND[True, True, True].split(";\n")
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="ragfault-commit-") as tmp:
        local = LocalStore(str(Path(tmp) / "c.duckdb"))
        con = local.store.con
        warm = len(batches) // 5
        for i, b in enumerate(batches):
            inputs = local.store._inputs(con)
            inputs.set(b)
            for sql in statements:
                t0 = time.process_time()
                con.execute(sql)
                if i >= warm:
                    words = sql.split()
                    name = f"INSERT {words[2]}" if words[0] == "INSERT" else words[0]
                    out[name] = out.get(name, 0.0) + time.process_time() - t0
            inputs.clear()
            if i % 10 == 9:
                local.store.checkpoint_if_idle(con)
        local.close()
    n = len(batches) - warm
    return {k: v / n * 1e3 for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10,30,100,128,200", help="traces a request, comma-separated")
    ap.add_argument("--traces", type=int, default=3000, help="traces written at each size")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--statements", action="store_true", help="also each statement's CPU ms a commit")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    print("| traces a request | write_spans: CPU µs a trace |")
    print("|---|---|")
    for size in sizes:
        print(f"| {size} | {write_cost(size, args.traces, args.seed):,.0f} |", flush=True)
    if args.statements:
        print()
        rows = {size: statement_costs(size, args.traces, args.seed) for size in sizes}
        names = list(next(iter(rows.values())))
        print("| statement | " + " | ".join(f"{s} traces" for s in sizes) + " |")
        print("|---|" + "---|" * len(sizes))
        for name in names:
            print(f"| {name} | " + " | ".join(f"{rows[s][name]:.2f} ms" for s in sizes) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
