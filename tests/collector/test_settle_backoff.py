"""The settle loop yields to ingest: it skips rounds while spans keep arriving, never for longer
than max_wait_seconds in a row, and forced rounds are not affected."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from collector.settle import Settler, utcnow
from collector.store import Store


def _settler(tmp_path: Path, max_wait: float) -> tuple[Store, Settler]:
    store = Store(tmp_path / "s.duckdb")
    con = store.cursor()
    settler = Settler(store.cursor(), lambda fn: fn(con), settle_seconds=0.2, max_wait_seconds=max_wait)
    return store, settler


def _trace(store: Store, trace_id: str, received_ago: float) -> None:
    at = utcnow() - timedelta(seconds=received_ago)
    store.con.execute(
        "INSERT INTO traces (trace_id, first_received_at, last_received_at, span_count, error_count, "
        "has_root) VALUES ($t, $at, $at, 1, 0, true)",
        {"t": trace_id, "at": at},
    )


def test_backs_off_while_spans_arrive_then_settles(tmp_path: Path) -> None:
    store, settler = _settler(tmp_path, max_wait=300)
    try:
        assert not settler._back_off()  # nothing stored: not busy
        _trace(store, "a" * 32, received_ago=5)  # ready, received long ago
        assert not settler._back_off()
        _trace(store, "b" * 32, received_ago=0)  # ingest is busy now
        assert settler.ingest_busy()
        assert settler._back_off() and settler._back_off()
        assert settler.skipped_rounds == 2
        assert settler.run_once() == 1  # a round asked for directly still runs
        assert settler.run_once(force=True) == 1
    finally:
        store.close()


def test_never_backs_off_longer_than_max_wait(tmp_path: Path) -> None:
    store, settler = _settler(tmp_path, max_wait=60)
    try:
        _trace(store, "c" * 32, received_ago=0)
        assert settler._back_off()  # the first busy round starts a stretch of skipping
        assert settler._backoff_since is not None
        settler._backoff_since -= 61  # ... that has lasted max_wait_seconds
        assert not settler._back_off()  # so this round runs
        assert settler._back_off()  # and the next stretch starts
    finally:
        store.close()


def test_backoff_can_be_switched_off(tmp_path: Path) -> None:
    store, settler = _settler(tmp_path, max_wait=300)
    settler.busy_seconds = 0
    try:
        _trace(store, "d" * 32, received_ago=0)
        assert not settler._back_off()
    finally:
        store.close()
