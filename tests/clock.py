"""A clock tests move by hand (``ragfault_core.clock.Clock``): time passes only when ``advance`` says so."""

from __future__ import annotations

import threading
import time


class ManualClock:
    """Monotonic seconds that change only by ``advance``; ``wait`` returns when its event is set or
    the clock has been advanced past its timeout. ``waits`` counts the waits begun, so a test can
    tell that the thread under test went round its loop once more (``wait_for_waits``)."""

    def __init__(self, start: float = 1_000.0) -> None:
        self._now = start
        self._cond = threading.Condition()
        self.waits = 0
        self.parked = 0  # threads inside wait() now

    def monotonic(self) -> float:
        with self._cond:
            return self._now

    def wait(self, event: threading.Event, timeout: float) -> bool:
        with self._cond:
            deadline = self._now + timeout
            self.waits += 1
            self.parked += 1
            self._cond.notify_all()
            try:
                while not event.is_set() and self._now < deadline:
                    # woken by advance(); the event (set by another thread) is looked at every 10 ms
                    self._cond.wait(0.01)
            finally:
                self.parked -= 1
                self._cond.notify_all()
            return event.is_set()

    def advance(self, seconds: float) -> None:
        with self._cond:
            self._now += seconds
            self._cond.notify_all()

    def wait_for_waits(self, n: int, deadline_seconds: float = 60.0) -> None:
        """Until ``n`` waits have begun (a deadline, not a timing assertion: it fails only if the
        thread never gets there)."""
        end = time.monotonic() + deadline_seconds
        with self._cond:
            while self.waits < n:
                if not self._cond.wait(max(0.0, end - time.monotonic())) and time.monotonic() >= end:
                    raise AssertionError(f"the clock saw {self.waits} waits, not {n}")

    def tick(self, seconds: float) -> None:
        """Advance and wait until the waiting thread has gone round its loop and waits again."""
        n = self.waits
        self.advance(seconds)
        self.wait_for_waits(n + 1)
