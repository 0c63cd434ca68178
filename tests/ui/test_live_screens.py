"""The live traffic the docs' Live and Triage screenshots are taken on (``tests/ui/live_data.py``,
``docs/screenshots.py``): what live attribution finds in it, and the two pages drawn from it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.attribution.conftest import wait_evaluated
from tests.conftest import Server, make_settings
from tests.ui.conftest import Page, strict_csp
from tests.ui.live_data import SERVICES, THUMBS_DOWN, send_feedback, send_live_traffic

# planted causes the trace and the registry prove without a gold case (the rest need a reference)
PROVEN = ("permission_violation", "no_retrieval", "stale_context", "dropped_before_context", "over_refusal",
          "unsupported_claims", "invalid_citation")  # fmt: skip


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    srv = Server(make_settings(tmp_path_factory.mktemp("live-screens")))
    try:
        ids = send_live_traffic(srv.url)
        wait_evaluated(srv, list(ids.values()), timeout=90)
        send_feedback(srv.url, ids)
        yield srv, ids
    finally:
        srv.stop()


def test_the_seeded_traffic_shows_the_planted_causes(seeded: tuple[Server, dict[str, str]]) -> None:
    srv, ids = seeded
    got = {t: c for t, c in srv.sql("SELECT trace_id, root_cause FROM live_attribution")}
    assert len(got) == len(ids)  # every trace is live traffic
    for cause in PROVEN:
        assert got[ids[f"en/{cause}"]] == cause, cause
    assert got[ids["en/ok"]] == got[ids["zh/ok"]] == "none_seen"
    services = {s for (s,) in srv.sql("SELECT DISTINCT service_name FROM live_attribution")}
    assert services == set(SERVICES.values())
    down = {t for (t,) in srv.sql("SELECT trace_id FROM trace_feedback WHERE thumbs_down > 0")}
    assert down == {ids[k] for k in THUMBS_DOWN}


@pytest.mark.browser
def test_the_live_page_and_a_triage_screen_draw_it(
    browser: Any, seeded: tuple[Server, dict[str, str]]
) -> None:
    srv, ids = seeded
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB", timezone_id="UTC")
    strict_csp(context, srv.url)
    ui = Page(context.new_page(), srv.url)
    try:
        page = ui.open("live", "live")
        assert ui.overflow() <= 0
        drawn = page.eval_on_selector_all("#causes-card svg a[data-key]", "as => as.map(a => a.dataset.key)")
        assert set(PROVEN) <= set(drawn)
        backlog = page.eval_on_selector_all("#backlog tr[data-trace]", "rs => rs.map(r => r.dataset.trace)")
        assert backlog[: len(THUMBS_DOWN)] and set(backlog[: len(THUMBS_DOWN)]) == {
            ids[k] for k in THUMBS_DOWN
        }
        page = ui.open(f"triage/{ids['en/dropped_before_context']}", "triage")
        assert ui.overflow() <= 0
        cut = page.eval_on_selector_all(
            "section[data-layer=dropped_before_context] table[data-list=found] tbody tr",
            "rs => rs.map(r => r.cells[0].textContent)",
        )
        assert cut == ["retry-v2"]
        assert ui.unexpected_errors() == [], ui.errors
    finally:
        context.close()
