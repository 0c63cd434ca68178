"""What user SQL costs on a store: every bundled query (the attribution view among them) and a user's
reads of one trace by id, timed on one or more stores in turn (A B A B).

Each statement runs on each store, one store after the other, ``--repeat`` times; the figures are the
median wall time and CPU time (the process's, DuckDB's threads included) of a run. Each bundled query
is wrapped in ``SELECT count(*), bit_xor(hash(q)) FROM (…) q``, so what is timed is DuckDB's work and
not the fetch into Python, and the count and the digest (which does not depend on row order) say
whether the stores gave the same rows. The point reads are ``--points`` trace ids picked from the
first store's ``traces`` (every ``n``-th by id), each read as ``SELECT attributes FROM spans``,
``SELECT * FROM evaluations`` and ``SELECT * FROM step_documents`` for that id, with no time bound
(the UI's and the API's reads of a trace bound theirs by its ``verdicts_since``); their rows are
fetched, and compared between stores by count.

``--copy-row-groups 16384,32768`` first makes copies of the first store whose tables are written
with row groups of that many rows (``ATTACH … (ROW_GROUP_SIZE n)`` and ``COPY FROM DATABASE``), beside
it (``<stem>-rg<n>.duckdb``, kept and reused), and times the copies beside the store; the file size of
each is printed too. That is how the row group size of ``collector/store/file/connect.py`` was chosen against
what it costs user SQL on a store in use:

    .venv/bin/python bench/query_times.py /tmp/prefill/prefill-300000-kb400-seed7-this.duckdb \\
        --copy-row-groups 16384,32768

(``sustain.py --prefill 300000 --prefill-dir /tmp/prefill`` builds that store.) Results are printed
and written to ``bench/results/query_times.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from collector.store import Store  # noqa: E402
from queries import all_queries  # noqa: E402

POINT_READS = {
    "spans.attributes of a trace": "SELECT attributes FROM spans WHERE trace_id = $t",
    "evaluations of a trace": "SELECT * FROM evaluations WHERE trace_id = $t",
    "step_documents of a trace": "SELECT * FROM step_documents WHERE trace_id = $t",
}


def copy_with_row_groups(source: Path, rows: int) -> Path:
    """``source`` copied into a new file whose tables are written in row groups of ``rows``."""
    target = source.with_name(f"{source.stem}-rg{rows}.duckdb")
    if target.exists():
        return target
    partial = target.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute(f"ATTACH '{source}' AS src (READ_ONLY)")
        con.execute(f"ATTACH '{partial}' AS dst (ROW_GROUP_SIZE {rows})")
        started = time.monotonic()
        con.execute("COPY FROM DATABASE src TO dst")
        con.execute("CHECKPOINT dst")
        print(f"copied {source.name} with row groups of {rows:,} rows in {time.monotonic() - started:.0f} s")
    finally:
        con.close()
    partial.rename(target)
    return target


def _run_params(store: Store) -> dict[str, Any]:
    """run_diff's two runs: the two with the most traces (none when the store has fewer)."""
    rows = (
        store.cursor()
        .execute(
            "SELECT run_id FROM traces WHERE run_id IS NOT NULL GROUP BY run_id ORDER BY count(*) DESC LIMIT 2"
        )
        .fetchall()
    )
    return {"base_run": rows[0][0], "new_run": rows[1][0]} if len(rows) == 2 else {}


