#!/usr/bin/env python
"""What finding the traces waiting for the cheap tier costs as ``traces`` grows.

The evaluation loop asks for the oldest waiting traces (``sql/verdicts/pending.sql``) at every round
and again for each group of a round, on a table that holds every trace kept. For each size of
``--sizes`` this fills ``traces`` of a fresh database file with that many evaluated traces plus
``--waiting`` waiting ones (one of every 100,000 re-queued among the old ones), checkpoints, and
times the statement as it is against its former one-pass form (which filtered and sorted every
row with its trace id), ``--repeat`` times each after one untimed run: CPU ms a call
(``time.process_time``, DuckDB's threads included) and wall ms; both must return the same rows.

Run from the project root:

    .venv/bin/python bench/queue_scan.py
    .venv/bin/python bench/queue_scan.py --sizes 3000000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from collector.store import Store  # noqa: E402
from collector.store.sqlfiles import sql  # noqa: E402

ONE_PASS = """
SELECT trace_id, assembled_spans, first_received_at
FROM traces
WHERE settled_at IS NOT NULL AND assembled_spans IS NOT NULL
  AND (evaluated_spans IS NULL OR evaluated_spans <> assembled_spans)
ORDER BY settled_at
LIMIT $n
"""


def timed(con, text: str, n: int, repeat: int) -> tuple[float, float, list]:
    rows = con.execute(text, {"n": n}).fetchall()
    t0, w0 = time.process_time(), time.perf_counter()
    for _ in range(repeat):
        rows = con.execute(text, {"n": n}).fetchall()
    return (time.process_time() - t0) / repeat * 1e3, (time.perf_counter() - w0) / repeat * 1e3, rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000,1000000", help="traces in the table, comma-separated")
    ap.add_argument("--waiting", type=int, default=200, help="the newest traces, waiting")
    ap.add_argument("--limit", type=int, default=600, help="$n: a round's group (200 × 3)")
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args(argv)
    print("| traces | statement | CPU ms a call | wall ms | rows |\n|---|---|---|---|---|")
    for size in (int(x) for x in args.sizes.split(",") if x.strip()):
        with tempfile.TemporaryDirectory(prefix="ragfault-queue-") as tmp:
            store = Store(str(Path(tmp) / "q.duckdb"))
            store.con.execute(
                "INSERT INTO traces (trace_id, first_received_at, last_received_at, span_count, settled_at, "
                "assembled_spans, evaluated_spans, eval_generation) "
                "SELECT md5(i::VARCHAR), t, t, 4, t, 4, CASE WHEN i < $n - $w AND i % 100000 <> 7 THEN 4 END, 1 "
                "FROM (SELECT i, TIMESTAMP '2026-11-01' + to_milliseconds(i) AS t FROM range($n) r(i))",
                {"n": size, "w": args.waiting},
            )
            store.con.execute("CHECKPOINT")
            con = store.cursor()
            now_cpu, now_wall, now_rows = timed(con, sql("verdicts", "pending"), args.limit, args.repeat)
            old_cpu, old_wall, old_rows = timed(con, ONE_PASS, args.limit, args.repeat)
            if now_rows != old_rows:
                print(f"the two forms differ at {size:,} traces", file=sys.stderr)
                return 1
            print(f"| {size:,} | one pass (before) | {old_cpu:,.1f} | {old_wall:,.1f} | {len(old_rows)} |")
            print(f"| {size:,} | narrow first (now) | {now_cpu:,.1f} | {now_wall:,.1f} | {len(now_rows)} |")
            con.close()
            store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
