#!/usr/bin/env python
"""CPU time of the cheap tier on fetched batches: ``evaluate_tables`` as a worker runs it, in this
tree and (``--base``) another checkout of the project, alternating A B A B, and whether both write
the same rows.

A database of ``--traces`` RAG-shaped traces (``bench/evaluate.py``'s: English and Chinese, a
quarter without document ids, a gold case each) is built once. Each run is a fresh process on a
copy of it, with one tree first on ``sys.path``: it reads the references, fetches every batch of
``--batch`` traces (untimed), evaluates the first ``--warm`` traces untimed (a worker has read the
registry before, and its first batch imports what it needs), then times each further batch on
traces it has not evaluated before (the lexical checker keeps what it works out by text):

- **views and inputs**: ``views_from_tables`` and ``make_inputs``;
- **evaluators and rows**: ``build_tables``;
- **total**: both (what ``evaluate_tables`` does), and the first batch of the run (cold) apart.

CPU time is ``time.process_time`` (every thread of the process). Per tree it prints the least and
the median over ``--rounds`` runs, in µs a trace, and the ratio base / this tree. The verdict rows
of every batch (``evaluated_at`` fixed) are hashed; the runs of both trees must agree.

Run from the project root:

    .venv/bin/python bench/eval_cpu.py --base ../other-checkout --rounds 4
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def child(tree: str, db: str, batch: int, warm: int) -> dict[str, Any]:
    """One run in this process, with ``tree``'s modules."""
    sys.path.insert(0, tree)
    import pyarrow as pa

    import evaluators
    from evaluators.service.config import EvaluationSettings, evaluator_configs
    from evaluators.service.references import References
    from evaluators.service.registry import discover
    from evaluators.service.running import Runner, build_tables, gc_paused
    from evaluators.service.views import fetch_with_window, make_inputs, views_from_tables
    from ragfault.local import LocalStore
    from ragfault_core.gcpolicy import collect_rarely

    assert Path(evaluators.__file__).resolve().is_relative_to(Path(tree).resolve()), evaluators.__file__
    local = LocalStore(db)
    cur = local.store.cursor()
    ids = [
        r[0]
        for r in cur.execute(
            "SELECT trace_id FROM traces WHERE settled_at IS NOT NULL ORDER BY first_received_at, trace_id"
        ).fetchall()
    ]
    refs = References()
    refs.refresh(cur)
    specs = discover()
    runner = Runner(specs, evaluator_configs(EvaluationSettings(), specs), tier="cheap")
    chunks = [ids[i : i + batch] for i in range(0, len(ids), batch)]
    fetched = [fetch_with_window(cur, c)[0] for c in chunks]
    now = datetime(2026, 6, 1, 12, 0, 0)
    collect_rarely()  # as an evaluation worker does once started
    digest = hashlib.sha256()
    views_s = build_s = 0.0
    timed = 0
    cold = 0.0
    for k, tables in enumerate(fetched):
        with gc_paused():
            t0 = time.process_time()
            views, gens = views_from_tables(tables)
            inputs = make_inputs(refs, views, ())
            t1 = time.process_time()
            out = build_tables(runner, inputs, gens, now)
            t2 = time.process_time()
        if k == 0:
            cold = (t2 - t0) / len(chunks[0]) * 1e6
        if k * batch >= warm:
            views_s += t1 - t0
            build_s += t2 - t1
            timed += len(chunks[k])
        for tbl in (out.evals, out.log, out.ran, out.done):
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, tbl.schema) as w:
                w.write_table(tbl.combine_chunks())
            digest.update(sink.getvalue().to_pybytes())
        del views, inputs, out
    local.close()
    return {
        "views_us": views_s / timed * 1e6,
        "build_us": build_s / timed * 1e6,
        "total_us": (views_s + build_s) / timed * 1e6,
        "cold_us": cold,
        "traces_timed": timed,
        "rows_sha256": digest.hexdigest(),
    }


def build(path: str, traces: int, kb_docs: int, seed: int) -> None:
    sys.path.insert(0, str(ROOT))
    from bench.evaluate import build_db

    local, _ = build_db(path, traces, kb_docs, seed)
    local.close()


def run(tree: str, db: str, args: argparse.Namespace, tmp: str) -> dict[str, Any]:
    copy = os.path.join(tmp, "run.duckdb")
    shutil.copyfile(db, copy)
    cmd = [
        sys.executable,
        __file__,
        "--child",
        tree,
        copy,
        "--batch",
        str(args.batch),
        "--warm",
        str(args.warm),
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    os.remove(copy)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=4000)
    ap.add_argument("--kb-docs", type=int, default=400)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--batch", type=int, default=200, help="traces a batch (the server's requests of 200)")
    ap.add_argument("--warm", type=int, default=400, help="traces evaluated untimed first")
    ap.add_argument("--rounds", type=int, default=3, help="runs per tree, alternating")
    ap.add_argument("--base", help="another checkout of the project (A), measured against this one (B)")
    ap.add_argument("--db", help="a database built by an earlier run (kept when given and missing)")
    ap.add_argument("--child", nargs=2, metavar=("TREE", "DB"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.batch, args.warm)))
        return 0
    trees = {"this": str(ROOT)}
    if args.base:
        trees = {"base": str(Path(args.base).resolve())} | trees
    with tempfile.TemporaryDirectory(prefix="ragfault-evalcpu-") as tmp:
        db = args.db or os.path.join(tmp, "bench.duckdb")
        if not os.path.exists(db):
            build(db, args.traces, args.kb_docs, args.seed)
        results: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                results[name].append(run(tree, db, args, tmp))
    print(
        f"load average {os.getloadavg()[0]:.2f}; {args.rounds} runs per tree, CPU µs a trace (least / median)"
    )
    print("| tree | views and inputs | evaluators and rows | total | first batch (cold) |")
    print("|---|---|---|---|---|")
    summary: dict[str, dict[str, tuple[float, float]]] = {}
    for name, runs in results.items():
        summary[name] = {
            k: (min(r[k] for r in runs), statistics.median(r[k] for r in runs))
            for k in ("views_us", "build_us", "total_us", "cold_us")
        }
        s = summary[name]
        print(f"| {name} | " + " | ".join(f"{s[k][0]:,.0f} / {s[k][1]:,.0f}" for k in s) + " |")
    if "base" in summary:
        a, b = summary["base"], summary["this"]
        print(
            "| base / this | "
            + " | ".join(f"{a[k][0] / b[k][0]:.2f} / {a[k][1] / b[k][1]:.2f}" for k in a)
            + " |"
        )
    hashes = {r["rows_sha256"] for runs in results.values() for r in runs}
    print(
        "verdict rows: "
        + ("identical in every run" if len(hashes) == 1 else f"DIFFER ({len(hashes)} digests)")
    )
    return 0 if len(hashes) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
