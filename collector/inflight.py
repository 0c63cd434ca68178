"""The bytes of ingest held in the server at once: bodies being read and decoded, and decoded
batches waiting for their commit.

Both receivers take a request's bytes from one ``ByteBudget`` before holding them (OTLP/HTTP:
the body's ``Content-Length``, or each chunk as it arrives; gRPC: the received message) and give
them back once the request is answered. While a request decodes it holds its body bytes; once
decoded it holds the Arrow bytes of its batch instead, until the batch is committed. A request
that does not fit is refused at once, with 503 + ``Retry-After`` / UNAVAILABLE, so the exporter
retries later: whatever the senders do, the ingest bytes held stay under ``max_inflight_bytes``
(plus the one decoded batch of each request admitted, which may be larger than its body).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from collector.errors import RetryableError


class IngestBusy(RetryableError):
    """The in-flight byte budget is spent: 503 + Retry-After / UNAVAILABLE."""


class ByteBudget:
    def __init__(self, limit: int, on_change: Callable[[int], None] | None = None) -> None:
        self.limit = limit
        self._used = 0
        self._lock = threading.Lock()
        self._on_change = on_change

    @property
    def used(self) -> int:
        return self._used

    def take(self, n: int) -> None:
        """Hold ``n`` more bytes, or raise ``IngestBusy`` when they do not fit."""
        with self._lock:
            if self._used + n > self.limit:
                used = self._used
                refused = True
            else:
                self._used += n
                used = self._used
                refused = False
        if refused:
            raise IngestBusy(
                f"ingest holds {used} bytes; {n} more would exceed max_inflight_bytes ({self.limit})",
                retry_after=1,
            )
        self._changed(used)

    def swap(self, held: int, n: int) -> None:
        """Hold ``n`` bytes instead of ``held`` (a body decoded into its batch); never refused."""
        with self._lock:
            self._used += n - held
            used = self._used
        self._changed(used)

    def give(self, n: int) -> None:
        with self._lock:
            self._used -= n
            used = self._used
        self._changed(used)

    def _changed(self, used: int) -> None:
        if self._on_change is not None:
            self._on_change(used)


def batch_bytes(batch: object) -> int:
    """The Arrow bytes of a decoded batch (spans, steps, documents)."""
    return sum(int(getattr(batch, name).nbytes) for name in ("spans", "steps", "docs"))
