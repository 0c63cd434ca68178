"""The live page's reads cut to its time window.

On a file store the views the live page reads most (``live_attribution``, ``attribution``,
``trace_health``) read per-trace facts (``collector.store.file.facts``), so their cost does not grow
with the verdicts. What still reads a whole table is the triage queue's triggers (the latest evaluation
decision per trace and tier, ``eval_status``'s rule over the ``eval_log`` rows of every trace whose log
names a trigger): a time filter on its output (the trace's start) does not cut its work.

``window_reads`` registers, on one cursor and for the reads done inside, the ``eval_log`` rows of the
settled traces that started at or after ``since`` under that table's name: the views and the bundled
queries run unchanged (the same text, so a bar and the trace list it links to still count the same
traces) and give the same rows for those traces, since a trace's rows are all there. The least time the
window's traces were first received, which bounds that read of the log, is given too. Every read inside
must be about traces that started at or
after ``since``: the live page's health, causes and triage rows all are. A lake's views may resolve the
tables elsewhere: there nothing is registered and the reads run as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from collector.store.backend import is_lake
from collector.store.base import Con, arrow_rows
from collector.store.sqlfiles import sql
from collector.store.verdicts import registered


@dataclass(frozen=True)
class Cut:
    """What ``window_reads`` did: whether the tables were cut, and a time none of the window's spans,
    steps or documents was received before (the bound of its read of the log; None: unknown)."""

    cut: bool
    received_since: datetime | None = None


@contextmanager
def window_reads(con: Con, since: datetime | None) -> Iterator[Cut]:
    """Within: ``eval_log`` on ``con`` holds only the rows of the settled traces that started at or after
    ``since`` (not when ``since`` is None, nor on a lake)."""
    if since is None or is_lake(con):
        yield Cut(False)
        return
    received = con.execute(sql("ui", "live_window_bound"), {"since": since}).fetchall()[0][0]
    log = arrow_rows(con, sql("ui", "live_window_log"), {"since": since, "received_since": received})
    with registered(con, {"eval_log": log}):
        yield Cut(True, received)
