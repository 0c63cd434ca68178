"""A dependency-free progress bar on stderr (silent when stderr is not a terminal, unless forced)."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, label: str = "", force: bool = False) -> None:
        self.total = max(total, 0)
        self.done = 0
        self.label = label
        self.t0 = time.monotonic()
        self.enabled = force or sys.stderr.isatty()

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        width = 30
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(frac * width)
        rate = self.done / max(time.monotonic() - self.t0, 1e-9)
        sys.stderr.write(f"\r{self.label} [{bar:<{width}}] {self.done}/{self.total} ({rate:,.0f}/s)")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()
