"""The clock the evaluation scheduler reads its intervals from and waits on.

The scheduler's decisions follow intervals (an idle loop looks for waiting traces every
``IDLE_POLL_SECONDS``, workers stop after ``POOL_IDLE_SECONDS`` without work, a trace that waited
longer than ``judge_max_wait_seconds`` for the judge is shed). ``SystemClock`` measures them with
``time.monotonic`` and waits on real events; a test passes a clock of its own and moves time by hand
instead of sleeping. The times stamped on stored rows (``evaluated_at``, ``logged_at``) are wall-clock
times and do not come from here.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (an interval is the difference of two readings)."""
        ...

    def wait(self, event: threading.Event, timeout: float) -> bool:
        """Block until ``event`` is set or ``timeout`` seconds of this clock passed; whether it is set."""
        ...


class SystemClock:
    """The machine's monotonic clock and real waiting."""

    def monotonic(self) -> float:
        return time.monotonic()

    def wait(self, event: threading.Event, timeout: float) -> bool:
        return event.wait(timeout)
