"""The live page's reads cut to its time window.

``live_attribution``, ``attribution`` and ``eval_status`` are views over every verdict and every
evaluation log row: a time filter on their output does not cut their work (the filter is on the trace's
start, the aggregation is per trace over the whole table), so the live page and the live gauges read
every verdict ever written whatever hours they show, and grow with the store, not with the window.

``window_reads`` registers, on one cursor and for the reads done inside, the rows of ``evaluations``
and ``eval_log`` of the settled traces that started at or after ``since`` under those tables' names:
the views and the bundled queries run unchanged (the same text, so a bar and the trace list it links to
still count the same traces) and give the same rows for those traces, since a trace's rows are all
there. The verdicts are read from the least ``verdicts_since`` of those traces on (migration 007), so
the scan skips older row groups; a trace evaluated without that stamp makes it read them all (still
only theirs). The least time the window's traces were first received is given too: steps and
documents, which no view reads, are cut by it in ``online_health`` (``$received_since``). Every read inside must be about traces that started at or after ``since``: the live
page's health, causes and triage rows all are. A lake's views may resolve the tables elsewhere: there
nothing is registered and the reads run as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from collector.store.backend import is_lake
from collector.store.base import Con
from collector.store.sqlfiles import sql
from collector.store.verdicts import registered


@dataclass(frozen=True)
class Cut:
    """What ``window_reads`` did: whether the tables were cut, and a time none of the window's spans,
    steps or documents was received before (``online_health``'s ``$received_since``; None: unknown)."""

    cut: bool
    received_since: datetime | None = None


@contextmanager
def window_reads(con: Con, since: datetime | None) -> Iterator[Cut]:
    """Within: ``evaluations`` and ``eval_log`` on ``con`` hold only the rows of the settled traces that
    started at or after ``since`` (not when ``since`` is None, nor on a lake)."""
    if since is None or is_lake(con):
        yield Cut(False)
        return
    unknown, bound, received = con.execute(sql("ui", "live_window_bound"), {"since": since}).fetchall()[0]
    params = {"since": since, "bound": None if unknown else bound}
    verdicts = con.execute(sql("ui", "live_window_verdicts"), params).to_arrow_table()
    log = con.execute(sql("ui", "live_window_log"), {"since": since}).to_arrow_table()
    with registered(con, {"evaluations": verdicts, "eval_log": log}):
        yield Cut(True, received)
