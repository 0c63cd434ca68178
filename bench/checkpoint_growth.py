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

The appends commit ``--per-commit`` traces a transaction (128 by default, the SDK's batch of 512
spans), as a collector's requests do: one transaction larger than a row group would be written
straight into row groups and leave the checkpoint nothing to compress. ``--rounds R`` instead
appends ``--traces`` and checkpoints R times on one copy and prints each checkpoint: the sequence a
steady collector meets, in which the checkpoint that completes a row group stands out; and what the
file's used blocks grew by, a trace appended (more often a checkpoint, more bytes for the same rows).

Each is run ``--repeat`` times; the figures are wall and CPU seconds of the checkpoint statement
alone (the process's CPU from ``os.times``; DuckDB's threads are counted). Run from the project root:

    .venv/bin/python bench/checkpoint_growth.py bench/results/prefill-300000-kb400-seed7-this.duckdb
    .venv/bin/python bench/checkpoint_growth.py STORE.duckdb --traces 8192 --kinds appends --repeat 3
    .venv/bin/python bench/checkpoint_growth.py STORE.duckdb --traces 8192 --row-group-rows 122880   # as before
    .venv/bin/python bench/checkpoint_growth.py STORE.duckdb --traces 2048 --rounds 16

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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from collector.store.file.connect import ROW_GROUP_ROWS

