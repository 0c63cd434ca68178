"""The triage screen's evidence, a table per failing layer (issue 41), and the registry search's
index: the evaluator's when it is current, else one of the UI's own that an idle server lets go."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluators.eval_input import KnowledgeBase
from evaluators.gold import KBDocument
from evaluators.service.scheduler import EvaluationService
from ragfault.ui.registry import RegistrySearch
from tests.clock import ManualClock
from tests.live.test_promote import WRONG
from tests.tracegen import rag_trace
from tests.ui.conftest import Page
from tests.ui.test_live import KB, Traffic, live_ui  # noqa: F401 (fixture)
from tests.waiting import wait_until

POLICY = {"id": "policy", "content": KB[0]["content"], "score": 0.4}
SHIPPING = {"id": "shipping", "content": KB[1]["content"], "score": 0.9}
REFUND_SHOES = "Are refunds accepted for shoes?"
GIFT = {"id": "gift", "content": "Gift cards never expire.", "score": 0.8}


class Dropped(Traffic):
    """``Traffic`` and a refusal whose reranker cut the one candidate that answers the question."""

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path)
        self.dropped = rag_trace(
            self.srv.tracer("desk"),
            query=REFUND_SHOES,
            answer="I'm sorry, I don't know.",
            candidates=[SHIPPING, POLICY],
            reranked=[SHIPPING],
        )
        self.srv.drain()


@pytest.fixture
def traffic(tmp_path: Path) -> Iterator[Dropped]:
    t = Dropped(tmp_path)
    try:
        yield t
    finally:
        t.srv.stop()


def tables(page: Any, layer: str) -> dict[str, list[dict[str, str]]]:
    """The evidence tables of one layer's section, by caption: each row as {column: cell text}."""
    return page.eval_on_selector(  # type: ignore[no-any-return]
        f"#layer-evidence section[data-layer='{layer}']",
        """s => Object.fromEntries([...s.querySelectorAll('table.evidence-rows')].map(t => {
            const keys = [...t.querySelectorAll('thead th')].map(h => h.textContent);
            return [t.dataset.list, [...t.querySelectorAll('tbody tr')].map(r =>
                Object.fromEntries([...r.cells].map((c, i) => [keys[i], c.textContent])))];
        }))""",
    )


def facts(page: Any, layer: str) -> dict[str, str]:
    return page.eval_on_selector(  # type: ignore[no-any-return]
        f"#layer-evidence section[data-layer='{layer}'] table.evidence-facts",
        "t => Object.fromEntries([...t.rows].map(r => [r.cells[0].textContent, r.cells[1].textContent]))",
    )


@pytest.mark.browser
def test_the_evidence_of_each_failing_layer_is_a_table_of_rows(live_ui: Page, traffic: Dropped) -> None:  # noqa: F811
    srv, ui = traffic.srv, live_ui
    live = srv.sql(
        "SELECT root_cause, failing_layers, evidence FROM live_attribution WHERE trace_id = $t",
        t=traffic.dropped,
    )
    assert live[0][0] == "dropped_before_context", live
    page = ui.open(f"triage/{traffic.dropped}", "triage")
    assert ui.overflow() <= 0
    sections = page.eval_on_selector_all("#layer-evidence section", "ss => ss.map(s => s.dataset.layer)")
    assert sections == live[0][1]  # one a failing layer, in attribution's order
    found = tables(page, "dropped_before_context")["found"]
    # the cut candidate, the step that cut it and what of the question it answers
    assert [(r["doc_id"], r["step"], r["via"], r["candidate_rank"]) for r in found] == [
        ("policy", "rerank_cut", "question", "2")
    ]
    assert found[0]["filled"] == "accept, refund"
    rerank = srv.sql(
        "SELECT span_id FROM steps WHERE trace_id = $t AND step_type = 'rerank'", t=traffic.dropped
    )
    assert found[0]["span_id"] == rerank[0][0]
    assert facts(page, "dropped_before_context")["cut"] == "1"
    assert "<pre" not in page.inner_html("#layer-evidence")  # rows, not formatted JSON
    # each candidate once, with the stages it was seen at (retrieved, read by the reranker, kept)
    cards = page.eval_on_selector_all(
        "#candidates .doc", "ds => ds.map(d => [d.dataset.doc, d.querySelector('[data-stages]').textContent])"
    )
    view = srv.http.get(f"/api/v1/traces/{traffic.dropped}/view").json()["documents"]
    stages = {
        d: sorted({x["stage"] for x in view if x["doc_id"] == d and x["stage"] != "context"})
        for d in ("shipping", "policy")
    }
    assert [c[0] for c in cards] == ["shipping", "policy"]
    assert {d: sorted(t.split(" · ")) for d, t in cards} == stages and len(stages["shipping"]) > 1

    # a wrong answer: the claim the context does not support, with its verdict, marked failing
    page = ui.open(f"triage/{traffic.wrong}", "triage")
    claims = tables(page, "unsupported_claims")["claims"]
    assert [(r["claim"], r["verdict"], r["sentence"]) for r in claims] == [
        (WRONG.rstrip("."), "unsupported", "—")
    ]
    assert facts(page, "unsupported_claims")["unsupported"] == "1"
    assert page.locator("section[data-layer=unsupported_claims] tr.fail").count() == len(claims) >= 1

    # a shape nobody foresaw is shown as it is (key/value, rows of any fields), escaped
    html = page.evaluate(
        """async () => { const m = await import('/ui/static/triage.js');
        const d = document.createElement('div');
        d.innerHTML = m.evidenceTables(['gremlins'], JSON.stringify({
          gremlins: {count: 2, note: '<img src=x onerror=alert(1)>', items: [{odd: 'a<b', n: 1.23456}, {other: true}]},
          extra_layer: 'plain text'}));
        return {imgs: d.querySelectorAll('img').length, text: d.textContent,
                layers: [...d.querySelectorAll('section')].map(s => s.dataset.layer),
                cols: [...d.querySelectorAll('table.evidence-rows th')].map(h => h.textContent)}; }"""
    )
    assert html["imgs"] == 0 and "<img src=x onerror=alert(1)>" in html["text"]
    assert html["layers"] == ["gremlins", "extra_layer"]
    assert html["cols"] == ["n", "odd", "other"] and "plain text" in html["text"] and "1.235" in html["text"]


