"""The live page reads only its window's verdicts (issue 43): the same figures as the bundled queries
give over the whole store, while ``evaluations`` and ``eval_log`` hold only the window's traces."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from collector.store.live_window import window_reads
from collector.store.reader import jsonable
from collector.store.templates import filled
from queries import load_query
from ragfault.ui.live import BACKLOG_REFRESH_SECONDS, REFRESH_SECONDS, LiveGauges, live_page
from tests.clock import ManualClock
from tests.live.conftest import DOCS, LiveServer
from tests.tracegen import rag_trace
from tests.ui.test_live import KB, NO_SAMPLE, SHOES, WRONG, by_service, scrape


def emit(srv: LiveServer, tag: str) -> dict[str, str]:
    """One trace of each kind, the wrong one given a thumbs down; returns their ids."""
    shop = srv.tracer("shop")
    ids = {
        "wrong": rag_trace(shop, query=SHOES, answer=WRONG, candidates=DOCS, attributes={"tag": tag}),
        "quiet": rag_trace(shop, query="What colours do the shoes come in?", answer="Red.", candidates=DOCS),
        "bare": rag_trace(srv.tracer("chat"), query="Hello there?", answer="Hi!", retrieve=False),
    }
    srv.drain()
    r = srv.http.post("/api/v1/feedback", json={"trace_id": ids["wrong"], "kind": "thumbs", "value": "down"})
    assert r.status_code == 200 and r.json()["negative"] is True, r.text
    srv.drain()
    return ids


@pytest.fixture
def two_ages(tmp_path: Path) -> Iterator[tuple[LiveServer, dict[str, str], dict[str, str], str]]:
    """A server holding an earlier and a later set of live traces, and a time between them."""
    srv = LiveServer(tmp_path, NO_SAMPLE)
    try:
        r = srv.http.post("/api/v1/kb", content="".join(json.dumps(d) + "\n" for d in KB))
        assert r.status_code == 200, r.text
        early = emit(srv, "early")
        # the later traces start after every span of the earlier ones ended
        between = srv.sql("SELECT CAST(max(end_time) + INTERVAL 1 MICROSECOND AS VARCHAR) FROM traces")[0][0]
        late = emit(srv, "late")
        yield srv, early, late, between
    finally:
        srv.stop()


def _backlog_sql() -> str:
    """The backlog's statement as the store runs it: the bundled triage query counted."""
    return filled("live", "triage_backlog", body=load_query("triage").sql)


