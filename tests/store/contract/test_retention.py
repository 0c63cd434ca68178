"""Retention on every backend: the traces past a service's age go from every per-trace table at once,
newer ones stay whole, and human labels are kept; metric points and log records of no stored trace
go by their own age. Age and order are when the data was received, whatever time its client gave."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa

from collector.api.export import read_export
from collector.ingest.batch import ArrowBatch
from collector.maintenance.retention import RetentionSettings, ServiceRetention, apply_retention
from collector.store import retention
from tests.store.contract.build import logs_batch, points_batch, spans_batch
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
    # OLD was received first, though its client dated it after NEW (a wrong or forged clock): the
    # limit keeps the traces received last
    backend.write_spans(
        con, spans_batch(bytes.fromhex(OLD), NOW + timedelta(days=300), NOW - timedelta(days=2))
    )
    backend.write_spans(
        con, spans_batch(bytes.fromhex(NEW), NOW - timedelta(days=1), NOW - timedelta(days=1))
    )
    # neither is settled yet: a size limit never deletes a trace still waiting for its settle time
    assert retention.expired_traces(con, "shop", cutoff=None, max_traces=1, max_spans=None) == []
    if type(backend).__name__ == "LakeStore":  # (traces is a view there: its settle state is appended)
        con.execute(
            "INSERT INTO trace_settles (trace_id, settle_id, settled_at) SELECT trace_id, 's', ? FROM trace_spans",
            [NOW],
        )
    else:
        con.execute("UPDATE traces SET settled_at = ?", [NOW])
    assert retention.expired_traces(con, "shop", cutoff=None, max_traces=1, max_spans=None) == [OLD]
    assert retention.expired_traces(con, "shop", cutoff=None, max_traces=None, max_spans=5) == [OLD]
    assert retention.expired_traces(con, "shop", cutoff=None, max_traces=None, max_spans=6) == []


def test_metric_points_and_traceless_log_records_go_by_their_own_age(backend: Any, tmp_path: Path) -> None:
    requires(backend, "write_signals")
    requires(backend, "retention")
    con = backend.cursor()
    old, new = NOW - timedelta(days=40), NOW - timedelta(days=1)
    # a trace of 40 days ago with a log record of its own, kept while the trace is (max_traces only)
    backend.write_spans(con, spans_batch(bytes.fromhex(OLD), old, old))
    traced = logs_batch(old, old, body="of the trace")
    assert traced.logs is not None
    traced.logs = traced.logs.set_column(
        traced.logs.schema.get_field_index("trace_id"), "trace_id", pa.array([OLD], pa.string())
    )
    backend.write_signals(con, ArrowBatch.merge([
        points_batch(old, old, value=1.0), points_batch(new, new, value=2.0),
        points_batch(old, old, value=3.0, service="other"),
        logs_batch(old, old, body="old"), logs_batch(new, new, body="new"), traced,
    ]))  # fmt: skip
    settings = RetentionSettings(
        max_age_days=30, services={"other": ServiceRetention(max_age_days=60)}, export_before_delete=True,
        export_dir=str(tmp_path / "archive"),
    )  # fmt: skip
    # traces first: the old one goes (by start time), its own log record with it
    counts = apply_retention(con, lambda job: job(con), settings, now=NOW)
    assert counts["traces"] == 1 and counts["metric_points"] == 1
    assert counts["log_records"] == 2  # its trace's record, and the traceless old one
    points = con.execute("SELECT service_name, value FROM metric_points ORDER BY value").fetchall()
    assert points == [("shop", 2.0), ("other", 3.0)]  # the new one, and the other service's (60 days)
    assert con.execute("SELECT body_text FROM log_records").fetchall() == [("new",)]
    archived = read_export(tmp_path / "archive", "metric_points")
    assert archived.column("value").to_pylist() == [1.0]
    assert archived.column("day").to_pylist() == [old.strftime("%Y-%m-%d")]
    # the trace's record went out with its trace, the traceless one by its own age
    logs = read_export(tmp_path / "archive", "log_records").column("body_text").to_pylist()
    assert sorted(logs) == ["of the trace", "old"]
    # nothing older is left: a second round deletes nothing
    assert apply_retention(con, lambda job: job(con), settings, now=NOW) == {}


def test_signals_kept_without_an_age_limit(backend: Any) -> None:
    requires(backend, "write_signals")
    requires(backend, "retention")
    con = backend.cursor()
    old = NOW - timedelta(days=400)
    backend.write_signals(con, ArrowBatch.merge([points_batch(old, old), logs_batch(old, old)]))
    assert apply_retention(con, lambda job: job(con), RetentionSettings(max_traces=10), now=NOW) == {}
    assert con.execute(
        "SELECT (SELECT count(*) FROM metric_points), (SELECT count(*) FROM log_records)"
    ).fetchall() == [(1, 1)]


def test_age_is_when_received_not_what_the_client_says(backend: Any) -> None:
    requires(backend, "write_signals")
    requires(backend, "retention")
    con = backend.cursor()
    ahead, behind = datetime(2200, 1, 1), datetime(2000, 1, 1)
    received_long_ago, received_lately = NOW - timedelta(days=40), NOW - timedelta(days=1)
    # dated in 2200 but received 40 days ago; dated in 2000 but received yesterday
    backend.write_spans(con, spans_batch(bytes.fromhex(OLD), ahead, received_long_ago))
    backend.write_spans(con, spans_batch(bytes.fromhex(NEW), behind, received_lately))
    backend.write_signals(con, ArrowBatch.merge([
        points_batch(ahead, received_long_ago, value=1.0), points_batch(behind, received_lately, value=2.0),
        logs_batch(ahead, received_long_ago, body="ahead"), logs_batch(behind, received_lately, body="behind"),
    ]))  # fmt: skip
    cutoff = NOW - timedelta(days=30)
    assert retention.expired_traces(con, "shop", cutoff=cutoff, max_traces=None, max_spans=None) == [OLD]
    counts = apply_retention(con, lambda job: job(con), RetentionSettings(max_age_days=30), now=NOW)
    assert counts["traces"] == 1 and counts["metric_points"] == 1 and counts["log_records"] == 1
    assert _rows(backend, OLD) == dict.fromkeys(TABLES, 0)
    assert _rows(backend, NEW)["spans"] == 3
    assert con.execute("SELECT value FROM metric_points").fetchall() == [(2.0,)]
    assert con.execute("SELECT body_text FROM log_records").fetchall() == [("behind",)]