TABLES = ("spans", "steps", "step_documents", "traces", "evaluations", "eval_log")


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def _append(
    con: duckdb.DuckDBPyConnection, n: int, prefix: str, suffix: str = "", per_commit: int = 0
) -> None:
    """Copy the rows of ``n`` stored traces under new trace ids (``prefix`` + the old id) into each
    table (``table`` + ``suffix``), as ingest would have written them: ``per_commit`` traces a
    transaction (0: all in one). The rows are staged in temporary tables first, so each commit
    inserts only its own.

    The size of a commit matters: DuckDB writes an insert of more than a row group's rows straight
    into the file's row groups, compressed, and logs only where they are, so one transaction of
    8,192 traces leaves 4-6 MiB of WAL with row groups of 16,384 or 32,768 rows and the checkpoint
    after it has almost nothing to do. A collector's commits hold one request or a few (128 traces
    from the SDK's batches), which go through the WAL and are compressed by the checkpoint."""
    con.execute(
        f"CREATE TEMP TABLE pick AS SELECT trace_id, (row_number() OVER (ORDER BY rowid) - 1) AS n "
        f"FROM traces{suffix} QUALIFY n < {int(n)}"
    )
    chunk = per_commit if per_commit > 0 else n
    selects = {}
    for table in TABLES:
        cols = [r[0] for r in con.execute(f"DESCRIBE {table}{suffix}").fetchall()]
        selects[table] = ", ".join(f"'{prefix}' || trace_id" if c == "trace_id" else c for c in cols)
        con.execute(
            f"CREATE TEMP TABLE stage_{table} AS SELECT t.*, p.n // {chunk} AS stage_chunk "
            f"FROM {table}{suffix} t JOIN pick p ON t.trace_id = p.trace_id"
        )
    for c in range((n + chunk - 1) // chunk):
        con.execute("BEGIN")
        for table in TABLES:
            con.execute(
                f"INSERT INTO {table}{suffix} SELECT {selects[table]} FROM temp.main.stage_{table} "
                f"WHERE stage_chunk = {c}"
            )
        con.execute("COMMIT")
    for table in TABLES:
        con.execute(f"DROP TABLE temp.main.stage_{table}")
    con.execute("DROP TABLE pick")


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


@contextmanager
def _copy(store: Path, work: Path, row_group_rows: int) -> Iterator[tuple[duckdb.DuckDBPyConnection, Path]]:
    """A fresh copy of ``store``, opened as the store opens it, checkpointing only when told to; its
    connection and WAL path. The copy is removed on leaving."""
    copy = work / "copy.duckdb"
    wal = Path(str(copy) + ".wal")
    shutil.copyfile(store, copy)
    con = _open(copy, row_group_rows)
    con.execute("SET checkpoint_threshold = '100GB'")  # only the timed statement checkpoints
    try:
        yield con, wal
    finally:
        con.close()
        copy.unlink(missing_ok=True)
        wal.unlink(missing_ok=True)


def _checkpoint(con: duckdb.DuckDBPyConnection, wal: Path) -> tuple[float, float, int]:
    """``FORCE CHECKPOINT`` timed: wall seconds, CPU seconds, and the WAL's bytes before it."""
    wal_bytes = wal.stat().st_size if wal.exists() else 0
    c0, t0 = _cpu(), time.perf_counter()
    con.execute("FORCE CHECKPOINT")
    return time.perf_counter() - t0, _cpu() - c0, wal_bytes


def measure(
    store: Path, work: Path, kind: str, n: int, row_group_rows: int, per_commit: int
) -> tuple[float, float, int]:
    with _copy(store, work, row_group_rows) as (con, wal):
        if kind == "appends":
            _append(con, n, "cg-", per_commit=per_commit)
        elif kind == "updates":
            _append(con, n, "cg-", per_commit=per_commit)
            _update(con, "cg-")
        elif kind == "no-keys":
            _no_keys(con)
            _append(con, n, "cg-", "_nk", per_commit=per_commit)
        return _checkpoint(con, wal)


def _used_bytes(con: duckdb.DuckDBPyConnection) -> int:
    """The bytes of the copy's used blocks (its free blocks not counted)."""
    used, block = con.execute(
        "SELECT used_blocks, block_size FROM pragma_database_size() WHERE database_name = 's'"
    ).fetchall()[0]
    return int(used) * int(block)


def rounds(store: Path, work: Path, n: int, count: int, row_group_rows: int, per_commit: int) -> None:
    """On one copy, ``count`` times: append ``n`` traces, then checkpoint; each checkpoint printed
    (a steady collector's sequence: the one that completes a row group stands out)."""
    print(f"\n| round ({n:,} traces each) | spans after | WAL | wall s | CPU s |")
    print("|---|---|---|---|---|")
    walls = []
    with _copy(store, work, row_group_rows) as (con, wal):
        before = _used_bytes(con)
        for r in range(count):
            _append(con, n, f"cg{r}-", per_commit=per_commit)
            spans = con.execute("SELECT count(*) FROM spans").fetchone()[0]  # type: ignore[index]
            wall, cpu, wal_bytes = _checkpoint(con, wal)
            walls.append(wall)
            print(
                f"| {r + 1} | {spans:,} | {wal_bytes / 2**20:,.1f} MiB | {wall:.2f} | {cpu:.2f} |", flush=True
            )
        grown = _used_bytes(con) - before
    print(f"\n{count} checkpoints: {sum(walls):.2f} s in all, the longest {max(walls):.2f} s")
    # what the file's used blocks grew by: the more often a checkpoint runs, the more partly filled
    # blocks the same rows take (bench/README.md, verdict_shapes.py --checkpoint-every)
    print(
        f"the file's used blocks grew by {grown / 2**20:,.1f} MiB, {grown / (n * count):,.0f} B a trace appended"
    )


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
    ap.add_argument(
        "--per-commit", type=int, default=128, help="traces a transaction of the appends (0: one transaction)"
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="instead: this many rounds of appends and a checkpoint on one copy",
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
    print(f"row groups of {args.row_group_rows:,} rows; {args.per_commit or args.traces:,} traces a commit")
    if args.rounds:
        with tempfile.TemporaryDirectory(
            prefix="ragfault-cpgrowth-", dir=args.work_dir or store.parent
        ) as tmp:
            rounds(store, Path(tmp), args.traces, args.rounds, args.row_group_rows, args.per_commit)
        return 0
    print(f"\n| write before the checkpoint ({args.traces:,} traces) | WAL | wall s | CPU s |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="ragfault-cpgrowth-", dir=args.work_dir or store.parent) as tmp:
        for kind in args.kinds.split(","):
            got = [
                measure(store, Path(tmp), kind, args.traces, args.row_group_rows, args.per_commit)
                for _ in range(args.repeat)
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
