#!/usr/bin/env python
"""What a read of the lake's ``traces`` view costs as the lake grows.

For each size in ``--traces`` a new lake (a throwaway PostgreSQL catalog from ``tests/pg.py``, a local
data path) gets that many 4-span traces (``tests/collector/otlp_build.py``'s ``rag_spans`` and two more children), written in
requests of ``--batch`` traces, all settled; then ``--open`` of them get a late span (they are
open again, as traces in flight are). Each read is run ``--repeat`` times, the median printed in
milliseconds of wall time and of this process's CPU time (DuckDB's threads are in it):

- ``all``: ``SELECT count(*), sum(span_count), max(last_received_at) FROM traces``;
- ``one``: ``SELECT * FROM traces WHERE trace_id = ?``;
- ``ready``: one settle round's search for ready traces (``settling.ready_traces``);
- ``attribution``: ``SELECT count(*) FROM attribution`` (a bundled view that reads ``traces``).

Run from the project root in the environment with the lake set (DuckDB 1.5.5); to compare two
checkouts, run it with each one first on ``PYTHONPATH`` (the script adds its own tree otherwise):

    .lake-venv/bin/python bench/lake_traces.py --traces 5000,20000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(HERE.parent))

from collector.ingest.span_rows import flatten  # noqa: E402
from collector.settling.settle import Settler  # noqa: E402
from collector.store import settling  # noqa: E402
from collector.store.lake.store import LakeStore  # noqa: E402
from collector.store.schema import batch_to_arrow  # noqa: E402
from tests.collector.otlp_build import new_span_id, rag_spans, request, span  # noqa: E402
from tests.pg import postgres_cluster  # noqa: E402

T0 = datetime(2026, 3, 2, 12, 0, 0)


def fill(store: LakeStore, n: int, batch: int, n_open: int) -> list[str]:
    """``n`` settled traces, then a late span for the first ``n_open``; returns the trace ids."""
    con = store.cursor()
    ids: list[str] = []
    for start in range(0, n, batch):
        spans = []
        for _ in range(start, min(n, start + batch)):
            tid = os.urandom(16)
            ids.append(tid.hex())
            trace = rag_spans(tid)
            trace += [span(tid, parent=trace[0].span_id, name=f"step{k}") for k in range(2)]
            spans += trace
        store.write_spans(con, batch_to_arrow(flatten(request(spans, "bench"), received_at=T0)))
    settler = Settler(store.cursor(), lambda job: job(con), settle_seconds=1, max_wait_seconds=60,
                      batch_limit=batch)  # fmt: skip
    while settler.run_once(now=T0 + timedelta(seconds=2)):
        pass
    late = [span(bytes.fromhex(t), span_id=new_span_id(), parent=b"\x00" * 7 + b"\x01", name="late")
            for t in ids[:n_open]]  # fmt: skip
    if late:
        at = T0 + timedelta(seconds=30)
        store.write_spans(con, batch_to_arrow(flatten(request(late, "bench"), received_at=at)))
    return ids


def read_calls(cur: Any, one: str) -> dict[str, Callable[[], object]]:
    """The reads timed, on cursor ``cur`` (``one``: the trace id read alone)."""
    return {
        "all": lambda: cur.execute(
            "SELECT count(*), sum(span_count), max(last_received_at) FROM traces"
        ).fetchall(),
        "one": lambda: cur.execute("SELECT * FROM traces WHERE trace_id = ?", [one]).fetchall(),
        "ready": lambda: settling.ready_traces(
            cur, settled=T0 + timedelta(seconds=40), expired=T0, limit=2000
        ),
        "attribution": lambda: cur.execute("SELECT count(*) FROM attribution").fetchall(),
    }


def timed(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    wall, cpu = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        run()
        wall.append((time.perf_counter() - w) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default="5000,20000", help="lake sizes, comma-separated")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--open", type=int, default=50, help="traces opened again by a late span")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--out", default=str(HERE / "results" / "lake_traces.json"))
    args = ap.parse_args()
    results = []
    with postgres_cluster() as pg:
        for k, n in enumerate(int(x) for x in args.traces.split(",")):
            with tempfile.TemporaryDirectory() as data:
                store = LakeStore(pg.create_database(f"bench{k}"), data, extension_repository=False,
                                  claim_max_traces=args.batch)  # fmt: skip
                try:
                    ids = fill(store, n, args.batch, args.open)
                    cur = store.cursor()
                    reads = read_calls(cur, ids[-1])
                    check = cur.execute("SELECT count(*), sum(span_count) FROM traces").fetchall()[0]
                    row = {"traces": n, "open": args.open, "check": list(check), "load": os.getloadavg()[0]}
                    for name, run in reads.items():
                        run()  # warm
                        row[name] = timed(run, args.repeat)
                    results.append(row)
                    print(f"{n:>7} traces (open {args.open}; traces/span_count {check}; load {row['load']:.1f}): "
                          + "  ".join(f"{name} {row[name][0]:.1f} ms wall / {row[name][1]:.1f} ms CPU"
                                      for name in reads), flush=True)  # fmt: skip
                finally:
                    store.close()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