def test_the_ui_searches_the_evaluators_index_when_it_is_current(traffic: Dropped) -> None:
    srv = traffic.srv
    search = srv.runtime.find(RegistrySearch)
    svc = srv.runtime.find(EvaluationService)
    assert search is not None and svc is not None
    r = srv.http.get("/api/v1/ui/registry", params={"q": "when do orders ship"})
    assert [h["doc_id"] for h in r.json()][:1] == ["shipping"]
    assert search.builds == 0 and search.held is None  # the evaluator's index, not a second one
    # a registry loaded after the last evaluation: the evaluator has not read it, the UI's own index
    # serves (the new document found at once)
    doc = {"doc_id": "gift", "title": "Gift cards", "content": "Gift cards never expire."}
    assert srv.http.post("/api/v1/kb", content=json.dumps(doc) + "\n").status_code == 200
    hits = srv.http.get("/api/v1/ui/registry", params={"q": "do gift cards expire"}).json()
    assert hits[0]["doc_id"] == "gift"
    assert search.builds == 1 and search.held is not None and search.held.get("gift") is not None
    # the next trace evaluated reads the new registry: the UI's own index goes at the next search
    rag_trace(srv.tracer("shop"), query="Do gift cards expire?", answer="Never.", candidates=[GIFT])
    srv.drain()
    hits = srv.http.get("/api/v1/ui/registry", params={"q": "do gift cards expire"}).json()
    assert hits[0]["doc_id"] == "gift" and search.held is None and search.builds == 1


def test_the_uis_own_index_is_released_after_an_idle_time() -> None:
    clock = ManualClock()
    search = RegistrySearch(clock=clock, idle_seconds=600)
    kb = KnowledgeBase([KBDocument(doc_id="a", content="Refunds within 30 days."), KBDocument(doc_id="b")])
    reg, index = search.index(kb, None)
    assert reg is kb and index.doc_ids == ["a"] and search.builds == 1
    clock.wait_for_waits(1)  # the releaser waits the idle time out
    clock.advance(400)
    assert search.index(kb, None)[1] is index and search.builds == 1  # kept while in use
    clock.tick(200)  # the first wait is over; the releaser waits the 400 s left since the last search
    assert search.held is kb
    clock.advance(400)
    wait_until(
        lambda: search.held, lambda held: held is None, what="the idle index to be released", timeout=60
    )
    # the next search builds it again; the evaluator's registry, when given, is never copied
    assert search.index(kb, None)[1] is not index and search.builds == 2
    other = KnowledgeBase([KBDocument(doc_id="c", content="Orders ship in two days.")])
    assert search.index(kb, other)[0] is other and search.builds == 2
