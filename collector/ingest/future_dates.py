"""Data dated in the future: how late a request's times may be, and the note that says rows were
moved back.

A client's clock may run ahead, or a client may date data on purpose past retention. Every signal
(spans, log records, metric data points) keeps the times it was sent in its ``*_unix_nano``
columns, and stores a time later than the grace period (``future_grace_seconds``) allows as the
time it was received, noting how many rows it moved in ``partial_success``.
"""

from __future__ import annotations

from datetime import datetime, timedelta


def future_limit_ns(now: datetime, grace_seconds: float | None) -> int | None:
    """The latest time a request's data may claim, ``grace_seconds`` after ``now`` (a naive UTC
    datetime) in nanoseconds since the epoch; None when there is no limit."""
    if grace_seconds is None:
        return None
    return ns_since_epoch(now) + int(grace_seconds * 1e9)


def ns_since_epoch(t: datetime) -> int:
    return (t - _EPOCH) // timedelta(microseconds=1) * 1000


_EPOCH = datetime(1970, 1, 1)


def clamp_note(n: int, unit: str, grace_seconds: float | None, columns: str) -> str:
    """The ``partial_success`` note for ``n`` rows dated past the grace period."""
    return (
        f"{n} {unit} dated more than {grace_seconds:g} s in the future: {columns} set to the time "
        "they were received (the *_unix_nano columns keep what was sent)"
    )
