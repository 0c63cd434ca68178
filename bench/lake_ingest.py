#!/usr/bin/env python
"""Ingest into a DuckLake against the single DuckDB file, in the same run: spans per second and commit
latency (p50, p99), and the lake's figures as ratios of the file's.

Both stores are fed the same pre-flattened commits (``bench/ingest.py``'s RAG traces, 4 spans and 20
documents each, ``--traces-per-commit`` traces a commit) through ``write_spans``, the call the writer
makes for one group commit, so the figures are the stores' own: no HTTP, no decoding. Each commit is
acknowledged only once it returns (COMMIT done). The lake's catalog is a throwaway PostgreSQL cluster
(``tests/pg.py``) unless ``--catalog`` names one; its data path is a local directory.

With ``--writers N`` (N > 1) the lake is also written by N processes at once, each its own collector
with its own commits: the spans per second of all of them together, and every commit's latency.

Run from the project root in the environment with the lake set (DuckDB 1.5.5):

    python -m tests.store.lake_venv        # prints .lake-venv/bin/python, creating it if needed
    .lake-venv/bin/python bench/lake_ingest.py --commits 200 --traces-per-commit 10 --writers 2
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402

from bench.ingest import build_requests  # noqa: E402
from collector.ingest.batch import ArrowBatch  # noqa: E402
from collector.ingest.span_rows import flatten  # noqa: E402
from collector.store.schema import batch_to_arrow  # noqa: E402


def batches(commits: int, per_commit: int, seed: int) -> list[ArrowBatch]:
    bodies, _ = build_requests(commits * per_commit, per_commit, seed)
    out = []
    for body in bodies:
        req = ExportTraceServiceRequest()
        req.ParseFromString(body)
        out.append(batch_to_arrow(flatten(req)))
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(store: object, todo: list[ArrowBatch]) -> dict[str, float]:
    con = store.cursor()  # type: ignore[attr-defined]
    latencies = []
    spans = 0
    t0 = time.perf_counter()
    for batch in todo:
        t = time.perf_counter()
        spans += store.write_spans(con, batch)  # type: ignore[attr-defined]
        latencies.append(time.perf_counter() - t)
    elapsed = time.perf_counter() - t0
    return {
        "spans": spans, "seconds": elapsed, "spans_per_s": spans / elapsed,
        "commit_p50_ms": 1000 * pct(latencies, 0.5), "commit_p99_ms": 1000 * pct(latencies, 0.99),
        "commit_mean_ms": 1000 * statistics.fmean(latencies),
    }  # fmt: skip


def _writer(catalog: str, data_path: str, seed: int, commits: int, per_commit: int, q: mp.Queue) -> None:  # type: ignore[type-arg]
    from collector.store.lake.store import LakeStore

    todo = batches(commits, per_commit, seed)
    store = LakeStore(catalog, data_path, extension_repository=False)
    try:
        q.put(run(store, todo) | {"latencies": []})
    finally:
        store.close()


@contextlib.contextmanager
def catalog(url: str | None) -> Iterator[tuple[str, str, Any]]:
    """(catalog URL, data path, the throwaway cluster or None): a new database of a throwaway cluster
    unless ``url`` is given."""
    data = tempfile.mkdtemp(prefix="ragfault-lake-bench-")
    try:
        if url:
            yield url, data, None
            return
        from tests.pg import postgres_cluster

        with postgres_cluster() as pg:
            yield pg.create_database("bench"), data, pg
    finally:
        shutil.rmtree(data, ignore_errors=True)


_PG_COUNTERS = ("xact_commit", "xact_rollback", "tup_inserted", "tup_updated", "tup_deleted", "tup_returned")


def catalog_counters(pg: Any) -> dict[str, int]:
    """The catalog database's counters from ``pg_stat_database`` (flushed when a session ends)."""
    row = pg._psql(
        "postgres", f"SELECT {', '.join(_PG_COUNTERS)} FROM pg_stat_database WHERE datname = 'bench'"
    )
    return dict(zip(_PG_COUNTERS, (int(v) for v in row.strip().split("|")), strict=True))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--traces-per-commit", type=int, default=10)
    ap.add_argument(
        "--writers", type=int, default=1, help="also write the lake from this many processes at once"
    )
    ap.add_argument("--catalog", help="postgresql://USER@HOST:PORT/DB (default: a throwaway cluster)")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "lake_ingest.json")
    args = ap.parse_args()

    import duckdb

    from collector.store import Store
    from collector.store.lake.store import LakeStore

    todo = batches(args.commits, args.traces_per_commit, args.seed)
    results: dict[str, object] = {
        "duckdb": duckdb.__version__, "commits": args.commits, "traces_per_commit": args.traces_per_commit,
        "spans_per_commit": len(todo[0]),
    }  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="ragfault-file-bench-") as d:
        store = Store(Path(d) / "bench.duckdb")
        try:
            results["file"] = run(store, todo)
        finally:
            store.close()
    with catalog(args.catalog) as (url, data, pg):
        lake = LakeStore(url, data, extension_repository=False)
        try:
            # the catalog's work for the commits alone: counters once the open store's sessions went
            # idle long enough to report theirs (PostgreSQL flushes an idle session's within 10 s),
            # against those after the run
            if pg is not None:
                time.sleep(11)
                before = catalog_counters(pg)
            results["lake"] = run(lake, todo)
            files = sum(1 for _ in Path(data).rglob("*.parquet"))
            results["lake_parquet_files"] = files
            results["lake_files_per_commit"] = files / args.commits
        finally:
            lake.close()
        if pg is not None:
            time.sleep(1.5)
            after = catalog_counters(pg)
            results["catalog_per_commit"] = {k: (after[k] - before[k]) / args.commits for k in _PG_COUNTERS}
        if args.writers > 1:
            q: mp.Queue = mp.Queue()  # type: ignore[type-arg]
            procs = [
                mp.Process(
                    target=_writer,
                    args=(url, data, args.seed + 1 + i, args.commits, args.traces_per_commit, q),
                )
                for i in range(args.writers)
            ]
            t0 = time.perf_counter()
            for p in procs:
                p.start()
            each = [q.get(timeout=3600) for _ in procs]
            for p in procs:
                p.join()
            wall = time.perf_counter() - t0  # includes each writer's start (attach, schema check)
            spans = sum(int(r["spans"]) for r in each)
            results[f"lake_{args.writers}_writers"] = {
                "spans": spans,
                "spans_per_s_sum_of_writers": sum(float(r["spans_per_s"]) for r in each),
                "spans_per_s_wall": spans / wall,
                "commit_p50_ms_worst_writer": max(float(r["commit_p50_ms"]) for r in each),
                "commit_p99_ms_worst_writer": max(float(r["commit_p99_ms"]) for r in each),
            }
    f, lk = results["file"], results["lake"]
    assert isinstance(f, dict) and isinstance(lk, dict)
    results["ratios_lake_to_file"] = {
        "spans_per_s": lk["spans_per_s"] / f["spans_per_s"],
        "commit_p50": lk["commit_p50_ms"] / f["commit_p50_ms"],
        "commit_p99": lk["commit_p99_ms"] / f["commit_p99_ms"],
    }
    print(json.dumps(results, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
