"""Retention on every backend: the traces past a service's age go from every per-trace table at once,
newer ones stay whole, and human labels are kept."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from collector.store import retention
from tests.store.contract.build import spans_batch
from tests.store.contract.conftest import requires

NOW = datetime(2026, 3, 2, 12, 0, 0)
OLD, NEW = "0b" * 16, "0c" * 16
TABLES = ("spans", "steps", "step_documents", "traces")


def _rows(store: Any, trace_id: str) -> dict[str, int]:
    con = store.cursor()
    return {
        t: con.execute(f"SELECT count(*) FROM {t} WHERE trace_id = ?", [trace_id]).fetchall()[0][0]
        for t in TABLES
    }


def test_old_traces_go_from_every_table_and_new_ones_stay(backend: Any) -> None:
    requires(backend, "retention")
    con = backend.cursor()
    backend.write_spans(
        con, spans_batch(bytes.fromhex(OLD), NOW - timedelta(days=40), NOW - timedelta(days=40))
    )
    backend.write_spans(
        con, spans_batch(bytes.fromhex(NEW), NOW - timedelta(days=1), NOW - timedelta(days=1))
    )
    con.execute(
        "INSERT INTO human_labels (trace_id, metric, label, annotator, anchor, labeled_at) "
        "VALUES (?, 'judge_answer_support', 'fail', 'ann', false, ?)",
        [OLD, NOW],
    )
    assert retention.trace_services(con) == ["shop"]
    cutoff = NOW - timedelta(days=30)
    assert retention.expired_traces(con, "shop", cutoff=cutoff, max_traces=None, max_spans=None) == [OLD]
    assert retention.expired_traces(con, "other", cutoff=cutoff, max_traces=None, max_spans=None) == []
    kept = _rows(backend, NEW)
    counts = retention.delete_traces(con, [OLD])
    assert counts["traces"] == 1 and counts["spans"] == 3 and counts["steps"] == 3
    assert _rows(backend, OLD) == dict.fromkeys(TABLES, 0)
    assert _rows(backend, NEW) == kept and kept["spans"] == 3
    assert con.execute("SELECT count(*) FROM human_labels WHERE trace_id = ?", [OLD]).fetchall() == [(1,)]
    assert retention.delete_traces(con, []) == {}


def test_a_size_limit_keeps_the_newest_settled_traces(backend: Any) -> None:
    requires(backend, "retention")
    con = backend.cursor()
    backend.write_spans(con, spans_batch(bytes.fromhex(OLD), NOW - timedelta(days=2), NOW))
    backend.write_spans(con, spans_batch(bytes.fromhex(NEW), NOW - timedelta(days=1), NOW))
    # neither is settled yet: a size limit never deletes a trace still waiting for its settle time
    assert retention.expired_traces(con, "shop", cutoff=None, max_traces=1, max_spans=None) == []
    con.execute("UPDATE traces SET settled_at = ?", [NOW])
    assert retention.expired_traces(con, "shop", cutoff=None, max_traces=1, max_spans=None) == [OLD]
    assert retention.expired_traces(con, "shop", cutoff=None, max_traces=None, max_spans=5) == [OLD]
    assert retention.expired_traces(con, "shop", cutoff=None, max_traces=None, max_spans=6) == []
