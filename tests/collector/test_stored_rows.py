"""What a write stores is what the flattened request holds, whichever way the store gets it there.

The store hands DuckDB Arrow tables (times converted in Python, a span's attributes JSON as bytes,
each request's traces summed up before the commit). A reference written here without any of that
stores the same ``SpanBatch`` rows with plain parameterized inserts (every JSON value cast and
validated by DuckDB, nanoseconds rounded by SQL) and sums the ``traces`` rows up in SQL from the
stored spans. Every column of ``spans``, ``steps``, ``step_documents`` and ``traces`` must agree,
for one request a commit, several requests in one commit (a trace split between them), a request
sent again and a late span of a stored trace. (Where spans of a trace disagree, two roots in one
request, the least value is kept.)"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from collector.ingest.batch import DOC_COLUMNS, SPAN_COLUMNS, STEP_COLUMNS, ArrowBatch, SpanBatch
from collector.ingest.span_rows import flatten
from collector.store import Store
from collector.store.schema import batch_to_arrow
from tests.collector.otlp_build import kv, new_span_id, new_trace_id, request, span

T0 = datetime(2026, 3, 1, 12, 0, 0)
NS0 = 1_780_000_000_000_000_000


def timed(s: Span, start: int, end: int) -> Span:
    s.start_time_unix_nano, s.end_time_unix_nano = start, end
    return s


def odd_trace(n: int) -> list[Span]:
    """A RAG-shaped trace with odd but valid values: NaN and infinite numbers, non-ASCII text,
    nested and byte values, metadata JSON with spaces, events (one of them feedback), a link, times
    that round either way or are not set, an error status."""
    tid, root = new_trace_id(), new_span_id()
    docs: dict[str, Any] = {}
    for i in range(4):
        base = f"retrieval.documents.{i}.document."
        docs[base + "id"] = f"chunk-{n}-{i}"
        docs[base + "content"] = f"退款须在 {i + 10} 天内申请 — refunds within {i + 10} days"
        docs[base + "score"] = [0.9, float("nan"), 0.5, 1e300][i]
        docs[base + "metadata"] = ' { "doc_id" : "kb-' + str(i) + '" , "n": [1, 2.50] }'
    first = timed(
        span(tid, span_id=root, name="rag.query", attrs={
            "openinference.span.kind": "CHAIN", "input.value": "退款多久？", "output.value": "十天",
            "ragfault.case_id": f"case-{n}", "ragfault.user_scope": "support,sales",
            "score": float("inf"), "low": -math.inf, "flag": True, "count": 2**62,
        }),
        NS0 + n * 1000 + 499, NS0 + n * 1000 + 10_500,
    )  # fmt: skip
    retrieve = timed(
        span(tid, parent=root, name="retrieve", attrs={
            "openinference.span.kind": "RETRIEVER", "input.value": '{"query": "退款"}', **docs,
        }),
        NS0 + n * 1000 + 1_500, 0,
    )  # fmt: skip
    llm = span(tid, parent=root, name="llm", attrs={
        "openinference.span.kind": "LLM", "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Context: refunds\n\nQuestion: 退款?",
        "llm.token_count.prompt": 12, "tags": ["a", "b"], "raw": b"\x00\xff",
    })  # fmt: skip
    llm.attributes.append(kv("nested", {"k": [1, {"z": None}], "nan": float("nan")}))
    ev = llm.events.add(name="gen_ai.evaluation.result", time_unix_nano=NS0 + 7)
    ev.attributes.extend([kv("gen_ai.evaluation.score.value", 0.25)])
    llm.events.add(name="exception", time_unix_nano=NS0 + 8).attributes.extend([kv("message", "ü")])
    link = llm.links.add(trace_id=new_trace_id(), span_id=new_span_id(), trace_state="k=v")
    link.attributes.extend([kv("why", "retry")])
    llm.status.code = Status.STATUS_CODE_ERROR
    llm.status.message = "timeout ⏱"
    return [first, retrieve, llm]


def flat(spans: list[Span], at: datetime, service: str = "svc") -> SpanBatch:
    req = request(spans, service=service)
    req.resource_spans[0].resource.attributes.extend([kv("host", "h-1"), kv("nan", float("nan"))])
    req.resource_spans[0].scope_spans[0].scope.attributes.extend([kv("scope.attr", "ß")])
    return flatten(req, received_at=at)


def _placeholders(n: int) -> str:
    return ", ".join("?" for _ in range(n))


def reference_write(con: duckdb.DuckDBPyConnection, batch: SpanBatch) -> None:
    """``batch``'s new spans, steps and documents by parameterized inserts (nanoseconds staged as
    integers and rounded to microseconds in SQL); a span already stored is left out."""
    stored = {tuple(r) for r in con.execute("SELECT trace_id, span_id FROM spans").fetchall()}
    ns_columns = ("start_time", "end_time")

    def insert(table: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        staged = [f"{c} UBIGINT" if c in ns_columns else f"{c} {_type(con, table, c)}" for c in columns]
        con.execute(f"CREATE OR REPLACE TEMP TABLE staged ({', '.join(staged)})")
        con.executemany(f"INSERT INTO staged VALUES ({_placeholders(len(columns))})", rows)
        select = [
            f"CASE WHEN {c} = 0 THEN NULL ELSE make_timestamp((({c} + 500) // 1000)::BIGINT) END"
            if c in ns_columns
            else c
            for c in columns
        ]
        con.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(select)} FROM staged")

    keep = [
        tuple(v.decode() if isinstance(v, bytes) else v for v in r)  # the attributes' UTF-8 JSON as text
        for r in batch.spans
        if (r[0], r[1]) not in stored
    ]
    new = {(r[0], r[1]) for r in keep}
    insert("spans", SPAN_COLUMNS, keep)
    insert("steps", STEP_COLUMNS, [r for r in batch.steps if (r[0], r[1]) in new])
    insert("step_documents", DOC_COLUMNS, [r for r in batch.docs if (r[0], r[1]) in new])


def _type(con: duckdb.DuckDBPyConnection, table: str, column: str) -> str:
    row = con.execute(
        "SELECT data_type FROM information_schema.columns WHERE table_name = ? AND column_name = ?",
        [table, column],
    ).fetchall()
    return str(row[0][0]).replace("JSON", "VARCHAR")  # staged as text: the insert casts (validates) it


REFERENCE_TRACES = """
SELECT trace_id, min(received_at), max(received_at), count(*), count(*) FILTER (WHERE status_code = 'ERROR'),
       bool_or(parent_span_id IS NULL), min(span_id) FILTER (WHERE parent_span_id IS NULL),
       min(name) FILTER (WHERE parent_span_id IS NULL), min(start_time), max(end_time),
       coalesce(min(service_name) FILTER (WHERE parent_span_id IS NULL), min(service_name)),
       min(case_id), min(run_id), min(session_id), min(user_id)
