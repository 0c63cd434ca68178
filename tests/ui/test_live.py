"""Live traffic in the web UI and on /metrics (issue 41, parts 2 and 4): a thumbs-down trace found on
the live page, its bars leading to the traces they count, triage to a saved gold case that the next
``ragfault gate`` holds; and the live figures as Prometheus gauges of a real server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ragfault.cli import main
from ragfault.ui.live import LiveGauges
from tests.live.conftest import DOCS, LiveServer
from tests.live.test_promote import RULES, SHOES, WRONG
from tests.tracegen import rag_trace
from tests.ui.conftest import Page, strict_csp

NO_SAMPLE = "[sampling]\nproduction_rate = 0.0\n"
KB = [
    {
        "doc_id": "policy",
        "title": "Refund policy",
        "content": "Refunds are accepted within 30 days of purchase.",
    },
    {"doc_id": "shipping", "title": "Shipping", "content": "Orders ship within two working days."},
]


class Traffic:
    """A server with a knowledge base and live traces of two services: ``wrong`` (a thumbs-down),
    ``quiet`` (nothing wrong seen) in shop, ``bare`` (no retrieval) in chat."""

    def __init__(self, tmp_path: Path) -> None:
        self.srv = srv = LiveServer(tmp_path, NO_SAMPLE)
        r = srv.http.post("/api/v1/kb", content="".join(json.dumps(d) + "\n" for d in KB))
        assert r.status_code == 200, r.text
        shop = srv.tracer("shop")
        self.wrong = rag_trace(shop, query=SHOES, answer=WRONG, candidates=DOCS)
        self.quiet = rag_trace(
            shop, query="What colours do the shoes come in?", answer="Red.", candidates=DOCS
        )
        self.bare = rag_trace(srv.tracer("chat"), query="Hello there?", answer="Hi!", retrieve=False)
        srv.drain()
        r = srv.http.post(
            "/api/v1/feedback", json={"trace_id": self.wrong, "kind": "thumbs", "value": "down"}
        )
        assert r.status_code == 200 and r.json()["negative"] is True, r.text
        srv.drain()


@pytest.fixture
def traffic(tmp_path: Path) -> Iterator[Traffic]:
    t = Traffic(tmp_path)
    try:
        yield t
    finally:
        t.srv.stop()


@pytest.fixture
def live_ui(browser: Any, traffic: Traffic) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB", timezone_id="UTC")
    strict_csp(context, traffic.srv.url)
    p = Page(context.new_page(), traffic.srv.url)
    try:
        yield p
        assert p.unexpected_errors() == [], p.errors
    finally:
        context.close()


def listed(page: Any) -> list[str]:
    return page.eval_on_selector_all("main tbody tr[data-trace]", "rs => rs.map(r => r.dataset.trace)")


def bar(page: Any, card: str, key: str) -> Any:
    """The one bar (a link) of ``key`` in a chart card."""
    links = page.locator(f"#{card} svg a[data-key='{key}']")
    assert links.count() == 1, (card, key, links.count())
    return links.first


@pytest.mark.browser
def test_thumbs_down_on_the_live_page_to_a_gold_case_the_gate_holds(
    live_ui: Page, traffic: Traffic, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    srv, ui = traffic.srv, live_ui
    page = ui.open("live", "live")
    assert ui.overflow() <= 0  # readable at 1,280 px
    # each bar counts what the trace list it links to lists
    fb = bar(page, "feedback-card", "shop")
    assert fb.get_attribute("data-n") == "1"
    ui.after(fb.click, "traces")
    assert listed(page) == [traffic.wrong]
    assert page.locator("#filters [data-flag=negative_feedback]").count() == 1
    page = ui.open("live", "live")
    volume = bar(page, "volume-card", "shop")
    assert volume.get_attribute("data-n") == "2"
    ui.after(volume.click, "traces")
    assert sorted(listed(page)) == sorted([traffic.wrong, traffic.quiet])
    page = ui.open("live", "live")
    causes = {
        (s, c): n
        for s, c, n in srv.sql("SELECT service_name, root_cause, count(*) FROM live_attribution GROUP BY ALL")
    }
    assert causes[("shop", "unsupported_claims")] == 1
    cause = page.locator("#causes-card [data-service=shop] svg a[data-key=unsupported_claims]")
    assert cause.get_attribute("data-n") == "1"
    ui.after(cause.click, "traces")
    assert listed(page) == [traffic.wrong]
    assert page.eval_on_selector("#filters select[name=live_cause]", "s => s.value") == "unsupported_claims"

    # the backlog on the live page leads to the trace's triage screen
    page = ui.open("live", "live")
    assert traffic.wrong in page.eval_on_selector_all(
        "#backlog tr[data-trace]", "rs => rs.map(r => r.dataset.trace)"
    )
    ui.after(lambda: page.click(f"#backlog tr[data-trace='{traffic.wrong}'] a"), "triage")
    assert page.inner_text("#question") == SHOES and page.inner_text("#answer") == WRONG
    assert ui.overflow() <= 0
    assert "thumbs down 1" in page.inner_text("#feedback")
    assert page.get_attribute("#suspected [data-cause]", "data-cause") == "unsupported_claims"
    assert page.eval_on_selector("#promote-form select[name=cause]", "s => s.value") == "unsupported_claims"
    assert "policy" in page.inner_text("#candidates") and "policy" in page.inner_text("#context")
    hits = page.eval_on_selector_all("#registry-hits .doc", "ds => ds.map(d => d.dataset.doc)")
    assert hits[0] == "policy"
    # a search of the reviewer's own words
    page.fill("#registry-form input[name=q]", "when do orders ship")
    page.click("#registry-form button")
    page.wait_for_function("() => document.querySelector('#registry-hits .doc')?.dataset.doc === 'shipping'")

    # the evidence: a quote selected in a candidate, then the registry's policy document as is
    page.evaluate(
        """() => { const t = document.querySelector('#candidates .doc[data-doc=policy] .text').firstChild;
        const at = t.data.indexOf('within 30 days'); const r = document.createRange();
        r.setStart(t, at); r.setEnd(t, at + 'within 30 days of purchase'.length);
        const s = getSelection(); s.removeAllRanges(); s.addRange(r); }"""
    )
    page.click("#candidates .doc[data-doc=policy] button.use")
    quotes = page.eval_on_selector_all("#evidence input[name=quote]", "is => is.map(i => i.value)")
    assert quotes == ["within 30 days of purchase"]
    page.fill("#registry-form input[name=q]", SHOES)
    page.click("#registry-form button")
    page.wait_for_function("() => document.querySelector('#registry-hits .doc')?.dataset.doc === 'policy'")
    page.evaluate("() => getSelection().removeAllRanges()")
    page.click("#registry-hits .doc[data-doc=shipping] button.use")
    assert page.locator("#evidence tr").count() == 2
    page.click("#evidence tr:nth-child(2) button.remove")  # not the evidence after all
    assert page.locator("#evidence tr").count() == 1
    page.fill("#promote-form textarea[name=facts]", "30 days\n")
    page.fill("#promote-form input[name=user]", "reviewer@example.com")
    page.click("#promote-form button[type=submit]")
    page.wait_for_selector("#saved-case")
    case_id = page.inner_text("#saved-case")
    assert case_id == f"live-{traffic.wrong[:16]}"

    assert srv.sql(
        "SELECT trace_id, cause, suggested_cause, promoted_by FROM gold_promotions WHERE case_id = $c",
        c=case_id,
    ) == [[traffic.wrong, "unsupported_claims", "unsupported_claims", "reviewer@example.com"]]
    raw = json.loads(srv.scalar("SELECT raw FROM gold_cases WHERE case_id = $c", c=case_id))
    assert [(e["doc_id"], e["quote"]) for e in raw["evidence"]] == [("policy", "within 30 days of purchase")]
    assert [f["text"] for f in raw["required_facts"]] == ["30 days"] and raw["query"] == SHOES
    assert srv.sql("SELECT case_id FROM attribution WHERE trace_id = $t", t=traffic.wrong) == [[case_id]]
    # out of the backlog; the triage screen says it was promoted
    page = ui.open("live", "live")
    assert traffic.wrong not in page.eval_on_selector_all(
        "#backlog tr[data-trace]", "rs => rs.map(r => r.dataset.trace)"
    )
    page = ui.open(f"triage/{traffic.wrong}", "triage")
    assert case_id in page.inner_text("#promoted")

    # the next gate run holds the promoted case: the wrong answer fails it
    rules = tmp_path / "gates.toml"
    rules.write_text(RULES, encoding="utf-8")
    code = main(["gate", "--rules", str(rules), "--server", srv.url])
    text = capsys.readouterr().out
    assert code == 1, text
    assert re.search(r"^PASS +promoted cases evaluated", text, re.M), text
    assert re.search(r"^FAIL +every promoted case passes +0 +0/1", text, re.M), text


@pytest.mark.browser
def test_triage_queue_is_the_apis_and_saves_a_refusal_case(live_ui: Page, traffic: Traffic) -> None:
    ui = live_ui
    page = ui.open("triage", "triage")
    queue = page.eval_on_selector_all("#queue tr[data-trace]", "rs => rs.map(r => r.dataset.trace)")
    api = traffic.srv.http.get("/api/v1/triage", params={"limit": 200}).json()["items"]
    assert queue == [i["trace_id"] for i in api] and queue[0] == traffic.wrong
    ui.after(lambda: page.click(f"#queue tr[data-trace='{traffic.bare}'] a"), "triage")
    assert "No candidate recorded" in page.inner_text("#candidates")
    # no cause suggested (nothing wrong seen): the reviewer must choose one before saving
    assert page.eval_on_selector("#promote-form select[name=cause]", "s => s.value") == ""
    page.fill("#promote-form input[name=user]", "r")
    page.click("#promote-form button[type=submit]")
    assert page.eval_on_selector("#promote-form select[name=cause]", "s => !s.validity.valid")
    assert traffic.srv.sql("SELECT count(*) FROM gold_promotions") == [[0]]
    page.select_option("#promote-form select[name=cause]", "ok")
    page.select_option("#promote-form select[name=expected_behavior]", "clarify")
    page.click("#promote-form button[type=submit]")
    page.wait_for_selector("#saved-case")
    assert traffic.srv.sql(
        "SELECT cause, promoted_by FROM gold_promotions WHERE trace_id = $t", t=traffic.bare
    ) == [["ok", "r"]]
    raw = json.loads(
        traffic.srv.scalar("SELECT raw FROM gold_cases WHERE case_id = $c", c=f"live-{traffic.bare[:16]}")
    )
    assert raw["expected_behavior"] == "clarify" and raw["evidence"] == [] and raw["required_facts"] == []


# --- gauges ----------------------------------------------------------------------------------

SAMPLE = re.compile(r"^(?P<name>[a-z_0-9]+)(?:\{(?P<labels>.*)\})? (?P<value>\S+)$")
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def scrape(srv: LiveServer, prefix: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The samples of /metrics whose name starts with ``prefix`` (every line must parse)."""
    r = srv.http.get("/metrics")
    assert r.status_code == 200
    out = {}
    for line in r.text.splitlines():
        if line.startswith("#") or not line.startswith(prefix):
            continue
        m = SAMPLE.match(line)
        assert m, line
        labels = tuple(sorted((k, v.replace('\\"', '"')) for k, v in LABEL.findall(m["labels"] or "")))
        out[(m["name"], labels)] = float(m["value"])
    return out


