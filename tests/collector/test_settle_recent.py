"""The settle loop looks at the traces whose last span arrived lately (within max_wait_seconds and
RECENT_MARGIN), and at the whole table every FULL_SWEEP_SECONDS, in its first round, in a round given
its own time, and until a round of the whole table finds less than a full batch."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from collector import settle
from collector.settle import Settler, utcnow
from collector.store import Store


def _trace(store: Store, trace_id: str, received_ago: timedelta) -> None:
    at = utcnow() - received_ago
    store.con.execute(
        "INSERT INTO traces (trace_id, first_received_at, last_received_at, span_count, error_count, "
        "has_root) VALUES ($t, $at, $at, 1, 0, true)",
        {"t": trace_id, "at": at},
    )


def _settled(store: Store) -> set[str]:
    return {
        r[0] for r in store.con.execute("SELECT trace_id FROM traces WHERE settled_at IS NOT NULL").fetchall()
    }


def test_old_leftovers_wait_for_the_sweep_recent_traces_do_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "s.duckdb")
    con = store.cursor()
    settler = Settler(
        store.cursor(), lambda fn: fn(con), settle_seconds=0.2, max_wait_seconds=300, batch_limit=10
    )
    clock = [1000.0]
    monkeypatch.setattr(settle.time, "monotonic", lambda: clock[0])
    try:
        _trace(store, "a" * 32, timedelta(seconds=5))
        _trace(store, "b" * 32, timedelta(hours=2))  # left over from before a restart
        assert settler.run_once() == 2 and _settled(store) == {
            "a" * 32,
            "b" * 32,
        }  # the first round: everything
        _trace(store, "c" * 32, timedelta(seconds=5))
        _trace(store, "d" * 32, timedelta(hours=3))
        clock[0] += 1
        assert settler.run_once() == 1 and "c" * 32 in _settled(store)  # lately received only
        assert "d" * 32 not in _settled(store)
        clock[0] += settle.FULL_SWEEP_SECONDS
        assert settler.run_once() == 1 and "d" * 32 in _settled(store)
        # a round given its own time looks at everything
        _trace(store, "e" * 32, timedelta(hours=4))
        clock[0] += 1
        assert settler.run_once(now=utcnow()) == 1
    finally:
        store.close()


def test_a_full_batch_from_the_whole_table_is_followed_by_another_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "s.duckdb")
    con = store.cursor()
    settler = Settler(
        store.cursor(), lambda fn: fn(con), settle_seconds=0.2, max_wait_seconds=300, batch_limit=2
    )
    monkeypatch.setattr(settle.time, "monotonic", lambda: 1000.0)  # no time passes
    try:
        for i in range(5):  # a backlog from before a restart, larger than a batch
            _trace(store, f"{i:032d}", timedelta(hours=2, seconds=i))
        assert [settler.run_once() for _ in range(4)] == [2, 2, 1, 0]
        assert len(_settled(store)) == 5
    finally:
        store.close()


def _listening(settler: Settler) -> tuple[Settler, list[Any], list[float]]:
    """The settler told of stored spans through a list of listeners, and the times of its rounds."""
    listeners: list[Any] = []
    settler.listen(listeners)
    rounds: list[float] = []
    real_ready = settler._ready

    def counting(now=None):  # noqa: ANN001, ANN202
        rounds.append(time.monotonic())
        return real_ready(now)

    settler._ready = counting  # type: ignore[method-assign]
    return settler, listeners, rounds


def test_a_listening_loop_with_nothing_to_assemble_waits_for_spans(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.duckdb")
    con = store.cursor()
    write_lock = threading.Lock()

    def write(fn):  # noqa: ANN001, ANN202
        with write_lock:
            return fn(con)

    settler, listeners, rounds = _listening(
        Settler(store.cursor(), write, settle_seconds=0.2, max_wait_seconds=300)
    )
    settler.start()
    try:
        _wait_for(lambda: len(rounds) >= 1)  # the first round, however slow the machine
        time.sleep(1.5)  # nothing stored: then it waits (it polled every 0.1 s before)
        assert len(rounds) == 1
        with write_lock:
            _trace(store, "a" * 32, timedelta(seconds=0))
        for listener in listeners:
            listener(1)  # the writer stored spans
        _wait_for(lambda: "a" * 32 in _settled(store), timeout=10)
        assert "a" * 32 in _settled(store)  # polled while the trace waited, then assembled it
        assert len(rounds) >= 2
    finally:
        settler.stop()
        store.close()


def test_spans_stored_while_traces_wait_do_not_hurry_the_loop(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.duckdb")
    con = store.cursor()
    settler, listeners, rounds = _listening(
        Settler(store.cursor(), lambda fn: fn(con), settle_seconds=60, max_wait_seconds=300, interval=0.5)
    )
    _trace(store, "a" * 32, timedelta(seconds=0))  # waits for its settle time: the loop keeps looking
    settler.start()
    try:
        _wait_for(lambda: len(rounds) >= 1)
        first = len(rounds)
        end = time.monotonic() + 2.0
        writes = 0
        while time.monotonic() < end:  # ingest storing spans a hundred times a second
            for listener in listeners:
                listener(10)
            writes += 1
            time.sleep(0.01)
        # every half second (about 4 rounds), not after each of the ~200 writes
        assert 2 <= len(rounds) - first <= 6 < writes
    finally:
        settler.stop()
        store.close()


def _wait_for(condition: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
