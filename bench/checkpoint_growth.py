"""What one checkpoint costs as the store grows, and which part of the write makes it cost.

`sustain.py --prefill N` starts the server on a store that already holds N evaluated traces. On a
store of 300,000 traces the first checkpoint under steady load held every write for about ten
seconds. This bench takes such a store (any ragfault DuckDB file, copied first; the original is not
touched) and times one ``CHECKPOINT`` after each kind of write a busy collector makes between two
checkpoints, each on its own fresh copy:

- ``appends``: the rows of ``--traces`` stored traces copied under new trace ids into ``spans``,
  ``steps``, ``step_documents``, ``traces``, ``evaluations`` and ``eval_log`` (what ingest, settling
  and the verdict write append);
- ``updates``: the same, then the new ``traces`` rows updated as settling and the verdicts' marks
  update them (the query and answer texts, ``assembled_spans``, ``settled_at``, ``evaluated_spans``);
- ``no-keys``: the same appends into copies of those tables made without their primary keys
  (``CREATE TABLE … AS``), to tell the keys' share apart;
- ``nothing``: ``FORCE CHECKPOINT`` with nothing written.

A checkpoint that completes a row group of ``spans`` and ``steps`` costs ten times one that does
not (bench/README.md, 2026-12-04): ``--traces`` decides whether the appends cross the boundary of the
store's last row group (122,880 rows; four spans a bench trace).

Each is run ``--repeat`` times; the figures are wall and CPU seconds of the checkpoint statement
alone (the process's CPU from ``os.times``; DuckDB's threads are counted). Run from the project root:

    .venv/bin/python bench/checkpoint_growth.py bench/results/prefill-300000-kb400-seed7-this.duckdb
    .venv/bin/python bench/checkpoint_growth.py STORE.duckdb --traces 8192 --kinds appends --repeat 3
    .venv/bin/python bench/checkpoint_growth.py STORE.duckdb --traces 8192 --row-group-rows 122880   # as before

The copy is attached as the store attaches its file, with ``--row-group-rows`` (the store's by
default); the figures of bench/README.md's 2026-12-04 table were taken with DuckDB's default, 122,880.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

from collector.store.duck import ROW_GROUP_ROWS

TABLES = ("spans", "steps", "step_documents", "traces", "evaluations", "eval_log")


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def _append(con: duckdb.DuckDBPyConnection, n: int, prefix: str, suffix: str = "") -> None:
    """Copy the rows of ``n`` stored traces under new trace ids (``prefix`` + the old id) into each
    table (``table`` + ``suffix``), in one transaction, as ingest would have written them."""
    con.execute("BEGIN")
    con.execute(
        f"CREATE TEMP TABLE pick AS SELECT trace_id FROM traces{suffix} ORDER BY rowid LIMIT {int(n)}"
    )
    for table in TABLES:
        cols = [r[0] for r in con.execute(f"DESCRIBE {table}{suffix}").fetchall()]
        select = ", ".join(f"'{prefix}' || trace_id" if c == "trace_id" else c for c in cols)
        con.execute(
            f"INSERT INTO {table}{suffix} SELECT {select} FROM {table}{suffix} "
            f"WHERE trace_id IN (SELECT trace_id FROM pick)"
        )
    con.execute("DROP TABLE pick")
    con.execute("COMMIT")


def _update(con: duckdb.DuckDBPyConnection, prefix: str) -> None:
    """Settle and mark evaluated the appended traces, as settling and the verdict write do: two
    transactions, each updating the new ``traces`` rows."""
    where = f"WHERE starts_with(trace_id, '{prefix}')"
    con.execute(
        "UPDATE traces SET query_text = query_text || ' ', answer_text = answer_text || ' ', "
        f"assembled_spans = span_count, settled_at = now() {where}"
    )
    con.execute(f"UPDATE traces SET evaluated_spans = assembled_spans {where}")


def _no_keys(con: duckdb.DuckDBPyConnection) -> None:
    for table in TABLES:
        con.execute(f"CREATE TABLE {table}_nk AS SELECT * FROM {table}")
    con.execute("CHECKPOINT")


def _open(path: Path, row_group_rows: int, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """The file attached as the store attaches it (``ROW_GROUP_SIZE``: an option of ATTACH only)."""
    con = duckdb.connect(config={"threads": 2})
    con.execute(f"ATTACH '{path}' AS s ({'READ_ONLY, ' if read_only else ''}ROW_GROUP_SIZE {row_group_rows})")
    con.execute("USE s")
    return con


def measure(store: Path, work: Path, kind: str, n: int, row_group_rows: int) -> tuple[float, float, int]:
    copy = work / "copy.duckdb"
    shutil.copyfile(store, copy)
    con = _open(copy, row_group_rows)
    con.execute("SET checkpoint_threshold = '100GB'")  # only the timed statement checkpoints
    try:
        if kind == "appends":
            _append(con, n, "cg-")
        elif kind == "updates":
            _append(con, n, "cg-")
            _update(con, "cg-")
        elif kind == "no-keys":
            _no_keys(con)
            _append(con, n, "cg-", "_nk")
        wal = Path(str(copy) + ".wal")
        wal_bytes = wal.stat().st_size if wal.exists() else 0
        c0, t0 = _cpu(), time.perf_counter()
        con.execute("FORCE CHECKPOINT")
        return time.perf_counter() - t0, _cpu() - c0, wal_bytes
    finally:
        con.close()
        copy.unlink(missing_ok=True)
        Path(str(copy) + ".wal").unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store", help="a ragfault DuckDB file (copied; not changed)")
    ap.add_argument("--traces", type=int, default=4096, help="traces appended before each checkpoint")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument(
        "--kinds", default="nothing,appends,updates,no-keys", help="which writes, comma-separated"
    )
    ap.add_argument(
        "--row-group-rows",
        type=int,
        default=ROW_GROUP_ROWS,
        help=f"rows a row group of the copy's new rows (the store's: {ROW_GROUP_ROWS:,}; DuckDB's default: 122,880)",
    )
    ap.add_argument("--work-dir", default=None, help="where the copies go (default: beside the store)")
    args = ap.parse_args(argv)
    unknown = set(args.kinds.split(",")) - {"nothing", "appends", "updates", "no-keys"}
    if unknown:
        ap.error(f"unknown --kinds: {', '.join(sorted(unknown))}")
    store = Path(args.store)
    con = _open(store, args.row_group_rows, read_only=True)
    rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    con.close()
    print(
        f"{store.name}: {store.stat().st_size / 2**20:,.0f} MiB; "
        + ", ".join(f"{t} {c:,}" for t, c in rows.items())
    )
    print(f"\n| write before the checkpoint ({args.traces:,} traces) | WAL | wall s | CPU s |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="ragfault-cpgrowth-", dir=args.work_dir or store.parent) as tmp:
        for kind in args.kinds.split(","):
            got = [
                measure(store, Path(tmp), kind, args.traces, args.row_group_rows) for _ in range(args.repeat)
            ]
            wall = statistics.median(g[0] for g in got)
            cpu = statistics.median(g[1] for g in got)
            print(
                f"| {kind} | {got[0][2] / 2**20:,.1f} MiB | {wall:.2f} "
                f"({', '.join(f'{g[0]:.2f}' for g in got)}) | {cpu:.2f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
