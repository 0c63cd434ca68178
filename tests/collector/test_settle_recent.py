"""The settle loop looks at the traces whose last span arrived lately (within max_wait_seconds and
RECENT_MARGIN), and at the whole table every FULL_SWEEP_SECONDS, in its first round, in a round given
its own time, and until a round of the whole table finds less than a full batch. With nothing to
assemble it waits for spans to be stored; while traces wait, it looks every interval however often
spans are stored. Time is the test's: the settler's clock, wall clock and waits are injected."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from collector.settling import settle
from collector.settling.settle import Settler
from collector.store import Store

WALL = datetime(2026, 3, 2, 12, 0, 0)


class Clock:
    """A monotonic clock (seconds) and a wall clock (naive UTC) that move only when told to."""

    def __init__(self) -> None:
        self.at = 1000.0
        self.wall = WALL

    def __call__(self) -> float:
        return self.at

    def now(self) -> datetime:
        return self.wall

    def advance(self, seconds: float) -> None:
        self.at += seconds
        self.wall += timedelta(seconds=seconds)


def _trace(store: Store, trace_id: str, received_at: datetime) -> None:
    store.con.execute(
        "INSERT INTO traces (trace_id, first_received_at, last_received_at, span_count, error_count, "
        "has_root) VALUES ($t, $at, $at, 1, 0, true)",
        {"t": trace_id, "at": received_at},
    )


def _settled(store: Store) -> set[str]:
    return {
        r[0] for r in store.con.execute("SELECT trace_id FROM traces WHERE settled_at IS NOT NULL").fetchall()
    }


def _settler(store: Store, clock: Clock, **kw: Any) -> Settler:
    con = store.cursor()
    kw.setdefault("settle_seconds", 0.2)
    kw.setdefault("max_wait_seconds", 300)
    return Settler(store.cursor(), lambda fn: fn(con), clock=clock, wall_clock=clock.now, **kw)


def test_old_leftovers_wait_for_the_sweep_recent_traces_do_not(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.duckdb")
    clock = Clock()
    settler = _settler(store, clock, batch_limit=10)
    try:
        _trace(store, "a" * 32, WALL - timedelta(seconds=5))
        _trace(store, "b" * 32, WALL - timedelta(hours=2))  # left over from before a restart
        assert settler.run_once() == 2 and _settled(store) == {"a" * 32, "b" * 32}  # the first round: all
        _trace(store, "c" * 32, clock.wall - timedelta(seconds=5))
        _trace(store, "d" * 32, clock.wall - timedelta(hours=3))
        clock.advance(1)
        assert settler.run_once() == 1 and "c" * 32 in _settled(store)  # lately received only
        assert "d" * 32 not in _settled(store)
        clock.advance(settle.FULL_SWEEP_SECONDS)
        assert settler.run_once() == 1 and "d" * 32 in _settled(store)
        # a round given its own time looks at everything
        _trace(store, "e" * 32, clock.wall - timedelta(hours=4))
        clock.advance(1)
        assert settler.run_once(now=clock.wall) == 1
    finally:
        store.close()


def test_a_full_batch_from_the_whole_table_is_followed_by_another_sweep(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.duckdb")
    clock = Clock()  # no time passes
    settler = _settler(store, clock, batch_limit=2)
    try:
        for i in range(5):  # a backlog from before a restart, larger than a batch
            _trace(store, f"{i:032d}", WALL - timedelta(hours=2, seconds=i))
        assert [settler.run_once() for _ in range(4)] == [2, 2, 1, 0]
        assert len(_settled(store)) == 5
    finally:
        store.close()


class Waits:
    """The settle loop's pauses, recorded as ("stop" | "wake", seconds). A pause on the stop event (an
    interval while traces wait) passes at once on the test's clock, after ``during`` ran (what happens
    meanwhile); one on the wake event (waiting for spans) really waits, for the event."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.calls: list[tuple[str, float]] = []
        self.settler: Settler | None = None
        self.during: Any = None
        self.hold_after: int | None = None  # from this many pauses on, a stop pause waits for stop()
        self._cond = threading.Condition()

    def __call__(self, event: threading.Event, seconds: float) -> bool:
        assert self.settler is not None
        kind = "stop" if event is self.settler._stop else "wake"
        with self._cond:
            self.calls.append((kind, seconds))
            n = len(self.calls)
            self._cond.notify_all()
        if kind == "wake" or (self.hold_after is not None and n >= self.hold_after):
            return event.wait(30)
        if self.during is not None:
            self.during()
        self.clock.advance(seconds)
        return event.is_set()

    def until(self, n: int) -> list[tuple[str, float]]:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.calls) >= n, timeout=30), self.calls
            return list(self.calls)


def _listening(settler: Settler, waits: Waits) -> tuple[list[Any], list[float]]:
    """The settler told of stored spans through a list of listeners, and the (test clock) times of its
    rounds."""
    waits.settler = settler
    listeners: list[Any] = []
    settler.listen(listeners)
    rounds: list[float] = []
    real_ready = settler._ready

    def counting(now=None):  # noqa: ANN001, ANN202
        rounds.append(settler.clock())
        return real_ready(now)

    settler._ready = counting  # type: ignore[method-assign,assignment]
    return listeners, rounds


def test_a_listening_loop_with_nothing_to_assemble_waits_for_spans(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.duckdb")
    clock = Clock()
    waits = Waits(clock)
    write_lock = threading.Lock()
    con = store.cursor()

    def write(fn):  # noqa: ANN001, ANN202
        with write_lock:
            return fn(con)

    settler = Settler(
        store.cursor(), write, settle_seconds=0.2, max_wait_seconds=300, clock=clock, wall_clock=clock.now,
        wait=waits,
    )  # fmt: skip
    listeners, rounds = _listening(settler, waits)
    done = threading.Event()
    settler.listeners.append(lambda ids: done.set())
    settler.start()
    try:
        # one interval, a round finding nothing, then it waits for spans (until the next sweep is
        # due), not for the next interval
        assert waits.until(2) == [
            ("stop", settler.interval),
            ("wake", pytest.approx(settle.FULL_SWEEP_SECONDS)),  # the sweep was at the round
        ]
        assert len(rounds) == 1
        with write_lock:
            _trace(store, "a" * 32, clock.wall)
        clock.advance(1)  # its settle time has passed
        for listener in listeners:
            listener(1)  # the writer stored spans
        assert done.wait(30)
        assert "a" * 32 in _settled(store)
        assert len(rounds) == 2  # one round, woken by the spans
        assert waits.until(3)[2][0] == "wake"  # nothing left: it waits for spans again
    finally:
        settler.stop()
        store.close()


def test_spans_stored_while_traces_wait_do_not_hurry_the_loop(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.duckdb")
    clock = Clock()
    waits = Waits(clock)
    settler = _settler(store, clock, settle_seconds=60, interval=0.5, wait=waits)
    listeners, rounds = _listening(settler, waits)
    writes = [0]

    def ingest() -> None:  # during each pause, ingest stores spans fifty times
        for _ in range(50):
            for listener in listeners:
                listener(10)
            writes[0] += 1

    waits.during = ingest
    waits.hold_after = 9
    _trace(store, "a" * 32, WALL)  # waits for its settle time: the loop keeps looking
    settler.start()
    try:
        calls = waits.until(9)
        # every pause is one interval on the stop event (spans stored do not end it), one round each
        assert calls == [("stop", 0.5)] * 9
        assert rounds == [1000.0 + 0.5 * i for i in range(1, 9)]
        assert writes[0] == 400 and len(rounds) == 8
        assert _settled(store) == set()
    finally:
        settler.stop()
        store.close()
