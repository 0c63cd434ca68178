"""Rows a contract test puts in an empty store, written with plain SQL on the store's connection (what
ingest and settling would have written), and the rule for skipping an operation a backend lacks."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from evaluators.text import normalize

T0 = datetime(2026, 1, 5, 12, 0, 0)


def needs_tables(store: Any, operation: str, *tables: str) -> None:
    """Skip, naming the operation, when this backend has not got the tables it works on yet (a view
    of the same name, as the lake has for `traces`, is no table to write)."""
    con = store.cursor()
    try:
        have = {
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
            ).fetchall()
        }
    finally:
        con.close()
    missing = [t for t in tables if t not in have]
    if missing:
        pytest.skip(
            f"not on ducklake yet: {type(store).__name__} does not implement {operation} "
            f"(no {', '.join(missing)})"
        )


def add_trace(
    store: Any,
    trace_id: str,
    *,
    settled: bool = True,
    spans: int = 3,
    at: datetime = T0,
    case_id: str | None = None,
    run_id: str | None = None,
    query: str = "How long is the refund window?",
    documents: list[tuple[str, str | None]] = (),  # type: ignore[assignment]
) -> None:
    """A trace as settling leaves it: its row, a retrieval step and its candidate documents
    ``(doc_id, content)``."""
    con = store.con
    con.execute(
        "INSERT INTO traces (trace_id, first_received_at, last_received_at, span_count, error_count, has_root, "
        "root_span_id, root_name, start_time, end_time, service_name, case_id, run_id, query_text, query_norm, "
        "answer_text, settled_at, assembled_spans) VALUES ($t, $at, $last, $n, 0, true, 'r1', 'answer', $at, $last, "
        "'svc', $case, $run, $q, $qn, 'thirty days', $settled, $assembled)",
        {
            "t": trace_id, "at": at, "last": at + timedelta(seconds=1), "n": spans, "case": case_id,
            "run": run_id, "q": query, "qn": normalize(query), "settled": at + timedelta(seconds=5) if settled else None,
            "assembled": spans if settled else None,
        },
    )  # fmt: skip
    con.execute(
        "INSERT INTO steps (trace_id, span_id, parent_span_id, step_type, name, start_time, end_time, is_root, "
        "query_text, received_at) VALUES ($t, 's1', 'r1', 'retrieval', 'retrieve', $at, $at, false, $q, $at)",
        {"t": trace_id, "at": at, "q": query},
    )
    for i, (doc_id, content) in enumerate(documents):
        con.execute(
            "INSERT INTO step_documents (trace_id, span_id, stage, position, doc_id, chunk_id, content, score, "
            "source, received_at) VALUES ($t, 's1', 'candidate', $i, $d, $d, $c, 0.5, 'span', $at)",
            {"t": trace_id, "i": i, "d": doc_id, "c": content, "at": at},
        )


def scalar(store: Any, sql: str, **params: Any) -> Any:
    return store.con.execute(sql, params or None).fetchall()[0][0]


def rows(store: Any, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in store.con.execute(sql, params or None).fetchall()]
