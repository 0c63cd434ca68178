#!/usr/bin/env python
"""What a stored RAG trace costs on disk: the single DuckDB file and the lake (each stored, settled
and evaluated), and Arize Phoenix's database, against the raw OTLP bytes of the same traces.

The traces are ``bench/evaluate.py``'s (four spans: root, retriever with 20 documents, reranker
taking the 20 and keeping 5, LLM call; half English, half Chinese; a gold case each; a registry of
KB documents), in one of two shapes (``--shape``, or ``both``, one after the other):

- **large** (the default): as ``evaluate.py`` builds them: documents of 150-300 characters (60-120
  in Chinese), a ~3 KB prompt (the system prompt four times and the five reranked documents);
  about 26.6 KB of raw OTLP a trace;
- **small**: the same traces (the same draws of evidence, candidates, answers and gold cases), with
  short texts: every registry document is its key sentence alone (one policy statement, 50-80
  characters; 34-44 in Chinese, about 100 bytes), and the system prompt is sent once; about 16.9 KB
  of raw OTLP a trace. The cheap tier writes about as many verdict rows a trace as on the large
  shape, so this is where the verdicts' share of the bytes is largest.

They are built once a shape and sent as OTLP/HTTP protobuf requests to each system:

- **ragfault file**: ``ragfault load`` puts the registry and the gold cases in a fresh database, then
  ``ragfault serve`` receives the traces, settles them and runs the cheap tier on each; once every
  trace is evaluated the server stops (it checkpoints on the way out) and the file is measured:
  whole, and without the free blocks the last checkpoints left (later writes reuse them; how many
  there are varies from run to run). Per table: rows and the storage blocks holding its segments;
  rows a trace of ``evaluations``.
- **ragfault lake** (``--lake``, in the environment with the lake set): a ``ragfault serve --store
  ducklake`` on a throwaway PostgreSQL catalog, with the same settings; ``ragfault load --server``
  puts the registry and the gold cases in through it, then it receives the traces, settles and
  evaluates them; once every trace is evaluated it stops and the data path's bytes plus the
  catalog database's size are measured (lake maintenance off: the Parquet files as written). Bytes
  a trace are the whole lake's over the traces (its fixed catalog included), and apart, over what
  it grew by from the references loaded (as the file's are).
- **Phoenix** (``--phoenix-traces``, 0 to skip; installed into ``bench/.phoenix-venv``): ``phoenix
  serve`` receives the first traces (it persists ~100 spans a second, so fewer are sent), and its
  SQLite file is measured once every span is in it; bytes a trace are compared.

Raw OTLP is the uncompressed protobuf of the requests (and gzip -6 of it, what exporters send with
compression on); it is printed a trace and a span before anything is sent, so the shape can be
checked. Run from the project root:

    .venv/bin/python bench/storage.py --traces 5000 --phoenix-traces 500
    .venv/bin/python bench/storage.py --traces 5000 --phoenix-traces 500 --shape small
    .lake-venv/bin/python bench/storage.py --traces 5000 --phoenix-traces 0 --lake --skip-file --shape both

Per table it reports rows, blocks and bytes a trace, and the bytes of each column (from the
segments' blocks and offsets in the file; from the Parquet column chunks in the lake). ``--keep DIR``
keeps a copy of the single file's database (in ``DIR/<shape>`` with ``--shape both``);
``--skip-file`` measures only the lake and Phoenix.

Results are printed and written to bench/results/storage.json (with ``--shape both``: one object a
shape under ``shapes``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402

from bench.ingest import (  # noqa: E402
    config_toml,
    ensure_phoenix,
    free_ports,
    ragfault_bin,
    start_ragfault,
    stop_process,
    wait_http,
)
from bench.sustain import build  # noqa: E402

PROTOBUF = {"Content-Type": "application/x-protobuf"}
SHAPES = ("large", "small")
# both collectors: traces settle a second after their last span, no judge sampling
SERVER_CONFIG: dict[str, object] = {
    "settle_seconds": 1,
    "log_level": "warning",
    "sampling.production_rate": 0.0,
}
EVALUATED = 'ragfault_traces_evaluated_total{tier="cheap"}'


def build_shape(
    shape: str, n_traces: int, per_request: int, kb_docs: int, seed: int, workdir: Path
) -> tuple[list[bytes], dict[str, float]]:
    """Request bodies of ``n_traces`` traces of ``shape`` (``sustain.build``; ``small``: the same draws
    with every registry document its key sentence and the system prompt sent once), the registry and
    gold cases written into ``workdir`` (kb.jsonl, gold.jsonl), and the raw OTLP bytes of each span
    (by its name) a trace."""
    small = shape == "small"
    bodies = build(
        n_traces, per_request, kb_docs, seed, workdir, key_sentences=small, system_copies=1 if small else 4
    )
    span_bytes: dict[str, int] = {}
    for body in bodies:
        for span in ExportTraceServiceRequest.FromString(body).resource_spans[0].scope_spans[0].spans:
            span_bytes[span.name] = span_bytes.get(span.name, 0) + span.ByteSize()
    return bodies, {name: b / n_traces for name, b in span_bytes.items()}


def post_all(port: int, bodies: list[bytes]) -> None:
    for body in bodies:
        while True:
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/traces", data=body, headers=PROTOBUF, method="POST"
            )
            try:
                with urllib.request.urlopen(req, timeout=300) as r:
                    r.read()
                break
            except urllib.error.HTTPError as exc:
                if exc.code not in (429, 503):
                    raise
                time.sleep(0.2)


def metric(port: int, name: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.split()[-1])
    return 0.0


def file_sizes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


def tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def ragfault_file(bodies: list[bytes], n_traces: int, work: Path, keep: Path | None = None) -> dict[str, Any]:
    db = work / "bench.duckdb"
    from collector.store import Store

    Store(db).close()  # `ragfault load` refuses a database file that does not exist (a mistyped --db)
    for kind in ("kb", "gold"):
        done = subprocess.run(
            ragfault_bin() + ["load", kind, str(work / f"{kind}.jsonl"), "--db", str(db),
                              "--server", "http://127.0.0.1:9"],  # never a server that happens to run
            capture_output=True, text=True, cwd=work,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"ragfault load {kind} failed: {done.stdout}{done.stderr}")
    references = file_sizes(db)
    proc, port, log = start_ragfault(work, SERVER_CONFIG)
    try:
        t0 = time.perf_counter()
        post_all(port, bodies)
        wait_evaluated(port, proc, n_traces, log)
        seconds = time.perf_counter() - t0
    finally:
        stop_process(proc)
    import duckdb

    total = file_sizes(db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables: dict[str, dict[str, Any]] = {}
        for (name,) in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall():
            rows = con.execute(f'SELECT count(*) FROM "{name}"').fetchone()
            # the blocks its column segments sit in (a block two tables share counts for both)
            used = con.execute(
                f"SELECT count(DISTINCT b) FROM (SELECT block_id AS b FROM pragma_storage_info('{name}') "
                f"WHERE block_id >= 0 UNION ALL SELECT unnest(additional_block_ids) "
                f"FROM pragma_storage_info('{name}'))"
            ).fetchone()
            tables[name] = {"rows": int(rows[0]) if rows else 0, "blocks": int(used[0]) if used else 0}
        blocks = con.execute(
            "SELECT total_blocks, block_size, free_blocks FROM pragma_database_size()"
        ).fetchone()
        assert blocks is not None
        columns = column_bytes(con, [t for t in tables if tables[t]["rows"]], int(blocks[1]))
        for name, per_column in columns.items():
            tables[name]["bytes_per_trace"] = round(sum(per_column.values()) / n_traces)
            tables[name]["columns_bytes_per_trace"] = {
                c: round(b / n_traces) for c, b in sorted(per_column.items(), key=lambda kv: -kv[1]) if b
            }
    finally:
        con.close()
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        for f in db.parent.glob(db.name + "*"):
            if f.is_file():  # the database and its WAL (the UI's facts cache is a directory)
                (keep / f.name).write_bytes(f.read_bytes())
    return {
        "bytes": total,
        "bytes_before_traces": references,
        "bytes_per_trace": (total - references) / n_traces,
        "used_blocks": int(blocks[0]) - int(blocks[2]),
        "free_blocks": int(blocks[2]),
        # the free blocks are what the last checkpoints left (reused by later writes): how many
        # varies from run to run, so the bytes a trace in use are given apart as well
        "bytes_per_trace_in_use": (total - int(blocks[2]) * int(blocks[1]) - references) / n_traces,
        "block_size": int(blocks[1]),
        "evaluation_rows_per_trace": tables.get("evaluations", {}).get("rows", 0) / n_traces,
        "tables": tables,
        "seconds_to_evaluated": seconds,
    }


def column_bytes(con: Any, tables: list[str], block_size: int) -> dict[str, dict[str, int]]:
    """Bytes each column's segments take (≈): a segment that fills blocks of its own counts them
    whole; segments packed into a shared block count from their offset to the next segment's (the
    last one to the block's end, so a block's free tail is counted too)."""
    segments: list[tuple[str, str, int, int, int]] = []  # table, column, block, offset, extra blocks
    for name in tables:
        for column, block, offset, extra in con.execute(
            f"SELECT column_name, block_id, block_offset, len(additional_block_ids) "
            f"FROM pragma_storage_info('{name}') WHERE block_id >= 0"
        ).fetchall():
            segments.append((name, str(column), int(block), int(offset), int(extra or 0)))
    by_block: dict[int, list[tuple[int, str, str]]] = {}
    out: dict[str, dict[str, int]] = {name: {} for name in tables}
    for name, column, block, offset, extra in segments:
        by_block.setdefault(block, []).append((offset, name, column))
        out[name][column] = out[name].get(column, 0) + extra * block_size
    for packed in by_block.values():
        packed.sort()
        for i, (offset, name, column) in enumerate(packed):
            end = packed[i + 1][0] if i + 1 < len(packed) else block_size
            out[name][column] = out[name].get(column, 0) + end - offset
    return out


def wait_evaluated(port: int, proc: subprocess.Popen, n_traces: int, log: Path) -> None:
    """Until the cheap tier has evaluated ``n_traces`` traces (at most 30 minutes)."""
    deadline = time.monotonic() + 1800
    while metric(port, EVALUATED) < n_traces:
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit(f"not every trace was evaluated: {log.read_text()[-2000:]}")
        time.sleep(0.5)


def ragfault_lake(bodies: list[bytes], n_traces: int, work: Path, refs: Path) -> dict[str, Any]:
    """A lake collector with the registry and gold cases of ``refs`` (kb.jsonl, gold.jsonl) loaded
    through it, then the traces, until every trace is settled and evaluated (as on the file)."""
    from tests.pg import postgres_cluster

    def catalog_size() -> int:
        return int(pg.query("storage", "SELECT pg_database_size(current_database())").strip())

    with postgres_cluster() as pg:
        catalog = pg.create_database("storage")
        data = work / "lake-data"
        port, grpc = free_ports(2)
        log = work / "lake.log"
        cfg = work / "ragfault.toml"
        cfg.write_text(config_toml(SERVER_CONFIG))
        env = {
            **os.environ,
            "RAGFAULT_EXTENSION_REPOSITORY": "false",
            "RAGFAULT_LAKE_MAINTENANCE_SECONDS": "0",
        }
        proc = subprocess.Popen(
            ragfault_bin() + ["serve", "--store", "ducklake", "--catalog", catalog, "--data-path", str(data),
                              "--http-port", str(port), "--grpc-port", str(grpc), "--config", str(cfg)],
            stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=work, env=env,
        )  # fmt: skip
        try:
            wait_http(f"http://127.0.0.1:{port}/healthz", proc, 120, log)
            for kind in ("kb", "gold"):
                done = subprocess.run(
                    ragfault_bin() + ["load", kind, str(refs / f"{kind}.jsonl"), "--server", f"http://127.0.0.1:{port}"],
                    capture_output=True, text=True, cwd=work,
                )  # fmt: skip
                if done.returncode != 0:
                    raise SystemExit(f"ragfault load {kind} failed: {done.stdout}{done.stderr}")
            references = tree_bytes(data) + catalog_size()
            t0 = time.perf_counter()
            post_all(port, bodies)
            wait_evaluated(port, proc, n_traces, log)
            seconds = time.perf_counter() - t0
        finally:
            stop_process(proc)
        catalog_bytes = catalog_size()
    data_bytes = tree_bytes(data)
    import duckdb

    # compressed bytes of each column chunk of each table's Parquet files (data path/<schema>/<table>/)
    tables: dict[str, dict[str, int]] = {}
    rows: dict[str, int] = {}  # rows of each table's files (a deletion file's rows counted too)
    con = duckdb.connect(":memory:")
    try:
        files = [str(p) for p in sorted(data.rglob("*.parquet"))]
        if files:
            for file_name, n in con.execute(
                "SELECT file_name, num_rows FROM parquet_file_metadata(?)", [files]
            ).fetchall():
                table = Path(file_name).parent.name
                rows[table] = rows.get(table, 0) + int(n)
            for file_name, column, size in con.execute(
                "SELECT file_name, path_in_schema, sum(total_compressed_size) FROM parquet_metadata(?) "
                "GROUP BY ALL",
                [files],
            ).fetchall():
                table = Path(file_name).parent.name
                per = tables.setdefault(table, {})
                per[str(column)] = per.get(str(column), 0) + int(size)
    finally:
        con.close()
    return {
        "data_bytes": data_bytes,
        "tables": {
            t: {
                "rows": rows.get(t, 0),
                "bytes_per_trace": round(sum(c.values()) / n_traces),
                "columns_bytes_per_trace": {
                    k: round(v / n_traces)
                    for k, v in sorted(c.items(), key=lambda kv: -kv[1])
                    if v >= n_traces
                },
            }
            for t, c in sorted(tables.items())
        },
        "catalog_bytes": catalog_bytes,
        "bytes_per_trace": (data_bytes + catalog_bytes) / n_traces,
        "data_bytes_per_trace": data_bytes / n_traces,
        "bytes_before_traces": references,
        "bytes_per_trace_after_references": (data_bytes + catalog_bytes - references) / n_traces,
        "files": len(files),
        "seconds_to_evaluated": seconds,
        "note": "stored, settled and evaluated; no lake maintenance (no compaction of the Parquet files)",
    }


def phoenix(bodies: list[bytes], per_request: int, n_traces: int, work: Path, venv: Path) -> dict[str, Any]:
    exe = ensure_phoenix(venv)
    port, grpc = free_ports(2)
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(grpc), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_TELEMETRY_ENABLED": "false"}  # fmt: skip
    log = work / "phoenix.log"
    proc = subprocess.Popen(
        [str(exe), "serve"], stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, cwd=work
    )
    db = work / "phoenix.db"
    spans = 4 * n_traces
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc, 300, log)
        empty = file_sizes(db)
        post_all(port, bodies[: max(1, n_traces // per_request)])
        deadline = time.monotonic() + 3600
        while True:
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            try:
                n = int(con.execute("SELECT count(*) FROM spans").fetchone()[0])
            finally:
                con.close()
            if n >= spans or time.monotonic() > deadline:
                break
            time.sleep(1)
    finally:
        stop_process(proc)
    total = file_sizes(db)
    return {
        "traces": n_traces,
        "bytes": total,
        "bytes_empty": empty,
        "bytes_per_trace": (total - empty) / n_traces,
    }


def measure(shape: str, args: argparse.Namespace) -> dict[str, Any]:
    """Every system asked for, on ``args.traces`` traces of ``shape``."""
    out: dict[str, Any] = {
        "shape": shape, "traces": args.traces, "load_average_at_start": os.getloadavg()[0],
    }  # fmt: skip
    keep = args.keep / shape if args.keep is not None and args.shape == "both" else args.keep
    with tempfile.TemporaryDirectory(prefix="ragfault-storage-") as d:
        work = Path(d)
        bodies, span_bytes = build_shape(
            shape, args.traces, args.traces_per_request, args.kb_docs, args.seed, work
        )
        raw = sum(len(b) for b in bodies)
        gz = sum(len(gzip.compress(b, 6)) for b in bodies)
        out["otlp_bytes_per_trace"] = raw / args.traces
        out["otlp_gzip_bytes_per_trace"] = gz / args.traces
        out["otlp_span_bytes_per_trace"] = {name: round(b) for name, b in span_bytes.items()}
        print(f"shape {shape}: {args.traces:,} traces, raw OTLP {out['otlp_bytes_per_trace']:,.0f} B a trace "
              f"(gzip -6 {out['otlp_gzip_bytes_per_trace']:,.0f} B); a span: "
              + ", ".join(f"{name} {b:,.0f} B" for name, b in span_bytes.items()), flush=True)  # fmt: skip
        (work / "file").mkdir()
        for name in ("kb.jsonl", "gold.jsonl"):
            (work / "file" / name).write_bytes((work / name).read_bytes())
        if not args.skip_file:
            out["file"] = ragfault_file(bodies, args.traces, work / "file", keep)
            out["file"]["ratio_to_otlp"] = out["file"]["bytes_per_trace"] / out["otlp_bytes_per_trace"]
            print(f"file: {out['file']['bytes_per_trace']:,.0f} B a trace "
                  f"({out['file']['ratio_to_otlp']:.2f} x raw OTLP {out['otlp_bytes_per_trace']:,.0f} B; "
                  f"{out['file']['bytes_per_trace_in_use']:,.0f} B without its {out['file']['free_blocks']} free blocks; "
                  f"{out['file']['evaluation_rows_per_trace']:.1f} verdict rows a trace)", flush=True)  # fmt: skip
        if args.lake:
            (work / "lake").mkdir()
            out["lake"] = ragfault_lake(bodies, args.traces, work / "lake", work)
            out["lake"]["ratio_to_otlp"] = out["lake"]["bytes_per_trace"] / out["otlp_bytes_per_trace"]
            print(f"lake: {out['lake']['bytes_per_trace']:,.0f} B a trace "
                  f"({out['lake']['ratio_to_otlp']:.2f} x raw OTLP)", flush=True)  # fmt: skip
        if args.phoenix_traces > 0:
            (work / "phoenix").mkdir()
            out["phoenix"] = phoenix(
                bodies, args.traces_per_request, args.phoenix_traces, work / "phoenix", args.phoenix_venv
            )
            out["phoenix"]["ratio_to_otlp"] = out["phoenix"]["bytes_per_trace"] / out["otlp_bytes_per_trace"]
            if "file" in out:
                out["file_to_phoenix"] = out["file"]["bytes_per_trace"] / out["phoenix"]["bytes_per_trace"]
            print(f"phoenix: {out['phoenix']['bytes_per_trace']:,.0f} B a trace "
                  f"({out['phoenix']['ratio_to_otlp']:.2f} x raw OTLP)", flush=True)  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", type=int, default=5000)
    ap.add_argument("--traces-per-request", type=int, default=50)
    ap.add_argument("--kb-docs", type=int, default=400)
    ap.add_argument(
        "--shape", choices=(*SHAPES, "both"), default="large", help="the traces' shape (see above)"
    )
    ap.add_argument("--phoenix-traces", type=int, default=500, help="traces sent to Phoenix (0: skip)")
    ap.add_argument("--lake", action="store_true", help="also the lake (needs the lake set: .lake-venv)")
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument(
        "--phoenix-venv", type=Path, default=HERE / ".phoenix-venv", help="venv holding arize-phoenix"
    )
    ap.add_argument("--keep", type=Path, help="copy the single file's database into this directory")
    ap.add_argument("--skip-file", action="store_true", help="only the lake and Phoenix")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "storage.json")
    args = ap.parse_args()

    # the servers run from temporary directories: they find the project by PYTHONPATH (the lake's
    # environment has it on sys.path only from the project root)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(HERE.parent), os.environ.get("PYTHONPATH")) if p
    )
    shapes = SHAPES if args.shape == "both" else (args.shape,)
    runs = {shape: measure(shape, args) for shape in shapes}
    out: dict[str, Any] = (
        runs[args.shape] if args.shape != "both" else {"traces": args.traces, "shapes": runs}
    )
    print(json.dumps(out, indent=2))
    if len(runs) > 1:
        for shape, run in runs.items():
            print(f"{shape}: raw OTLP {run['otlp_bytes_per_trace']:,.0f} B a trace; " + "; ".join(
                f"{system} {run[system]['bytes_per_trace']:,.0f} B ({run[system]['ratio_to_otlp']:.2f} x)"
                for system in ("file", "lake", "phoenix") if system in run))  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
