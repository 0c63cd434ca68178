"""Waiting in tests for a state a real server, thread or process reaches by itself.

A test that needs *time to pass* moves an injected clock (``tests.clock.ManualClock``) and never
sleeps. What remains is waiting for another party to get somewhere (a row is written, a file appears,
a process exits): that is polled here with a deadline, and the failure names what was awaited and
the last value seen, so a red test says how far the other side got instead of only "timed out".
The deadline is not a timing assertion: a slow machine only makes the poll go round more often."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: how often a condition is looked at: short against the seconds a test may wait, long against a query
POLL_SECONDS = 0.05


def wait_until(
    probe: Callable[[], T],
    ok: Callable[[T], object] = bool,
    *,
    what: str = "",
    timeout: float = 30.0,
    every: float = POLL_SECONDS,
    now: Callable[[], float] = time.monotonic,
    pause: Callable[[float], object] = time.sleep,
) -> T:
    """Call ``probe`` until ``ok`` holds for what it returns, and return that value; raise
    ``AssertionError`` naming ``what`` and the last value once ``timeout`` seconds have passed.

    ``now`` and ``pause`` are the clock (the system's by default), injectable so the helper's own
    deadline is tested without waiting."""
    deadline = now() + timeout
    while True:
        value = probe()
        if ok(value):
            return value
        if now() >= deadline:
            label = what or getattr(probe, "__name__", "the condition")
            raise AssertionError(f"waited {timeout:g} s for {label}; last saw {value!r}")
        pause(every)


def wait_equal(
    probe: Callable[[], T],
    expected: object,
    *,
    what: str = "",
    timeout: float = 30.0,
    every: float = POLL_SECONDS,
    now: Callable[[], float] = time.monotonic,
    pause: Callable[[float], object] = time.sleep,
) -> T:
    """:func:`wait_until` the probe returns ``expected`` (the failure shows both)."""
    label = f"{what or getattr(probe, '__name__', 'the value')} to be {expected!r}"
    return wait_until(
        probe, lambda v: v == expected, what=label, timeout=timeout, every=every, now=now, pause=pause
    )