def _timed(
    con: duckdb.DuckDBPyConnection, text: str, params: dict[str, Any] | None
) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = con.execute(text, params or None).fetchall()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def statements(first: Store, points: int) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """Each statement timed, with the parameter sets of one run of it."""
    out: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    runs = _run_params(first)
    for name, q in sorted(all_queries().items()):
        if any(p not in q.defaults for p in q.params) and not runs:
            print(f"{name}: skipped (needs two runs in the store)")
            continue
        params = q.bind(runs if name == "run_diff" else {})
        body = q.sql.strip().rstrip(";")
        out[name] = (f"SELECT count(*), bit_xor(hash(q)) FROM ({body}) q", [params])
    total = int(first.cursor().execute("SELECT count(*) FROM traces").fetchall()[0][0])
    step = max(1, total // max(1, points))
    ids = [
        r[0]
        for r in first.cursor()
        .execute(
            "SELECT trace_id FROM (SELECT trace_id, row_number() OVER (ORDER BY trace_id) AS n FROM traces) "
            "WHERE n % $step = 0 LIMIT $points",
            {"step": step, "points": points},
        )
        .fetchall()
    ]
    for name, text in POINT_READS.items():
        out[f"{name} (x{len(ids)})"] = (text, [{"t": t} for t in ids])
    return out


def _same(results: dict[str, list[Any]], paths: list[Path]) -> str:
    """Whether every store gave the rows of the first: "yes", "NO", or, where one store's own runs
    differ (sums of doubles added in another order by DuckDB's threads), "counts only" when the row
    counts agree."""
    first = results[str(paths[0])]
    if all(runs == first for runs in results.values()):
        return "yes"
    varies = any(len({repr(r) for r in runs}) > 1 for runs in results.values())
    counts = {repr([got[0] for got in run]) for runs in results.values() for run in runs}
    if varies and len(counts) == 1:
        return "counts only (a store's own runs differ)"
    return "NO"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("stores", nargs="+", type=Path, help="ragfault DuckDB files (opened read-only)")
    p.add_argument("--copy-row-groups", default="", help="row group sizes of copies of the first store")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--points", type=int, default=100, help="traces read one by one")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "query_times.json")
    args = p.parse_args()

    paths = list(args.stores)
    for rows in [int(x) for x in args.copy_row_groups.split(",") if x.strip()]:
        paths.append(copy_with_row_groups(args.stores[0], rows))
    stores = [Store(str(path), read_only=True) for path in paths]
    try:
        todo = statements(stores[0], args.points)
        timings: dict[str, dict[str, list[tuple[float, float]]]] = {
            n: {str(s): [] for s in paths} for n in todo
        }
        results: dict[str, dict[str, list[Any]]] = {n: {str(s): [] for s in paths} for n in todo}
        for name, (text, param_sets) in todo.items():
            for _ in range(args.repeat):
                for path, store in zip(paths, stores, strict=True):
                    con = store.cursor()
                    wall = cpu = 0.0
                    got = []
                    for params in param_sets:
                        w, c, rows = _timed(con, text, params)
                        wall, cpu = wall + w, cpu + c
                        # a bundled query's one row (count, digest); a point read's row count
                        got.append(rows[0] if len(param_sets) == 1 else (len(rows),))
                    timings[name][str(path)].append((wall, cpu))
                    results[name][str(path)].append(got)
    finally:
        for s in stores:
            s.con.close()

    report: dict[str, Any] = {
        "stores": {str(pth): {"bytes": pth.stat().st_size} for pth in paths},
        "statements": {},
    }
    print("\n| statement | " + " | ".join(f"{pth.name} ms (CPU ms)" for pth in paths) + " | same rows |")
    print("|---|" + "---|" * len(paths) + "---|")
    for name in todo:
        cells, row = [], {}
        for pth in paths:
            t = timings[name][str(pth)]
            wall = statistics.median(w for w, _ in t) * 1000
            cpu = statistics.median(c for _, c in t) * 1000
            cells.append(f"{wall:,.1f} ({cpu:,.1f})")
            row[str(pth)] = {"wall_ms": wall, "cpu_ms": cpu, "runs": t}
        same = _same(results[name], paths)
        row["same_rows"] = same
        report["statements"][name] = row
        print(f"| {name} | " + " | ".join(cells) + f" | {same} |")
    print()
    for pth in paths:
        print(f"{pth.name}: {pth.stat().st_size / 2**20:,.0f} MiB")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
