"""The verdicts operations (``collector.store.verdicts``) on every backend: the traces a batch is
evaluated from, writing verdicts by generation, the cheap tier's queue and ``eval_log``."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pyarrow as pa

from collector.store import verdicts
from evaluators.service.running import EVAL_SCHEMA, LOG_SCHEMA
from tests.store.contract.stored import T0, add_trace, needs_tables, rows, scalar

TABLES = ("traces", "steps", "step_documents", "evaluations", "evaluation_history", "eval_log")


def _batch(
    trace_ids: list[str], gen: int, value: float, now: datetime, tier: str = "cheap"
) -> dict[str, pa.Table]:
    evals: dict[str, list[Any]] = {f.name: [] for f in EVAL_SCHEMA}
    for t in trace_ids:
        row = dict(
            trace_id=t, span_id=None, case_id=None, run_id=None, evaluator="answer_support",
            evaluator_version="1", tier=tier, metric="answer_support", value=value, numerator=value,
            denominator=1.0, status="ok", reason=None, passed=value > 0.5, label=None, details=None,
            generation=gen, evaluated_at=now,
        )  # fmt: skip
        for k, v in row.items():
            evals[k].append(v)
    log = {
        "trace_id": trace_ids, "tier": [tier] * len(trace_ids), "evaluator": [None] * len(trace_ids),
        "decision": ["evaluated"] * len(trace_ids), "reason": [None] * len(trace_ids),
        "generation": [gen] * len(trace_ids), "logged_at": [now] * len(trace_ids),
    }  # fmt: skip
    return {
        "evals": pa.table([pa.array(evals[f.name], f.type) for f in EVAL_SCHEMA], schema=EVAL_SCHEMA),
        "log": pa.table([pa.array(log[f.name], f.type) for f in LOG_SCHEMA], schema=LOG_SCHEMA),
        "ran": pa.table({"trace_id": trace_ids, "evaluator": ["answer_support"] * len(trace_ids)}),
        "done": pa.table({"trace_id": pa.array(trace_ids, pa.string())}),
    }


def test_fetch_returns_the_rows_of_the_traces_asked_for_and_their_received_range(backend: Any) -> None:
    needs_tables(backend, "verdicts.fetch_traces", *TABLES)
    add_trace(backend, "a" * 32, documents=[("d1", "text one"), ("d2", None)])
    add_trace(backend, "b" * 32, at=T0 + timedelta(minutes=1))
    con = backend.cursor()
    tables, window = verdicts.fetch_traces(con, ["a" * 32, "c" * 32])  # c: not stored
    assert tables.traces.column("trace_id").to_pylist() == ["a" * 32]
    assert tables.traces.column("generation").to_pylist() == [0]
    assert tables.steps.column("step_type").to_pylist() == ["retrieval"]
    assert sorted(tables.docs.column("doc_id").to_pylist()) == ["d1", "d2"]
    assert window == (T0, T0)
    # a range that misses a trace still finds it (the rest of the table is read)
    tables, _ = verdicts.fetch_traces(con, ["b" * 32], (T0, T0))
    assert tables.traces.column("trace_id").to_pylist() == ["b" * 32]
    con.close()


def test_a_second_write_moves_the_first_verdicts_to_history_and_raises_the_generation(backend: Any) -> None:
    needs_tables(backend, "verdicts.write_verdicts", *TABLES)
    t = "a" * 32
    add_trace(backend, t)
    first = T0 + timedelta(hours=1)
    b = _batch([t], 1, 0.2, first)
    verdicts.write_verdicts(backend.con, b["evals"], b["log"], b["ran"], b["done"], first)
    assert rows(backend, "SELECT eval_generation, verdicts_since, evaluated_spans FROM traces") == [
        (1, first, 3)
    ]
    second = first + timedelta(minutes=5)
    b = _batch([t], 2, 0.9, second)
    verdicts.write_verdicts(backend.con, b["evals"], b["log"], b["ran"], b["done"], second, (T0, T0))
    assert rows(backend, "SELECT generation, value FROM evaluations") == [(2, 0.9)]
    assert rows(backend, "SELECT generation, value FROM evaluation_history") == [(1, 0.2)]
    assert rows(backend, "SELECT generation, decision FROM eval_log ORDER BY generation") == [
        (1, "evaluated"),
        (2, "evaluated"),
    ]
    assert rows(backend, "SELECT eval_generation, verdicts_since FROM traces") == [(2, first)]


def test_the_queue_holds_settled_traces_until_their_span_count_is_evaluated(backend: Any) -> None:
    needs_tables(backend, "verdicts.pending", *TABLES)
    add_trace(backend, "a" * 32)
    add_trace(backend, "b" * 32, at=T0 + timedelta(minutes=1))
    add_trace(backend, "c" * 32, settled=False)
    con = backend.cursor()
    assert [r[0] for r in verdicts.pending(con, 10)] == ["a" * 32, "b" * 32]  # settle order
    assert verdicts.pending(con, 1) == [("a" * 32, 3, T0)]
    n, oldest = verdicts.backlog(con)
    assert n == 2 and oldest == T0 + timedelta(seconds=5)
    buf = pa.table({f.name: pa.array([], f.type) for f in LOG_SCHEMA}, schema=LOG_SCHEMA)
    verdicts.write_log(backend.con, buf, {"a" * 32: 3})
    assert [r[0] for r in verdicts.pending(con, 10)] == ["b" * 32]
    # re-queued: settled traces only
    assert verdicts.requeue(backend.con, ["a" * 32, "c" * 32]) == ["a" * 32]
    assert verdicts.backlog(con)[0] == 2
    con.close()


def test_a_judge_write_leaves_the_cheap_tiers_queue_as_it_is(backend: Any) -> None:
    """The judge tier writes its verdicts while the cheap tier may not have seen the trace's latest
    assembly (a span came and it settled again meanwhile): the trace stays in the cheap tier's queue."""
    needs_tables(backend, "verdicts.write_verdicts", *TABLES)
    t = "a" * 32
    add_trace(backend, t)
    con = backend.cursor()
    assert [r[0] for r in verdicts.pending(con, 10)] == [t]
    judged = T0 + timedelta(hours=1)
    b = _batch([t], 1, 0.7, judged, tier="judge")
    verdicts.write_verdicts(backend.con, b["evals"], b["log"], b["ran"], b["done"], judged)
    assert rows(backend, "SELECT tier, value FROM evaluations") == [("judge", 0.7)]
    assert [r[0] for r in verdicts.pending(con, 10)] == [t]  # the cheap tier has not evaluated it
    cheap = judged + timedelta(minutes=1)
    b = _batch([t], 2, 0.4, cheap)
    verdicts.write_verdicts(backend.con, b["evals"], b["log"], b["ran"], b["done"], cheap, (T0, T0))
    assert verdicts.pending(con, 10) == []
    con.close()


def test_settled_traces_are_selected_by_run_and_start_time(backend: Any) -> None:
    needs_tables(backend, "verdicts.settled_received", *TABLES)
    add_trace(backend, "a" * 32, run_id="exp")
    add_trace(backend, "b" * 32, run_id="exp", at=T0 + timedelta(days=1))
    add_trace(backend, "c" * 32, run_id="other")
    add_trace(backend, "d" * 32, run_id="exp", settled=False)
    con = backend.cursor()
    assert list(verdicts.settled_received(con, "exp", None, None, 10)) == ["a" * 32, "b" * 32]
    assert verdicts.settled_received(con, "exp", T0 + timedelta(hours=1), None, 10) == {
        "b" * 32: T0 + timedelta(days=1)
    }
    assert len(verdicts.settled_received(con, None, None, None, 2)) == 2
    con.close()
    assert scalar(backend, "SELECT count(*) FROM traces") == 4