def _rows(srv: LiveServer, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    r = srv.http.post("/api/v1/sql", json={"sql": text, "params": params})
    assert r.status_code == 200, r.text
    body = r.json()
    return [dict(zip(body["columns"], row, strict=True)) for row in body["rows"]]


def test_live_page_figures_are_the_bundled_queries_over_the_whole_store(
    two_ages: tuple[LiveServer, dict[str, str], dict[str, str], str],
) -> None:
    srv, early, late, between = two_ages
    r = srv.http.get("/api/v1/ui/live", params={"since": between})
    assert r.status_code == 200, r.text
    page = r.json()
    params = {"since": between, "until": None, "service": None}
    health = load_query("online_health")
    assert page["health"] == _rows(srv, health.sql, health.bind(params))
    assert sum(h["traces"] for h in page["health"]) == 3  # the later three only
    assert page["causes"] == _rows(srv, filled("live", "causes"), params)
    assert {(c["service_name"], c["root_cause"]) for c in page["causes"]} >= {("shop", "unsupported_claims")}
    triage = load_query("triage")
    backlog = _rows(srv, _backlog_sql(), triage.bind({"since": between, "limit": 100_000}))
    assert page["backlog"] == backlog
    queue = _rows(srv, triage.sql, triage.bind({"since": between, "limit": 50}))
    assert [q["trace_id"] for q in page["queue"]] == [q["trace_id"] for q in queue]
    assert page["queue"][0]["trace_id"] == late["wrong"] and early["wrong"] not in str(page["queue"])
    assert page["backlog_capped"] is False


def test_the_page_read_in_parts_at_once_is_the_page_read_on_one_cursor(
    two_ages: tuple[LiveServer, dict[str, str], dict[str, str], str],
) -> None:
    """The server reads the page's parts at once, each on a cursor of its own; the answer is the one
    ``live_page`` composes on one cursor, part after part, for the default window and a given one. A
    window wider than the page shows is refused with what to do."""
    srv, _, _, between = two_ages
    for params in ({}, {"since": between}, {"since": between, "service": "shop"}):
        r = srv.http.get("/api/v1/ui/live", params=params)
        assert r.status_code == 200, r.text
        con = srv.runtime.store.cursor()
        try:
            since = datetime.fromisoformat(params["since"]) if "since" in params else None
            want = jsonable(live_page(con, since, None, params.get("service")))
        finally:
            con.close()
        assert list(r.json()) == list(want) and r.json() == want
        assert r.json()["health"] and r.json()["backlog"]
    wide = {"since": "2026-01-01T00:00:00", "until": "2026-03-01T00:00:00"}
    r = srv.http.get("/api/v1/ui/live", params=wide)
    assert r.status_code == 400 and "narrow from/to" in r.text


def _inside(srv: LiveServer, since: datetime) -> tuple[set[str], set[str], tuple[int, int]]:
    """Within ``window_reads``: the logged traces, and the live-attributed traces among them; and the
    verdict rows inside and after it. (``live_attribution`` reads the file's facts and the verdicts are
    not cut: both are the same inside and after.)"""
    con = srv.runtime.store.cursor()
    live = "SELECT trace_id FROM live_attribution"
    count = "SELECT count(*) FROM evaluations"
    try:
        with window_reads(con, since) as cut:
            assert cut.cut and cut.received_since is not None
            logged = {r[0] for r in con.execute("SELECT trace_id FROM eval_log").fetchall()}
            lives = {r[0] for r in con.execute(live).fetchall()}
            inside = con.execute(count).fetchall()[0][0]
        assert lives == {r[0] for r in con.execute(live).fetchall()}
        after = con.execute(count).fetchall()[0][0]
    finally:
        con.close()
    return logged, lives & logged, (inside, after)


def test_window_reads_hold_only_the_windows_traces(
    two_ages: tuple[LiveServer, dict[str, str], dict[str, str], str],
) -> None:
    srv, _, late, between = two_ages
    since = datetime.fromisoformat(between)
    everything = srv.sql("SELECT count(*) FROM evaluations")[0][0]
    ids = set(late.values())
    logged_all = {r[0] for r in srv.sql("SELECT DISTINCT trace_id FROM eval_log")}
    assert ids < logged_all
    assert _inside(srv, since) == (ids, ids, (everything, everything))


def test_the_backlog_gauge_counts_the_whole_queue_on_an_interval_of_its_own(
    two_ages: tuple[LiveServer, dict[str, str], dict[str, str], str],
) -> None:
    srv, early, _, _ = two_ages
    # the server's own gauges stop; these run on a clock the test moves, on the server's /metrics
    server_gauges = srv.runtime.find(LiveGauges)
    assert server_gauges is not None
    server_gauges.stop()
    clock = ManualClock()
    now = datetime.fromisoformat(srv.sql("SELECT CAST(max(start_time) AS VARCHAR) FROM traces")[0][0])
    gauges = LiveGauges(srv.runtime, now=lambda: now.replace(tzinfo=UTC), clock=clock)
    triage = load_query("triage")

    def queue() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        """The whole triage queue (no time bound) as the gauge's series."""
        rows = _rows(srv, _backlog_sql(), triage.bind({"limit": 100_000}))
        return {
            (
                "ragfault_triage_backlog_traces",
                (("reason", r["reason"]), ("service", r["service_name"])),
            ): float(r["traces"])
            for r in rows
        }

    def negative() -> float:
        return sum(
            by_service(scrape(srv, "ragfault_live_"), "ragfault_live_negative_feedback_traces").values()
        )

    assert gauges.round() == REFRESH_SECONDS  # the first round counts the backlog too
    before = queue()
    assert scrape(srv, "ragfault_triage_backlog_traces") == before and negative() == 2
    r = srv.http.post(
        "/api/v1/feedback", json={"trace_id": early["quiet"], "kind": "thumbs", "value": "down"}
    )
    assert r.status_code == 200 and r.json()["negative"] is True, r.text
    srv.drain()
    after = queue()
    assert after != before
    # a minute on: the hours' gauges see the thumbs down, the backlog keeps its last count
    clock.advance(REFRESH_SECONDS)
    gauges.round()
    assert negative() == 3 and scrape(srv, "ragfault_triage_backlog_traces") == before
    # once its own interval passed, the backlog is counted again: the whole queue, early traces too
    clock.advance(BACKLOG_REFRESH_SECONDS - REFRESH_SECONDS)
    gauges.round()
    assert scrape(srv, "ragfault_triage_backlog_traces") == after
    assert scrape(srv, "ragfault_triage_backlog_refresh_seconds")
    # the thread waits on the same clock, and stops
    gauges.start()
    clock.wait_for_waits(1)
    gauges.stop()