def by_service(got: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str) -> dict[str, float]:
    """A gauge's values summed over the hour label, by service (the traffic may straddle an hour)."""
    out: dict[str, float] = {}
    for (n, labels), v in got.items():
        if n == name:
            service = dict(labels)["service"]
            out[service] = out.get(service, 0.0) + v
    return out


def test_live_gauges_on_metrics(traffic: Traffic) -> None:
    srv = traffic.srv
    gauges = srv.runtime.find(LiveGauges)
    # a service name a client chose, quote and all, stays one label value
    odd = rag_trace(
        srv.tracer('desk "east"'), query="Where is my parcel?", answer="On its way.", candidates=DOCS
    )
    srv.drain()
    # the gauges' clock: the time of the last trace (the hours are read from it, not from the machine)
    starts = {
        t: datetime.fromisoformat(v)
        for t, v in srv.sql("SELECT trace_id, CAST(start_time AS VARCHAR) FROM traces")
    }
    now = max(starts.values()).replace(tzinfo=UTC)
    gauges.now = lambda: now
    gauges.refresh()
    got = scrape(srv, "ragfault_live_")
    assert by_service(got, "ragfault_live_traces") == {"shop": 2, "chat": 1, 'desk "east"': 1}
    assert by_service(got, "ragfault_live_negative_feedback_traces") == {
        "shop": 1,
        "chat": 0,
        'desk "east"': 0,
    }
    assert by_service(got, "ragfault_live_thumbs_down")["shop"] == 1
    skipped = by_service(got, "ragfault_live_retrieval_skipped_rate")
    assert skipped["chat"] == 1 and skipped["shop"] == 0
    # chat retrieved nothing: its empty-retrieval rate has no denominator, so no series (not 0)
    empty = by_service(got, "ragfault_live_empty_retrieval_rate")
    assert "chat" not in empty and empty["shop"] == 0
    expected = {
        (s, c): float(n)
        for s, c, n in srv.sql("SELECT service_name, root_cause, count(*) FROM live_attribution GROUP BY ALL")
    }
    causes: dict[tuple[str, str], float] = {}
    for (name, labels), v in got.items():
        if name == "ragfault_live_root_cause_traces":
            key = (dict(labels)["service"], dict(labels)["root_cause"])
            causes[key] = causes.get(key, 0.0) + v
    assert causes == expected and causes[("shop", "unsupported_claims")] == 1
    backlog = {
        (dict(k[1])["service"], dict(k[1])["reason"]): v
        for k, v in scrape(srv, "ragfault_triage_backlog_traces").items()
    }
    queue = srv.http.get("/api/v1/triage", params={"limit": 1000, "search": False}).json()["items"]
    want: dict[tuple[str, str], float] = {}
    for item in queue:
        for reason in item["reasons"]:
            want[(item["service_name"], reason)] = want.get((item["service_name"], reason), 0) + 1
    assert backlog == want and backlog[("shop", "negative_feedback")] == 1
    assert (odd in {i["trace_id"] for i in queue}) == (('desk "east"', "trigger") in backlog)

    # an hour later the traces of the last one are the previous hour's; three hours later no live
    # series is left (a service gone quiet leaves no stale value)
    gauges.now = lambda: now + timedelta(hours=1)
    gauges.refresh()
    got = scrape(srv, "ragfault_live_")
    assert not any(dict(k[1]).get("hour") == "current" for k in got)
    hour = now.replace(minute=0, second=0, microsecond=0, tzinfo=None)
    in_hour = sum(1 for t in starts.values() if t.replace(minute=0, second=0, microsecond=0) == hour)
    previous = sum(v for (n, labels), v in got.items() if n == "ragfault_live_traces")
    assert previous == in_hour >= 1
    gauges.now = lambda: now + timedelta(hours=3)
    gauges.refresh()
    got = scrape(srv, "ragfault_live_")
    assert {k[0] for k in got} == {
        "ragfault_live_gauges_refresh_seconds",
        "ragfault_live_gauges_failures_total",
    }
    assert got[("ragfault_live_gauges_failures_total", ())] == 0
    # the queue does not age out: it is the backlog until someone looks
    assert scrape(srv, "ragfault_triage_backlog_traces") == {
        ("ragfault_triage_backlog_traces", (("reason", r), ("service", s))): v for (s, r), v in want.items()
    }


def test_live_routes_refuse_bad_input_clearly(server: Any) -> None:
    http = server.http
    wide = http.get(
        "/api/v1/ui/live", params={"since": "2026-01-01T00:00:00", "until": "2026-06-01T00:00:00"}
    )
    assert wide.status_code == 400 and "at most 744 hours" in wide.json()["detail"]
    assert http.get("/api/v1/ui/live", params={"since": "yesterday"}).status_code == 422
    bad = http.get("/api/v1/ui/traces", params={"live_cause": "gremlins"})
    assert bad.status_code == 400 and "none_seen" in bad.json()["detail"]
    assert http.get("/api/v1/ui/registry", params={"q": "refund", "k": 0}).status_code == 400
    # an empty database: nothing to draw, nothing to search, no error
    empty = http.get("/api/v1/ui/live").json()
    assert empty["health"] == [] and empty["causes"] == [] and empty["queue"] == [] and empty["since"] is None
    assert http.get("/api/v1/ui/registry", params={"q": "refund"}).json() == []
    item = http.get("/api/v1/ui/triage/item", params={"trace_id": "ab" * 16}).json()
    assert item == {"live": None, "feedback": None, "promoted": None, "case": None}
