"""The bytes of ingest held in the server at once: bodies being read and decoded, the rows they
build, and built batches waiting for their commit.

Both receivers take a request's bytes from one ``ByteBudget`` before holding them (OTLP/HTTP:
the body's ``Content-Length``, or each chunk as it arrives; gRPC: the received message) and give
them back once the request is answered. Before a body is decoded, the request also takes what its
rows may build (``build_reservation``: a few times its inflated size, at most
``max_decoded_bytes``). The build runs under a ``Meter`` with that allowance: it counts what the
rows will hold before they are built — every resource, scope and metric description a request
carries once and each row copies — and the Arrow bytes of each chunk of rows once built. A request
whose rows would take more than ``max_decoded_bytes`` is refused with 413 before they are built (a
12 KB body can otherwise name a 1 MB resource for 6,000 records); one that needs more than its
allowance but less than the limit raises ``NeedsBudget``, the receiver takes the bytes it names
and builds again. Once built, the request holds the exact Arrow bytes of its batch until the batch
is committed. A request that does not fit is refused at once, with 503 + ``Retry-After`` /
UNAVAILABLE, so the exporter retries later: whatever the senders do, the ingest bytes held stay
under ``max_inflight_bytes``, and no decode builds more than its request holds (plus one chunk).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ragfault_core.errors import PayloadTooLarge, RetryableError

# How many times its inflated size a request reserves for the rows it builds before decoding: an
# OTLP trace request builds about twice its protobuf size in Arrow (spans, steps, documents),
# logs and metrics about ten times for tiny records; a request that needs more asks again
# (``NeedsBudget``), so this only saves that second decode for ordinary requests.
BUILD_FACTOR = 4
# ... and at least this much (a small request's rows take many times its few hundred bytes)
BUILD_FLOOR = 256 << 10


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
    """The Arrow bytes of a decoded batch: spans, steps, documents, the per-trace summary, log
    records and metric points, whichever it has."""
    total = 0
    for name in ("spans", "steps", "docs", "traces", "logs", "points"):
        table = getattr(batch, name, None)
        if table is not None:
            total += int(table.nbytes)
    return total


def build_reservation(inflated: int, max_decoded: int) -> int:
    """The bytes a request of ``inflated`` body bytes holds while it decodes: its body and the rows
    it may build, ``BUILD_FACTOR`` times the body or ``BUILD_FLOOR``, at most ``max_decoded`` (and
    never less than the body itself)."""
    return max(inflated, min(max(inflated * BUILD_FACTOR, BUILD_FLOOR), max_decoded))


class NeedsBudget(Exception):
    """A build needs more bytes than its request holds, though no more than ``max_decoded_bytes``:
    the receiver takes ``needed`` bytes in all from the budget (or answers 503 when they are not
    free) and decodes the request again with that allowance. Raised before the rows past the
    allowance are built; plain data, so it pickles back from a decode worker."""

    def __init__(self, needed: int) -> None:
        super().__init__(needed)
        self.needed = needed

    def __str__(self) -> str:
        return f"the request's rows need {self.needed} bytes of the ingest budget"


class Meter:
    """What one request's build holds: the rows planned and not built yet, and the Arrow bytes of the
    chunks built. Checked before each chunk is built and after it is, against the request's
    ``allowance`` (``NeedsBudget``) and ``limit`` (``max_decoded_bytes``: 413)."""

    def __init__(self, allowance: int, limit: int, unit: str = "rows", body: int = 0) -> None:
        self.allowance = allowance
        self.limit = limit
        self.unit = unit
        self.body = body  # the request's inflated bytes: what its rows carry beyond the plan, at least
        self.built = 0  # Arrow bytes of the chunks built so far
        self.planned = 0  # bytes planned for the rows not built yet
        self.rows = 0  # rows of the request
        self.rows_built = 0
        self.copied = 0  # the largest number of bytes one row copies from what the request sent once

    def plan(self, rows: int, nbytes: int, copied: int = 0) -> None:
        """Before any row is built: ``rows`` rows will hold at least ``nbytes`` (their fixed columns
        and every copy of their resource, scope and descriptions)."""
        self.rows, self.planned, self.copied = rows, nbytes, copied
        self._check()

    def chunk(self, rows: int, nbytes: int, planned: int) -> None:
        """A chunk of ``rows`` rows was built into ``nbytes`` Arrow bytes; ``planned`` of the plan
        were for those rows."""
        self.rows_built += rows
        self.built += nbytes
        self.planned -= planned
        self._check()

    def _check(self) -> None:
        total = self.built + max(self.planned, 0)
        if total > self.limit:
            copies = (
                f", each copying {self.copied:,} bytes the request sent once (resource and scope "
                "attributes, metric descriptions)"
                if self.copied >= 1024
                else ""
            )
            raise PayloadTooLarge(
                f"the request's {self.rows:,} {self.unit} would take at least {total:,} bytes once "
                f"decoded{copies}; the limit is {self.limit:,} (max_decoded_bytes): send fewer "
                f"{self.unit} a request or smaller attributes"
            )
        if total > self.allowance:
            # the rows left, at the size of those built so far, or as planned before any is built
            left = self.rows - self.rows_built
            if self.rows_built:
                rest = max(self.planned, int(left * self.built / self.rows_built))
            else:  # before any row is built: the plan and twice what the rows carry of the body
                rest = self.planned + 2 * self.body
            estimate = self.built + int(rest * 1.25)
            raise NeedsBudget(min(self.limit, max(estimate, total)))