FROM spans GROUP BY trace_id
"""

TRACE_COLUMNS = (
    "trace_id, first_received_at, last_received_at, span_count, error_count, has_root, root_span_id, "
    "root_name, start_time, end_time, service_name, case_id, run_id, session_id, user_id"
)


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[str]:
    """The rows as text, sorted (NaN is not equal to itself: its text is)."""
    return sorted(repr(r) for r in con.execute(sql).fetchall())


def test_stored_rows_are_the_flattened_rows_on_every_write_path(tmp_path: Path) -> None:
    traces = [odd_trace(n) for n in range(6)]
    late = timed(
        span(traces[0][0].trace_id, parent=traces[0][0].span_id, name="late"), NS0 - 5, NS0 + 999_999_500
    )
    tid = new_trace_id()  # two roots and two case ids in one request: the least of each is kept
    twins = [span(tid, name=n, attrs={"ragfault.case_id": f"case-{n}"}) for n in ("b", "a")]
    commits = [
        [flat(traces[0] + traces[1] + twins, T0)],  # one request
        # two requests in one commit, trace 3 split between them (its root in the first)
        [flat(traces[2] + traces[3][:1], T0 + timedelta(seconds=1)),
         flat(traces[3][1:] + traces[4], T0 + timedelta(seconds=2), service="other")],
        [flat(traces[1], T0 + timedelta(seconds=3))],  # sent again: nothing new
        [flat([late] + traces[5], T0 + timedelta(seconds=4))],  # a late span of a stored trace
    ]  # fmt: skip
    store = Store(tmp_path / "store.duckdb")
    ref = Store(tmp_path / "reference.duckdb")
    try:
        for commit in commits:
            store.write_spans(store.con, ArrowBatch.merge([batch_to_arrow(b) for b in commit]))
            for b in commit:
                reference_write(ref.con, b)
        for table in ("spans", "steps", "step_documents"):
            got, want = rows(store.con, f"SELECT * FROM {table}"), rows(ref.con, f"SELECT * FROM {table}")
            assert len(got) == len(want) > 0, table
            assert got == want, table
        # JSON text exactly as encoded (a cast back from JSON could hide a change in spacing)
        raw = "SELECT trace_id, span_id, attributes::VARCHAR, events::VARCHAR, links::VARCHAR FROM spans"
        assert rows(store.con, raw) == rows(ref.con, raw)
        got = rows(store.con, f"SELECT {TRACE_COLUMNS} FROM traces")
        assert got == rows(ref.con, REFERENCE_TRACES)
        assert len(got) == 7
    finally:
        store.close()
        ref.close()
