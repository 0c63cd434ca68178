#!/usr/bin/env python
"""The bundled attribution statements return exactly what their plain one-pass formulations return.

``attribution`` and ``live_attribution`` read the verdicts in narrow passes (the flags from the small
columns, ``details`` only from the failed verdicts) because one wide pass over every verdict row cost
seconds on a store of 100,000 traces (issue 43). ``bench/reference/`` keeps the one-pass formulation
of every statement that was rewritten for that, as the definition the fast ones must equal. This
script runs both on a store, read only: the reference views are made as temporary views on one
connection, the bundled views (from ``queries/``, not whatever views the file holds; a view a file store
keeps as facts, ``attribution``, is the store's own statement reading them) on another, and
every bundled query that reads a view or has a reference is run on both with its default parameters.
With ``--changed N`` the file's views treat its N traces received last as changed by a write not yet
flushed (a temporary ``facts_changed`` on the bundled side): they compute those traces' facts when read,
as between two flushes.
The full outputs, each ordered by every column, must be equal value for value (strings byte for
byte); the times are printed beside them (warm: the median of ``--repeat`` runs after one).

    .venv/bin/python bench/same_results.py store.duckdb [--repeat 3] [--only attribution,root_causes] [--cold]
        [--changed 2000]

Exit status 1 when any output differs. ``tests/queries/test_same_results.py`` runs it on the demo
database.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from queries import Query, all_queries, parse  # noqa: E402

REFERENCE = ROOT / "bench" / "reference"
VIEWS = ("attribution", "live_attribution", "trace_health", "trace_coverage", "case_verdicts")


@dataclass(frozen=True)
class Outcome:
    """One query's full output on both sides and what each took."""

    name: str
    rows: int
    same: bool
    first_difference: str
    reference_ms: float
    bundled_ms: float
    reference_cpu_ms: float = 0.0
    bundled_cpu_ms: float = 0.0


def references() -> dict[str, Query]:
    """The one-pass formulations, by the name of the bundled query they define."""
    return {p.stem: parse(p.read_text(encoding="utf-8"), p.stem) for p in sorted(REFERENCE.glob("*.sql"))}


def checked_names(bundled: dict[str, Query], refs: dict[str, Query]) -> list[str]:
    """Every bundled query that has a reference or reads one of the views (a view itself included)."""
    return sorted(n for n, q in bundled.items() if n in refs or any(v in q.sql for v in VIEWS))


def has_facts(db: Path) -> bool:
    """Whether the file keeps the facts its own views read (migration 027: ``attribution_facts``)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'attribution_facts'"
        ).fetchone()
        return bool(row and row[0])
    finally:
        con.close()


def bundled_side(db: Path) -> dict[str, Query]:
    """What the store answers: the bundled statements, but a view a file store keeps as facts
    (``collector.store.file.facts``) is that store's own statement of the view, reading the facts."""
    bundled = all_queries()
    if not has_facts(db):
        return bundled
    from collector.store.file.facts import view_bodies

    return {**bundled, **{v: replace(bundled[v], sql=body) for v, body in view_bodies().items()}}


def connect(db: Path, views: dict[str, Query], changed: int = 0) -> duckdb.DuckDBPyConnection:
    """A read-only connection on which ``views`` shadow the file's own views (temporary views); with
    ``changed``, a temporary ``facts_changed`` names that many traces, those received last."""
    con = duckdb.connect(str(db), read_only=True)
    if changed:
        con.execute(
            "CREATE TEMP TABLE facts_changed AS "
            "SELECT t.trace_id, coalesce(min(e.evaluated_at), t.first_received_at) AS since, "
            "t.first_received_at AS received_since "
            "FROM (SELECT trace_id, first_received_at FROM traces ORDER BY first_received_at DESC, trace_id LIMIT $n) t "
            "LEFT JOIN evaluations e ON e.trace_id = t.trace_id GROUP BY t.trace_id, t.first_received_at",
            {"n": changed},
        )
    for name in VIEWS:
        con.execute(f"CREATE TEMP VIEW {name} AS {views[name].sql}")
    return con


def params(con: duckdb.DuckDBPyConnection, q: Query) -> dict[str, object]:
    """Default parameters, but a comparison of two runs compares the first and the last evaluated run."""
    if "base_run" not in q.params:
        return q.bind()
    runs = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT run_id FROM evaluations WHERE case_id IS NOT NULL AND run_id IS NOT NULL ORDER BY 1"
        ).fetchall()
    ]
    return q.bind({"base_run": runs[0], "new_run": runs[-1]} if runs else {})


