"""The settle loop (``collector.settling.settle.Settler``) as a server component.

It starts right after the core (the store, the writer, the pipeline), before anything that waits
for assembled traces: the evaluation scheduler finds it (``Context.settler``) and listens for what
it settles. On a lake every collector settles, each trace by the one that claimed it
(``collector.store.lake.work``). A server built without this component stores spans and never
assembles them (``collector.runtime.Runtime`` logs so at start).
"""

from __future__ import annotations

from collector.components import Component, Context
from collector.settling.settle import Settler

# Ingest is under pressure (the settle loop, and the evaluation it triggers, yield to it) while span
# batches waited for the writer during at least INGEST_PRESSURE_SHARE of the last
# INGEST_PRESSURE_WINDOW seconds: it goes as fast as it can. A steady stream it keeps up with has a
# request in flight much of the time, which is no pressure. (Pressure used to be any span waiting at
# the instant the loop looked: at 200-300 traces a second that stalled settling for seconds at a
# time, up to the backoff's 30 s.)
INGEST_PRESSURE_WINDOW = 2.0
INGEST_PRESSURE_SHARE = 0.75
# how long a settle round may wait for the writer to commit what it assembled
WRITE_TIMEOUT_SECONDS = 120


def settler(ctx: Context) -> Settler:
    """The server's settler: its rounds read on a cursor of their own and commit through the
    writer (one writing connection), it wakes when the writer stores spans, reads spans as
    ingest did (the pipeline's options: source keys, mappings) and fills them only from the
    content sources the store trusts."""
    settings, writer = ctx.settings, ctx.writer
    found = Settler(
        ctx.store.cursor(),
        lambda fn: writer.call(fn, timeout=WRITE_TIMEOUT_SECONDS),
        pressure=lambda: writer.waiting_share(INGEST_PRESSURE_WINDOW) >= INGEST_PRESSURE_SHARE,
        settle_seconds=settings.settle_seconds,
        max_wait_seconds=settings.max_trace_wait_seconds,
        metrics=ctx.metrics,
        max_resettles=settings.max_resettles_per_minute,
        content_sources=ctx.store.content_sources,
        options=ctx.pipeline.options,  # read again at settle as at ingest
    )
    found.listen(writer.listeners)
    return found


# its settings are [server]'s (settle_seconds, max_trace_wait_seconds, max_resettles_per_minute)
COMPONENT = Component("settler", service=settler, order=1)
