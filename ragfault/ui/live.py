"""Live traffic in the web UI and on ``/metrics``: the live page's figures, one triage screen's
facts, and the same figures as Prometheus gauges.

The live page (``GET /api/v1/ui/live``) draws ``online_health`` by hour and service, the causes
``live_attribution`` proves by hour and service, the triage backlog (``triage``) and feedback; every
number is one of those bundled queries' rows, so a bar and the trace list it links to count the same
traces. The server reads the page's parts (``PAGE_PARTS``) at once, each on a cursor of its own.
A triage screen (``GET /api/v1/ui/triage/item``) adds to the trace view what live
attribution suspects, the feedback and whether the trace was promoted already.

``LiveGauges`` refreshes the gauges in a thread of its own every ``REFRESH_SECONDS`` (or
``COST_SHARE`` times what the last refresh took, when longer) on a cursor of its own (a read: ingest
never waits for it), over two hours only: the current UTC hour and the one
before, each exactly the row ``online_health`` gives for that hour (rates are not re-averaged over
hours, whose denominators the query does not all give). A scrape reads the values last computed.
A rate with no denominator has no series (not applicable is not 0). The triage backlog is the whole
queue, whatever its traces' age: counting it reads every live trace's verdicts, so it is counted on
an interval of its own, ``BACKLOG_REFRESH_SECONDS`` (or ``COST_SHARE`` times what its last count
took), not on every refresh.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
from fastapi import APIRouter, Depends, HTTPException, Request

from collector.components import Component, Context
from collector.receivers.otlp_http import check_bearer
from collector.store import live as store_live
from collector.store.live_window import window_reads
from collector.store.reader import jsonable, run_select
from queries import load_query
from queries.taxonomy import live_order
from ragfault_core.clock import Clock, SystemClock

log = logging.getLogger("ragfault.ui.live")

LIVE_CAUSES = live_order()
"""The root causes ``live_attribution`` may name, in its order."""
DEFAULT_HOURS = 48
MAX_HOURS = 24 * 31
BACKLOG_CAP = 100_000
BACKLOG_ROWS = 50
REFRESH_SECONDS = 60.0
BACKLOG_REFRESH_SECONDS = 600.0
COST_SHARE = 20


def _rows(result: Any) -> list[dict[str, Any]]:
    return [dict(zip(result.columns, r, strict=True)) for r in result.rows]


def as_datetime(value: Any) -> datetime | None:
    """A stored timestamp as ``run_select`` gives it (ISO text) as a naive UTC datetime."""
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value)).replace(tzinfo=None)


def window(
    con: Any, since: datetime | None, until: datetime | None
) -> tuple[datetime | None, datetime | None]:
    """The hours the page shows: as asked, else the ``DEFAULT_HOURS`` up to the latest live trace
    (a database of last month's traffic opens on its last days, not on an empty chart)."""
    if since is not None or until is not None:
        if since is not None and until is not None and until - since > timedelta(hours=MAX_HOURS):
            raise ValueError(f"the live page shows at most {MAX_HOURS} hours; narrow from/to")
        if since is None and until is not None:
            since = until - timedelta(hours=DEFAULT_HOURS)
        return since, until
    latest = as_datetime(store_live.latest(con))
    if latest is None:
        return None, None
    end = latest.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    return end - timedelta(hours=DEFAULT_HOURS), None


def page_health(
    con: Any, since: datetime | None, until: datetime | None, service: str | None
) -> dict[str, Any]:
    """The live page's ``online_health`` rows over its window."""
    health = load_query("online_health")
    # the query reads only the verdicts of the traces started since `since`
    with window_reads(con, since):
        params = health.bind({"since": since, "until": until, "service": service})
        return {"health": _rows(run_select(con, health.sql, params, row_cap=50_000))}


def page_causes(
    con: Any, since: datetime | None, until: datetime | None, service: str | None
) -> dict[str, Any]:
    """The causes ``live_attribution`` proves by hour and service over the page's window."""
    return {"causes": _rows(store_live.causes(con, since, until, service, row_cap=50_000))}


def page_queue(
    con: Any, since: datetime | None, until: datetime | None, service: str | None
) -> dict[str, Any]:
    """The triage backlog and the first rows of its queue: ``triage`` run once over the window's traces
    (it takes no end), its rows kept as Arrow; the backlog counts them, only the queue's first rows
    become Python values."""
    asked = {"service": service, "since": since, "limit": BACKLOG_CAP}
    with window_reads(con, since):
        queue = store_live.triage_queue(con, asked, row_cap=BACKLOG_CAP)
    return {
        "backlog": _rows(store_live.backlog_of(con, queue.table, row_cap=BACKLOG_CAP)),
        "queue": _rows(queue.head(BACKLOG_ROWS)),
        "backlog_capped": queue.table.num_rows >= BACKLOG_CAP,
    }


PAGE_PARTS = (page_queue, page_health, page_causes)
"""What the live page draws, each part read on a cursor of its own: the server reads them at once
(each of DuckDB's queries runs on the thread that calls it), the longest first."""


def live_page(
    con: Any, since: datetime | None, until: datetime | None, service: str | None
) -> dict[str, Any]:
    """Everything the live page draws, from the bundled queries, read one part after the other on
    ``con`` (the server reads the parts at once: ``router``)."""
    since, until = window(con, since, until)
    out: dict[str, Any] = {"since": since, "until": until, "service": service}
    for part in PAGE_PARTS:
        out.update(part(con, since, until, service))
    return page_order(out)


def page_order(out: dict[str, Any]) -> dict[str, Any]:
    """The live page's keys in the order of its answer."""
    keys = ("since", "until", "service", "health", "causes", "backlog", "queue", "backlog_capped")
    return {k: out[k] for k in keys}


def triage_item(con: Any, trace_id: str) -> dict[str, Any]:
    """What one triage screen shows beside the trace view: the suspected cause and its evidence,
    the feedback, and whether the trace was promoted or joins a case already."""
    out: dict[str, Any] = {}
    for key, result in store_live.triage_item(con, trace_id).items():
        rows = _rows(result)
        out[key] = rows[0] if rows else None
    return out


def router(ctx: Context) -> APIRouter:
    """``/api/v1/ui/live`` and ``/api/v1/ui/triage/item``: reads on a cursor of their own."""

    def auth(request: Request) -> None:
        check_bearer(request, ctx.settings.api_token)

    r = APIRouter(prefix="/api/v1/ui", dependencies=[Depends(auth)])
    limiter = anyio.CapacityLimiter(2)

    async def read(fn: Callable[..., Any], *args: Any, as_json: bool = True) -> Any:
        def work() -> Any:
            con = ctx.store.cursor()
            try:
                out = fn(con, *args)
                return jsonable(out) if as_json else out
            finally:
                con.close()

        return await anyio.to_thread.run_sync(work, limiter=limiter)

    @r.get("/live", summary="The live page: online_health, live causes by hour and service, triage backlog")
    async def get_live(
        since: datetime | None = None, until: datetime | None = None, service: str | None = None
    ) -> Any:
        try:
            since, until = await read(window, since, until, as_json=False)
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from exc
        out: dict[str, Any] = {"since": since, "until": until, "service": service or None}

        async def part(fn: Callable[..., dict[str, Any]]) -> None:
            out.update(await read(fn, since, until, service or None))

        # the parts at once, each on a cursor and a thread of its own (two at a time: the limiter)
        try:
            async with anyio.create_task_group() as tg:
                for fn in PAGE_PARTS:
                    tg.start_soon(part, fn)
        except ExceptionGroup as failed:  # the first part's error, as a read of one part would raise it
            raise failed.exceptions[0] from None
        return jsonable(page_order(out))

    @r.get("/triage/item", summary="One triage screen: the suspected cause, its evidence, the feedback")
    async def get_triage_item(trace_id: str) -> Any:
        return await read(triage_item, trace_id.lower())

    return r


# --- gauges ----------------------------------------------------------------------------------

HEALTH_GAUGES = {
    "traces": ("ragfault_live_traces", "Live traces (no gold case), settled, by service and hour."),
    "empty_retrieval_rate": ("ragfault_live_empty_retrieval_rate", "Share of retrievals with a known output that returned nothing."),
    "top_score_p50": ("ragfault_live_top_score_p50", "Median top retrieval score."),
    "stale_context_traces": ("ragfault_live_stale_context_traces", "Live traces with a stale document in the context."),
    "forbidden_traces": ("ragfault_live_forbidden_traces", "Live traces with a document outside the caller's scopes."),
    "unsupported_claim_rate": ("ragfault_live_unsupported_claim_rate", "Share of answer claims no context sentence supports."),
    "refusal_rate": ("ragfault_live_refusal_rate", "Share of answers that refuse."),
    "retrieval_skipped_rate": ("ragfault_live_retrieval_skipped_rate", "Share of live traces without a retrieval step."),
    "latency_p95_ms": ("ragfault_live_latency_p95_ms", "95th percentile of trace latency (ms)."),
    "error_traces": ("ragfault_live_error_traces", "Live traces with an error span."),
    "negative_feedback_traces": ("ragfault_live_negative_feedback_traces", "Live traces with negative user feedback."),
    "thumbs_down": ("ragfault_live_thumbs_down", "Thumbs-down given on live traces."),
}  # fmt: skip
CAUSE_GAUGE = "ragfault_live_root_cause_traces"
BACKLOG_GAUGE = "ragfault_triage_backlog_traces"
REFRESH_GAUGE = "ragfault_live_gauges_refresh_seconds"
BACKLOG_REFRESH_GAUGE = "ragfault_triage_backlog_refresh_seconds"
FAILURES = "ragfault_live_gauges_failures_total"
Labels = tuple[tuple[str, str], ...]


def hour_of(now: datetime) -> datetime:
    return now.replace(minute=0, second=0, microsecond=0, tzinfo=None)


def hour_values(con: Any, now: datetime) -> dict[str, dict[Labels, float]]:
    """The hours' gauges at ``now`` (UTC): the current and the previous hour (label ``hour``:
    current | previous) per service; their reads hold only those hours' verdicts."""
    current = hour_of(now)
    start = current - timedelta(hours=1)
    params = {"since": start, "until": None, "service": None}
    out: dict[str, dict[Labels, float]] = {name: {} for name, _ in HEALTH_GAUGES.values()}
    out[CAUSE_GAUGE] = {}

    def which(value: Any) -> str | None:
        hour = as_datetime(value)
        return "current" if hour == current else "previous" if hour == start else None

    health = load_query("online_health")
    with window_reads(con, start):  # the two hours' verdicts only
        health_rows = _rows(run_select(con, health.sql, health.bind(params), row_cap=100_000))
        cause_rows = _rows(store_live.causes(con, start, None, None, row_cap=100_000))
    for row in health_rows:
        label = which(row["hour"])
        if label is None:
            continue
        key: Labels = (("hour", label), ("service", str(row["service_name"])))
        for column, (name, _) in HEALTH_GAUGES.items():
            if row[column] is not None:  # not applicable: no series, never 0
                out[name][key] = float(row[column])
    for row in cause_rows:
        label = which(row["hour"])
        if label is not None:
            cause = str(row["root_cause"])
            out[CAUSE_GAUGE][
                (("hour", label), ("root_cause", cause), ("service", str(row["service_name"])))
            ] = float(row["traces"])
    return out


def backlog_values(con: Any) -> dict[str, dict[Labels, float]]:
    """The whole triage backlog per service and reason: every live trace's verdicts are read, which
    is why it is counted on an interval of its own."""
    series: dict[Labels, float] = {}
    for row in _rows(store_live.triage_backlog(con, {"limit": BACKLOG_CAP}, row_cap=100_000)):
        series[(("reason", str(row["reason"])), ("service", str(row["service_name"])))] = float(row["traces"])
    return {BACKLOG_GAUGE: series}


def gauge_values(con: Any, now: datetime) -> dict[str, dict[Labels, float]]:
    """Every live gauge's series at ``now`` (UTC): the two hours' and the whole backlog."""
    return {**hour_values(con, now), **backlog_values(con)}


class LiveGauges:
    """The live figures on ``/metrics``, refreshed every ``REFRESH_SECONDS`` in a thread of its own,
    the backlog every ``BACKLOG_REFRESH_SECONDS`` (``refresh`` computes them now). ``now``: the wall
    clock the hours are read from; ``clock``: the one the intervals are measured and waited on (tests
    pass their own of both)."""

    def __init__(
        self, ctx: Context, now: Callable[[], datetime] | None = None, clock: Clock | None = None
    ) -> None:
        self.ctx = ctx
        self.now = now or (lambda: datetime.now(UTC))
        self.clock = clock or SystemClock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="ragfault-live-gauges", daemon=True)
        self._backlog_due: float | None = None  # None: not counted yet
        m = ctx.metrics
        for name, text in HEALTH_GAUGES.values():
            m.describe(name, "gauge", text + " Label hour: current or previous UTC hour.", sparse=True)
        m.describe(CAUSE_GAUGE, "gauge", "Live traces by the root cause live_attribution proves, by service and hour.", sparse=True)  # fmt: skip
        m.describe(BACKLOG_GAUGE, "gauge", "Traces in the triage queue, by service and reason.", sparse=True)
        m.describe(REFRESH_GAUGE, "gauge", "Time the last refresh of the live gauges took.")
        m.describe(BACKLOG_REFRESH_GAUGE, "gauge", "Time the last count of the triage backlog took.")
        m.describe(FAILURES, "counter", "Refreshes of the live gauges that failed (logged).")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(30)

    def refresh(self, backlog: bool = True) -> tuple[float, float | None]:
        """Compute the hours' gauges, and the backlog's when ``backlog``; what each took (seconds,
        None: the backlog was not counted). Series not computed keep their last values."""
        t0 = self.clock.monotonic()
        con = self.ctx.store.cursor()
        try:
            values = hour_values(con, self.now())
            t1 = self.clock.monotonic()
            if backlog:
                values.update(backlog_values(con))
        finally:
            con.close()
        t2 = self.clock.monotonic()
        for name, series in values.items():
            self.ctx.metrics.replace(name, series)
        self.ctx.metrics.set(REFRESH_GAUGE, t2 - t0)
        if not backlog:
            return t1 - t0, None
        self.ctx.metrics.set(BACKLOG_REFRESH_GAUGE, t2 - t1)
        return t1 - t0, t2 - t1

    def round(self) -> float:
        """One refresh of the loop (the backlog too when its interval passed); the pause before the
        next. Each part waits ``COST_SHARE`` times what it took when that is longer than its interval,
        so on a large database the gauges take at most 1/COST_SHARE of a core."""
        t0 = self.clock.monotonic()
        due = self._backlog_due is None or t0 >= self._backlog_due
        try:
            hours, counted = self.refresh(backlog=due)
        except Exception as exc:  # a store that failed is the server's to report; try again later
            self.ctx.metrics.inc(FAILURES)
            log.warning("live gauges not refreshed: %s", str(exc).splitlines()[0] if str(exc) else exc)
            return max(REFRESH_SECONDS, COST_SHARE * (self.clock.monotonic() - t0))
        if counted is not None:
            self._backlog_due = t0 + max(BACKLOG_REFRESH_SECONDS, COST_SHARE * counted)
        return max(REFRESH_SECONDS, COST_SHARE * hours)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.clock.wait(self._stop, self.round())


COMPONENT = Component("live_gauges", service=LiveGauges, order=70)
