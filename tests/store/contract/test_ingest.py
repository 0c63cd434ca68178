"""Ingest on every backend: a span is stored once, also when its request is sent again, or when a later
request repeats some of its spans; log records and metric points likewise."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from collector.ingest.batch import ArrowBatch
from tests.store.contract.build import logs_batch, points_batch, spans_batch
from tests.store.contract.conftest import requires

T0 = datetime(2026, 3, 2, 12, 0, 0)


def _count(store: Any, sql: str) -> int:
    return int(store.cursor().execute(sql).fetchall()[0][0])


def test_a_span_is_stored_once_whatever_is_sent_again(backend: Any) -> None:
    con = backend.cursor()
    first = spans_batch(b"\x01" * 16, T0, T0)
    assert backend.write_spans(con, first) == 3
    assert backend.write_spans(con, first) == 0  # the same request again (a retry after a lost answer)
    again = spans_batch(b"\x02" * 16, T0, T0)
    both = ArrowBatch.merge([again, first])  # a new trace and the first one's spans once more
    assert backend.write_spans(con, both) == 3
    assert _count(backend, "SELECT count(*) FROM spans") == 6
    assert _count(backend, "SELECT count(DISTINCT (trace_id, span_id)) FROM spans") == 6
    assert _count(backend, "SELECT count(*) FROM steps") == 6
    rows = (
        backend.cursor()
        .execute("SELECT trace_id, span_count, has_root FROM traces ORDER BY trace_id")
        .fetchall()
    )
    assert [(r[1], r[2]) for r in rows] == [(3, True), (3, True)]
    assert [r[0] for r in rows] == ["01" * 16, "02" * 16]


def test_a_span_repeated_inside_one_batch_is_stored_once(backend: Any) -> None:
    con = backend.cursor()
    batch = spans_batch(b"\x03" * 16, T0, T0)
    assert backend.write_spans(con, ArrowBatch.merge([batch, batch])) == 3
    assert _count(backend, "SELECT count(*) FROM spans") == 3
    assert _count(backend, "SELECT sum(span_count) FROM traces") == 3


def test_log_records_and_metric_points_are_stored_once(backend: Any) -> None:
    requires(backend, "write_signals")
    con = backend.cursor()
    batch = ArrowBatch.merge([logs_batch(T0, T0), points_batch(T0, T0)])
    assert backend.write_signals(con, batch) == (1, 1)
    assert backend.write_signals(con, batch) == (0, 0)
    assert _count(backend, "SELECT count(*) FROM log_records") == 1
    assert _count(backend, "SELECT count(*) FROM metric_points") == 1
