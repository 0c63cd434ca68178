#!/usr/bin/env python
"""What a large resource costs on disk when every span row keeps a copy of it.

``spans`` stores each span's resource and scope attributes in its own row (``resource_attributes``),
so a request of many spans under one large resource writes the same JSON many times. Memory at ingest
is bounded whatever the copies (the build counts them before it makes them: ``collector/ingest/build.py``);
this bench measures what they cost on disk, where DuckDB compresses a column segment by segment
(dictionary and FSST compression of repeated strings), to decide whether a table of resources
(stored once a request, ``spans`` as a view) is worth its cost.

It writes the same spans twice through the store's own writer into fresh DuckDB files: once under a
small resource (``service.name`` only) and once under a resource of ``--resource-bytes`` of
attributes, ``--spans-per-request`` spans a request, and prints the file sizes, the bytes of the
``resource_attributes`` column (from the storage blocks of its segments) and the extra bytes a span
costs. Run from the project root:

    .venv/bin/python bench/resource_copies.py --spans 50000 --resource-bytes 10000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402

from collector.ingest.span_rows import flatten  # noqa: E402
from collector.store import Store  # noqa: E402
from collector.store.schema import batch_to_arrow  # noqa: E402


def build_request(n: int, resource_bytes: int, seed: int) -> ExportTraceServiceRequest:
    """``n`` spans (traces of 4) under one resource carrying about ``resource_bytes`` of attributes:
    values of 100 characters that differ between resources (as a host's environment would)."""
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    kv = rs.resource.attributes.add()
    kv.key, kv.value.string_value = "service.name", "shop"
    for i in range(resource_bytes // 120):
        kv = rs.resource.attributes.add()
        kv.key, kv.value.string_value = f"env.var{i:03d}", f"{seed:08d}-{i:04d}-" + os.urandom(43).hex()[:86]
    ss = rs.scope_spans.add()
    ss.scope.name = "bench"
    now = time.time_ns()
    tid = b""
    for i in range(n):
        if i % 4 == 0:
            tid = os.urandom(16)
        sp = ss.spans.add()
        sp.trace_id, sp.span_id, sp.name = tid, os.urandom(8), f"op{i % 4}"
        sp.start_time_unix_nano, sp.end_time_unix_nano = now + i, now + i + 1000
        a = sp.attributes.add()
        a.key, a.value.string_value = "input.value", f"question {i}"
    return req


def measure(path: Path, spans: int, per_request: int, resource_bytes: int) -> dict[str, float]:
    """Write the spans into a new file at ``path``; its size and the resource column's bytes."""
    store = Store(str(path))
    con = store.cursor()
    for r in range(spans // per_request):
        req = build_request(per_request, resource_bytes, seed=r)
        store.write_spans(
            con, batch_to_arrow(flatten(req, received_at=datetime.now(UTC).replace(tzinfo=None)))
        )
    con.execute("CHECKPOINT")
    block = con.execute("SELECT block_size FROM pragma_database_size()").fetchone()
    rows = con.execute(
        "SELECT count(DISTINCT (block_id, block_offset)) FROM pragma_storage_info('spans') "
        "WHERE column_name = 'resource_attributes' AND block_id >= 0"
    ).fetchone()
    store.close()
    assert block is not None and rows is not None
    return {"file": path.stat().st_size, "resource_column_blocks": int(rows[0]), "block_size": int(block[0])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spans", type=int, default=50_000)
    ap.add_argument("--spans-per-request", type=int, default=500)
    ap.add_argument("--resource-bytes", type=int, default=10_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small = measure(Path(tmp) / "small.duckdb", args.spans, args.spans_per_request, 0)
        large = measure(Path(tmp) / "large.duckdb", args.spans, args.spans_per_request, args.resource_bytes)
    copies = args.spans * args.resource_bytes
    extra = large["file"] - small["file"]
    print(f"{args.spans:,} spans, {args.spans_per_request} a request, resource of ~{args.resource_bytes:,} B")
    print(f"  small resource: file {small['file'] / 1e6:.1f} MB")
    print(f"  large resource: file {large['file'] / 1e6:.1f} MB")
    print(
        f"  resource copies as written: {copies / 1e6:.1f} MB; on disk the difference is {extra / 1e6:.1f} MB"
    )
    print(f"  extra bytes a span: {extra / args.spans:.0f}; once a request it would be "
          f"{args.resource_bytes / args.spans_per_request:.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
