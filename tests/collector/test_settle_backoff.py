"""The settle loop yields to ingest: it skips rounds while spans wait for the writer, never for
longer than max_backoff_seconds in a row, and forced rounds are not affected."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from collector.metrics import Metrics
from collector.settling.settle import Settler
from collector.store import Store

NOW = datetime(
    2026, 6, 1, 12, 0
)  # the settler's wall clock: what is complete does not move with the test's pace


class Pressure:
    def __init__(self) -> None:
        self.on = False

    def __call__(self) -> bool:
        return self.on


def _settler(
    tmp_path: Path, max_backoff: float, pressure: Pressure | None, metrics: Metrics | None = None
) -> tuple[Store, Settler]:
    store = Store(tmp_path / "s.duckdb")
    con = store.cursor()
    settler = Settler(
        store.cursor(), lambda fn: fn(con), settle_seconds=0.2, max_wait_seconds=300,
        pressure=pressure, max_backoff_seconds=max_backoff, metrics=metrics, wall_clock=lambda: NOW,
    )  # fmt: skip
    return store, settler


def _trace(store: Store, trace_id: str, received_ago: float, root: bool = True) -> None:
    at = NOW - timedelta(seconds=received_ago)
    store.con.execute(
        "INSERT INTO traces (trace_id, first_received_at, last_received_at, span_count, error_count, "
        "has_root) VALUES ($t, $at, $at, 1, 0, $root)",
        {"t": trace_id, "at": at, "root": root},
    )


def test_steady_traffic_is_no_pressure_a_queue_is(tmp_path: Path) -> None:
    pressure = Pressure()
    store, settler = _settler(tmp_path, max_backoff=30, pressure=pressure)
    try:
        _trace(store, "a" * 32, received_ago=5)
        _trace(store, "b" * 32, received_ago=0)  # spans keep arriving, but nothing waits for the writer
        assert not settler._back_off()
        pressure.on = True  # a burst: spans queue up for the writer
        assert settler.ingest_busy()
        assert settler._back_off() and settler._back_off()
        assert settler.skipped_rounds == 2
        assert settler.run_once() == 1  # a round asked for directly still runs
        assert settler.run_once(force=True) == 1
        pressure.on = False
        assert not settler._back_off() and settler._backoff_since is None
    finally:
        store.close()


def test_never_backs_off_longer_than_max_backoff(tmp_path: Path) -> None:
    pressure = Pressure()
    pressure.on = True
    store, settler = _settler(tmp_path, max_backoff=30, pressure=pressure)
    try:
        assert settler._back_off()  # the first round under pressure starts a stretch of skipping
        assert settler._backoff_since is not None
        settler._backoff_since -= 31  # ... that has lasted max_backoff_seconds
        assert not settler._back_off()  # so this round runs
        assert settler._back_off()  # and the next stretch starts
    finally:
        store.close()


def test_without_a_pressure_signal_it_never_backs_off(tmp_path: Path) -> None:
    store, settler = _settler(tmp_path, max_backoff=30, pressure=None)
    try:
        _trace(store, "d" * 32, received_ago=0)
        assert not settler._back_off()
    finally:
        store.close()


def test_traces_held_back_show_on_the_settle_gauges(tmp_path: Path) -> None:
    """What the backoff holds back is visible: ragfault_evaluation_lag_seconds counts settled traces
    only, so complete traces waiting to be assembled have gauges of their own."""
    pressure = Pressure()
    pressure.on = True
    metrics = Metrics()
    store, settler = _settler(tmp_path, max_backoff=30, pressure=pressure, metrics=metrics)
    try:
        _trace(store, "a" * 32, received_ago=5)  # complete since 4.8 s
        _trace(store, "b" * 32, received_ago=0)  # not complete yet
        _trace(
            store, "c" * 32, received_ago=320, root=False
        )  # no root: complete once max_wait passed, 20 s ago
        _trace(store, "d" * 32, received_ago=10, root=False)  # no root, within max_wait: not complete
        assert settler._back_off()
        settler.observe()
        assert metrics.get("ragfault_traces_waiting_settle") == 2
        lag = metrics.get("ragfault_settle_lag_seconds")
        assert 20 <= lag < 60, lag  # the rootless trace's, counted from max_wait, not from its last span
        assert settler.run_once() == 2
        settler.observe()
        assert metrics.get("ragfault_traces_waiting_settle") == 0
        assert metrics.get("ragfault_settle_lag_seconds") == 0.0
    finally:
        store.close()