def ordered(con: duckdb.DuckDBPyConnection, q: Query) -> tuple[list[tuple[Any, ...]], float]:
    """The query's whole output ordered by every column, and the milliseconds it took."""
    start = time.perf_counter()
    rows = con.execute(f"SELECT * FROM ({q.sql}) ORDER BY ALL", params(con, q)).fetchall()
    return rows, (time.perf_counter() - start) * 1000


def timed(con: duckdb.DuckDBPyConnection, q: Query, repeat: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds (DuckDB's threads included) of ``repeat`` warm runs, the
    output consumed inside DuckDB. On a machine others share, the CPU time is the steadier figure."""
    sql = f"SELECT count(*), bit_xor(hash(q)) FROM ({q.sql}) q"
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        con.execute(sql, params(con, q)).fetchall()
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def cold(db: Path, name: str, side: str) -> float:
    """Milliseconds of one query's first run in a fresh process (DuckDB's buffers empty; the operating
    system's page cache as the previous runs left it), the output consumed inside DuckDB."""
    code = (
        "import sys, time; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
        "from bench.same_results import first_run; print(first_run(Path(sys.argv[2]), sys.argv[3], sys.argv[4]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(ROOT), str(db), name, side],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout.strip())


def first_run(db: Path, name: str, side: str) -> float:
    """The body of :func:`cold`, run in the fresh process."""
    views = {**all_queries(), **references()} if side == "reference" else bundled_side(db)
    con = connect(db, views)
    try:
        start = time.perf_counter()
        con.execute(
            f"SELECT count(*), bit_xor(hash(q)) FROM ({views[name].sql}) q", params(con, views[name])
        ).fetchall()
        return (time.perf_counter() - start) * 1000
    finally:
        con.close()


def difference(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> str:
    """Where two outputs first part (empty when they are equal)."""
    if a == b:
        return ""
    if len(a) != len(b):
        return f"{len(a)} rows against {len(b)}"
    i = next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
    return f"row {i}: {a[i]!r:.300} against {b[i]!r:.300}"


def compare(db: Path, repeat: int = 0, only: set[str] | None = None, changed: int = 0) -> list[Outcome]:
    """Run every checked query on the reference and the bundled side of ``db`` (``changed``: see
    ``connect``)."""
    bundled = bundled_side(db)
    refs = references()
    ref_side = {**all_queries(), **refs}
    old = connect(db, ref_side)
    new = connect(db, bundled, changed if has_facts(db) else 0)
    out = []
    try:
        for name in checked_names(bundled, refs):
            if only and name not in only:
                continue
            a, ms_a = ordered(old, ref_side[name])
            b, ms_b = ordered(new, bundled[name])
            cpu_a = cpu_b = 0.0
            if repeat:
                (ms_a, cpu_a), (ms_b, cpu_b) = (
                    timed(old, ref_side[name], repeat),
                    timed(new, bundled[name], repeat),
                )
            out.append(Outcome(name, len(b), a == b, difference(a, b), ms_a, ms_b, cpu_a, cpu_b))
    finally:
        old.close()
        new.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db", type=Path, help="a store file (opened read only)")
    ap.add_argument("--repeat", type=int, default=3, help="warm runs timed per side (0: time the first)")
    ap.add_argument("--only", help="comma-separated query names")
    ap.add_argument("--cold", action="store_true", help="also time each side's first run in a fresh process")
    ap.add_argument(
        "--changed", type=int, default=0, help="traces the file's views take as changed, not flushed"
    )
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    outcomes = compare(args.db, args.repeat, only, args.changed)
    print(f"{'query':<18} {'rows':>8} {'same':>5} {'reference ms':>13} {'bundled ms':>11} {'cpu ms':>15}")
    for o in outcomes:
        cpu = f"{o.reference_cpu_ms:.0f} -> {o.bundled_cpu_ms:.0f}" if args.repeat else ""
        first = ""
        if args.cold:
            first = f"  cold {cold(args.db, o.name, 'reference'):.0f} -> {cold(args.db, o.name, 'bundled'):.0f} ms"
        print(
            f"{o.name:<18} {o.rows:>8} {str(o.same):>5} {o.reference_ms:>13.0f} {o.bundled_ms:>11.0f} {cpu:>15}{first}"
        )
        if not o.same:
            print(f"  differs: {o.first_difference}")
    return 0 if all(o.same for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
