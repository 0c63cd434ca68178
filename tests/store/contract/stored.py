"""Rows a contract test puts in an empty store, written with plain SQL on the store's connection (what
ingest and settling would have written) or, for verdicts, through the store's own write
(``write_results``), and the rule for skipping an operation a backend lacks."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pyarrow as pa
import pytest

from collector.store import verdicts
from evaluators.service.running import EVAL_SCHEMA, LOG_SCHEMA
from evaluators.text import normalize

T0 = datetime(2026, 1, 5, 12, 0, 0)


def is_lake(store: Any) -> bool:
    return type(store).__name__ == "LakeStore"


def needs_tables(store: Any, operation: str, *tables: str) -> None:
    """Skip, naming the operation, when this backend has not got the tables it works on yet. On a
    lake, a view the lake builds over its raw tables (``traces``, ``evaluations``: lake.schema)
    stands for the file's table."""
    con = store.cursor()
    try:
        kinds = "('BASE TABLE', 'VIEW')" if is_lake(store) else "('BASE TABLE')"
        have = {
            r[0]
            for r in con.execute(
                f"SELECT table_name FROM information_schema.tables WHERE table_type IN {kinds}"
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
    ``(doc_id, content)``. (On a lake: its spans, and its assembly in ``trace_settles``.)"""
    if is_lake(store):
        _add_lake_trace(store, trace_id, settled=settled, spans=spans, at=at, case_id=case_id,
                        run_id=run_id, query=query, documents=documents)  # fmt: skip
        return
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
    _add_retrieval(con, "steps", "step_documents", trace_id, at, query, documents)


def _add_retrieval(
    con: Any,
    steps: str,
    step_documents: str,
    trace_id: str,
    at: datetime,
    query: str,
    documents: list[tuple[str, str | None]],
) -> None:
    """The trace's retrieval step ``s1`` and its candidates, into the tables named (the file's, or
    the lake's raw tables behind its views)."""
    con.execute(
        f"INSERT INTO {steps} (trace_id, span_id, parent_span_id, step_type, name, start_time, end_time, "
        "is_root, query_text, output_text, received_at) "
        "VALUES ($t, 's1', 'r1', 'retrieval', 'retrieve', $at, $at, false, $q, $out, $at)",
        # a retrieval that returned nothing records it (an empty list), as the readers keep it
        {"t": trace_id, "at": at, "q": query, "out": None if documents else "[]"},
    )
    for i, (doc_id, content) in enumerate(documents):
        con.execute(
            f"INSERT INTO {step_documents} (trace_id, span_id, stage, position, doc_id, chunk_id, content, "
            "score, source, received_at) VALUES ($t, 's1', 'candidate', $i, $d, $d, $c, 0.5, 'span', $at)",
            {"t": trace_id, "i": i, "d": doc_id, "c": content, "at": at},
        )


def _add_lake_trace(
    store: Any,
    trace_id: str,
    *,
    settled: bool,
    spans: int,
    at: datetime,
    case_id: str | None,
    run_id: str | None,
    query: str,
    documents: list[tuple[str, str | None]],
) -> None:
    """``add_trace`` on a lake, whose ``traces`` is summed up from the spans: the root ``r1`` (the
    trace's service, case and run), then spans received a second later, and the assembly row."""
    con = store.con
    last = at + timedelta(seconds=1)
    for i in range(spans):
        root = i == 0
        con.execute(
            "INSERT INTO span_rows (trace_id, span_id, parent_span_id, name, start_time, end_time, "
            "status_code, service_name, case_id, run_id, received_at) "
            "VALUES ($t, $s, $p, $name, $at, $last, 'OK', 'svc', $case, $run, $rec)",
            {
                "t": trace_id, "s": "r1" if root else f"s{i}", "p": None if root else "r1",
                "name": "answer" if root else f"child{i}", "at": at, "last": last, "case": case_id,
                "run": run_id, "rec": at if root else last,
            },
        )  # fmt: skip
    _add_retrieval(con, "step_rows", "step_document_rows", trace_id, at, query, documents)
    if settled:
        con.execute(
            "INSERT INTO trace_settles (trace_id, settle_id, query_text, query_norm, answer_text, "
            "assembled_spans, settled_at) VALUES ($t, 'added', $q, $qn, 'thirty days', $n, $settled)",
            {
                "t": trace_id,
                "q": query,
                "qn": normalize(query),
                "n": spans,
                "settled": at + timedelta(seconds=5),
            },
        )


def evaluated(store: Any) -> None:
    """Every settled trace as the cheap tier leaves it: its evaluated count is its assembled one
    (on a lake, a ``trace_evals`` row of each)."""
    if is_lake(store):
        store.con.execute(
            "INSERT INTO trace_evals (trace_id, event, evaluated_spans) SELECT trace_id, 'loaded', "
            "assembled_spans FROM trace_state WHERE settled_at IS NOT NULL"
        )
    else:
        store.con.execute("UPDATE traces SET evaluated_spans = assembled_spans")


def scalar(store: Any, sql: str, **params: Any) -> Any:
    return store.con.execute(sql, params or None).fetchall()[0][0]


def rows(store: Any, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in store.con.execute(sql, params or None).fetchall()]


def write_results(
    backend: Any,
    trace_ids: list[str],
    results: dict[str, bool],
    gen: int,
    now: datetime,
    *,
    gold: bool = True,
) -> None:
    """One evaluator per metric in ``results`` ran on each trace (gold case ``c-<trace's first letter>``,
    none when not ``gold``; run ``r1``); its verdict passed or failed as given."""
    evals: dict[str, list[Any]] = {f.name: [] for f in EVAL_SCHEMA}
    ran: dict[str, list[str]] = {"trace_id": [], "evaluator": []}
    for t in trace_ids:
        for metric, passed in results.items():
            row = dict(
                trace_id=t, span_id=None, case_id=f"c-{t[0]}" if gold else None, run_id="r1", evaluator=metric,
                evaluator_version="1", tier="cheap", metric=metric, value=1.0 if passed else 0.0,
                numerator=1.0 if passed else 0.0, denominator=1.0, status="ok", reason=None, passed=passed,
                label=None, details=None if passed else f'{{"metric": "{metric}", "gen": {gen}}}',
                generation=gen, evaluated_at=now,
            )  # fmt: skip
            for k, v in row.items():
                evals[k].append(v)
            ran["trace_id"].append(t)
            ran["evaluator"].append(metric)
    n = len(trace_ids)
    log = {
        "trace_id": trace_ids, "tier": ["cheap"] * n, "evaluator": [None] * n, "decision": ["evaluated"] * n,
        "reason": [None] * n, "generation": [gen] * n, "logged_at": [now] * n,
    }  # fmt: skip
    verdicts.write_verdicts(
        backend.con,
        pa.table([pa.array(evals[f.name], f.type) for f in EVAL_SCHEMA], schema=EVAL_SCHEMA),
        pa.table([pa.array(log[f.name], f.type) for f in LOG_SCHEMA], schema=LOG_SCHEMA),
        pa.table(ran),
        pa.table({"trace_id": pa.array(trace_ids, pa.string())}),
        now,
    )


FLUSH_MODES = ("each write flushes", "each write flushes from kept rows", "no write flushes")
"""How a file store's facts are written in a test: every write flushes its changed traces' facts
(reading the source tables in each statement, as a flush of recent rows does, or from the rows kept
once for the flush, as one reaching further back does), or none does (the facts views compute the
changed traces when read). A lake keeps no facts."""


def set_flushing(monkeypatch: pytest.MonkeyPatch, mode: str) -> str:
    """Make every write flush, one way or the other, or none (``FLUSH_MODES``); returns ``mode``."""
    from collector.store.file import facts

    if mode.startswith("each write flushes"):
        monkeypatch.setattr(facts, "FLUSH_TRACES", 1)
        if mode.endswith("from kept rows"):
            flush = facts.flush
            monkeypatch.setattr(facts, "flush", lambda con, reach_back=True: flush(con, reach_back=True))
    else:
        monkeypatch.setattr(facts, "FLUSH_TRACES", 10**9)
        monkeypatch.setattr(facts, "FLUSH_AGE", timedelta(days=365_000))
    return mode
