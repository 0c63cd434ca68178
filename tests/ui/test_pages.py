"""The web UI in a real browser (Debian's chromium through Playwright) against a real server holding
the demo's two runs: what a user clicks, what the page then shows, and what the database then holds."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server
from tests.ui.conftest import CSP, RUN2, Page, strict_csp

pytestmark = pytest.mark.browser

ROUTES = (
    "dashboard", "traces", "live", "triage", "compare", "review", "calibration", "coverage", "sql", "start",
)  # fmt: skip


def case_rows(page: Any) -> list[dict[str, str]]:
    return page.eval_on_selector_all(
        "#cases tbody tr[data-trace]",
        "rs => rs.map(r => ({trace: r.dataset.trace, cause: r.cells[0].innerText.trim(), case: r.cells[1].innerText.trim()}))",
    )


def test_root_cause_of_a_failing_trace_in_three_clicks(ui: Page, ui_server: Server) -> None:
    page = ui.open("dashboard", "dashboard")
    # click 1: the run (the dashboard opens on every run)
    page.select_option("#filters select[name=run_id]", "demo-v1")
    ui.after(lambda: page.click("#filters button[type=submit]"), "dashboard")
    # click 2: the root cause's bar filters the case table to it
    ui.after(lambda: page.click("button.cause[data-cause=dropped_before_context]"), "dashboard")
    rows = case_rows(page)
    expected = ui_server.sql(
        "SELECT case_id FROM attribution WHERE run_id = 'demo-v1' AND root_cause = 'dropped_before_context' ORDER BY 1"
    )
    assert sorted(r["case"] for r in rows) == [r[0] for r in expected] == ["api-rate-limit"]
    assert page.get_attribute("button.cause[data-cause=dropped_before_context]", "aria-pressed") == "true"
    # click 3: the case opens its trace, which says what dropped the evidence and where
    ui.after(lambda: page.click("#cases tbody tr[data-trace] a"), "trace")
    assert "dropped_before_context" in page.inner_text("#root-cause")
    why = page.inner_text("#why")
    assert "Evidence dropped before the context" in why and "dropped by rerank_cut" in why
    assert "api-limits" in why


def test_bars_are_coloured_by_cause_and_ok_stands_apart(ui: Page) -> None:
    page = ui.open("dashboard?run_id=demo-v1", "dashboard")
    colours = page.eval_on_selector_all(
        "#causes-card .fill", "fs => fs.map(f => getComputedStyle(f).backgroundColor)"
    )
    causes = page.eval_on_selector_all("#causes-card button.cause", "bs => bs.map(b => b.dataset.cause)")
    assert causes[-1] == "ok" and len(set(colours)) == len(colours) == len(causes) >= 5
    # every bar says its count and the denominator
    assert "of 17" in page.inner_text("#causes-card")


def test_filters_sort_and_search_narrow_the_case_table(ui: Page, ui_server: Server) -> None:
    page = ui.open("dashboard", "dashboard")
    total = ui_server.scalar("SELECT count(*) FROM attribution")
    assert page.inner_text("[data-role=case-total]") == f"{total} cases"
    page.fill("#case-filter input[name=q]", "年度会员")
    ui.after(lambda: page.click("#case-filter button[type=submit]"), "dashboard")
    rows = case_rows(page)
    want = ui_server.sql("SELECT trace_id FROM attribution WHERE contains(query_text, '年度会员') ORDER BY 1")
    assert sorted(r["trace"] for r in rows) == [r[0] for r in want] and 0 < len(rows) < total
    assert page.inner_text("[data-role=case-total]") == f"{len(want)} cases"
    # the CJK question is drawn with glyphs: two different characters do not render as the same box
    assert "年度会员" in page.inner_text("#cases")
    assert page.evaluate(
        """() => { const c = document.createElement('canvas'); c.width = 40; c.height = 40; const x = c.getContext('2d');
        const font = getComputedStyle(document.body).fontFamily; const draw = (ch) => { x.clearRect(0, 0, 40, 40);
        x.font = '30px ' + font; x.fillText(ch, 2, 32); return Array.from(x.getImageData(0, 0, 40, 40).data).join(); };
        return draw('年') !== draw('会'); }"""
    )
    # sorting is done by the server: case id descending
    page.fill("#case-filter input[name=q]", "")
    ui.after(lambda: page.click("#case-filter button[type=submit]"), "dashboard")
    ui.after(lambda: page.click("button.sort[data-sort=case_id]"), "dashboard")
    ui.after(lambda: page.click("button.sort[data-sort=case_id]"), "dashboard")
    ids = [r["case"] for r in case_rows(page)]
    assert ids == sorted(ids, reverse=True) and len(ids) == 25  # one page of the 34 cases


def test_case_table_pages_on_the_server(ui: Page, ui_server: Server) -> None:
    page = ui.open("dashboard?sort=case_id", "dashboard")
    total = ui_server.scalar("SELECT count(*) FROM attribution")
    first = case_rows(page)
    ui.after(lambda: page.click("#cases .pager button[data-p=next]"), "dashboard")
    second = case_rows(page)
    assert len(first) == 25 and len(second) == total - 25
    assert not {r["trace"] for r in first} & {r["trace"] for r in second}
    assert page.inner_text("#cases [data-role=range]") == f"26–{total} of {total}"


def test_trace_list_pages_to_the_oldest_trace(ui: Page, ui_server: Server) -> None:
    page = ui.open("traces?limit=10", "traces")
    total = ui_server.scalar("SELECT count(*) FROM traces")
    assert f"{total} traces" in page.inner_text("main")
    ui.after(lambda: page.click("main .pager button[data-p=last]"), "traces")
    links = page.eval_on_selector_all("main tbody tr a", "as => as.map(a => a.getAttribute('href'))")
    oldest = ui_server.scalar("SELECT trace_id FROM traces ORDER BY start_time ASC, trace_id DESC LIMIT 1")
    assert links[-1] == f"#/trace/{oldest}"
    last_from = (total - 1) // 10 * 10 + 1
    assert page.inner_text("main [data-role=range]") == f"{last_from}–{total} of {total}"
    # the columns a bad trace is spotted by: root cause, latency, tokens, run, time in the reader's zone
    head = page.inner_text("main thead")
    for col in ("root cause", "latency", "tokens", "run", "time"):
        assert col in head
    assert "GMT+9" in page.inner_text("main tbody tr:first-child td:first-child")  # Asia/Tokyo


def test_trace_list_filters(ui: Page, ui_server: Server) -> None:
    page = ui.open("traces", "traces")
    page.select_option("#filters select[name=root_cause]", "stale_context")
    page.select_option("#filters select[name=run_id]", RUN2)
    ui.after(lambda: page.click("#filters button[type=submit]"), "traces")
    shown = page.eval_on_selector_all("main tbody tr a", "as => as.map(a => a.getAttribute('href').slice(8))")
    want = ui_server.sql(
        f"SELECT trace_id FROM attribution WHERE root_cause = 'stale_context' AND run_id = '{RUN2}' ORDER BY 1"
    )
    assert sorted(shown) == [r[0] for r in want] and len(want) == 2
    page.select_option("#filters select[name=root_cause]", "")
    page.select_option("#filters select[name=run_id]", "")
    page.fill("#filters input[name=q]", "SAML")  # text search covers the answer too
    ui.after(lambda: page.click("#filters button[type=submit]"), "traces")
    n = ui_server.scalar(
        "SELECT count(*) FROM traces WHERE contains(lower(query_text), 'saml') OR contains(lower(answer_text), 'saml')"
    )
    assert f"{n} traces" in page.inner_text("main") and n > 0


def test_trace_view_puts_failing_verdicts_first_and_rounds(ui: Page, ui_server: Server) -> None:
    tid = ui_server.scalar(
        "SELECT trace_id FROM attribution WHERE case_id = 'api-rate-limit' AND run_id = 'demo-v1'"
    )
    page = ui.open(f"trace/{tid}", "trace")
    for table in ("#verdicts-trace", "#verdicts-step"):
        outcomes = page.eval_on_selector_all(
            f"{table} tbody tr", "rs => rs.map(r => r.cells[0].innerText.trim())"
        )
        assert outcomes, table
        failed = [o == "failed" for o in outcomes]
        assert failed == sorted(failed, reverse=True)  # every failure before any other verdict
    assert page.eval_on_selector_all("#verdicts-trace tbody tr.fail", "rs => rs.length") >= 2
    n_trace = ui_server.scalar(
        f"SELECT count(*) FROM evaluations WHERE trace_id = '{tid}' AND span_id IS NULL"
    )
    assert page.eval_on_selector_all("#verdicts-trace tbody tr", "rs => rs.length") == n_trace
    text = page.inner_text("#verdicts-trace") + page.inner_text("#verdicts-step")
    assert not re.search(r"\d\.\d{4,}", text)  # no 0.43067655807339306/1
    # the claims with their verdict and the context sentence behind it
    claims = page.inner_text("#why")
    assert "Claims of the answer" in claims and "The API allows 1000 requests per minute" in claims


def test_sql_console(ui: Page, ui_server: Server) -> None:
    page = ui.open("sql", "sql")
    page.wait_for_selector("#status:has-text('row')")
    page.fill("#sql", "SELECT case_id FROM attribution WHERE run_id = 'demo-v1' ORDER BY case_id")
    page.click("#run")
    page.wait_for_selector("#status:has-text('17 rows in')")
    with page.expect_download() as dl:
        page.click("#csv")
    body = Path(dl.value.path()).read_text(encoding="utf-8").splitlines()
    assert body[0] == "case_id" and len(body) == 18
    ui.allow("status of 400")  # the refused query's response, which the browser logs
    page.fill("#sql", "SELECT case_idd FROM attribution")
    page.press("#sql", "Control+Enter")
    err = page.wait_for_selector("#sql-error")
    text = err.inner_text()
    assert "case_idd" in text and "^" in text
    assert "monospace" in page.eval_on_selector("#sql-error", "e => getComputedStyle(e).fontFamily")
    # the caret sits under the column it points at: the lines keep their spaces
    lines = text.splitlines()
    caret = next(i for i, line in enumerate(lines) if line.strip() and set(line.strip()) == {"^"})
    assert lines[caret - 1][lines[caret].index("^") :].startswith("case_idd")
    # a saved query one click away
    page.fill("#sql", "SELECT 42 AS answer")
    page.fill("#save-name", "the answer")
    page.click("#save")
    page.fill("#sql", "SELECT 1")
    page.click("#saved button[data-s]:has-text('the answer')")
    page.wait_for_selector("#status:has-text('1 row in')")
    assert page.input_value("#sql") == "SELECT 42 AS answer" and page.inner_text("#out tbody") == "42"
    # a bundled query one click away
    page.click("button[data-b]:has-text('root_causes')")
    page.wait_for_selector("#out thead:has-text('run_traces')")
    assert "root_causes" in page.input_value("#sql")


def test_compare_runs(ui: Page, ui_server: Server) -> None:
    page = ui.open(f"compare?base=demo-v1&new={RUN2}", "compare")
    regressed, fixed = page.inner_text("#cases-regressed"), page.inner_text("#cases-fixed")
    assert "retry-wait" in regressed and "api-rate-limit" in fixed
    links = page.eval_on_selector_all("#cases-fixed a", "as => as.map(a => a.getAttribute('href'))")
    ids = ui_server.sql(
        f"SELECT run_id, trace_id FROM attribution WHERE case_id = 'api-rate-limit' AND run_id IN ('demo-v1', '{RUN2}') "
        "ORDER BY run_id"
    )
    assert links == [f"#/trace/{ids[0][1]}", f"#/trace/{ids[1][1]}"]
    # the metrics are `ragfault compare`'s (GET /api/v1/compare): value, paired delta and interval
    import httpx

    stats = httpx.get(
        f"{ui_server.url}/api/v1/compare", params={"run": RUN2, "baseline": "demo-v1"}, timeout=60
    ).json()

    def signed(v: float | None) -> str:
        return "n/a" if v is None else ("+" if v > 0 else "") + f"{round(v, 3):g}"

    def shown(slice_: str) -> list[tuple[str, str, str, str]]:
        rows = page.eval_on_selector_all(
            f'#metrics tr[data-slice="{slice_}"]',
            "rs => rs.map(r => [r.dataset.metric, r.querySelector('[data-role=delta]').textContent, "
            "r.querySelector('[data-role=ci]').textContent, r.querySelector('[data-role=n]').textContent])",
        )
        return [tuple(r) for r in rows]

    def expected(category: str | None) -> list[tuple[str, str, str, str]]:
        return [
            (m["metric"], signed(m["delta"]),
             "n/a" if m["ci_low"] is None else f"[{signed(m['ci_low'])}, {signed(m['ci_high'])}]", str(m["n"]))
            for m in stats["metrics"] if m["category"] == category
        ]  # fmt: skip

    assert shown("(all)") == expected(None) and len(expected(None)) >= 5
    retention = next(
        m for m in stats["metrics"] if m["metric"] == "context_retention" and m["category"] is None
    )
    cell = page.inner_text("#metrics tr[data-metric=context_retention] td:nth-child(2)")
    assert f"{retention['baseline_cases']} cases" in cell
    assert page.inner_text("[data-role=mcnemar]") == f"{round(stats['cases']['mcnemar_p'], 3):g}"
    # another slice: the same rows as the API's for that category
    category = next(m["category"] for m in stats["metrics"] if m["category"] is not None)
    ui.after(lambda: page.select_option("#slice", category), "compare")
    page.wait_for_selector(f'#metrics tr[data-slice="{category}"]')
    assert shown(category) == expected(category)
    assert ui.overflow() <= 0


def test_coverage_page_shows_each_gap_with_the_api_fix(ui: Page, ui_server: Server) -> None:
    import httpx

    report = httpx.get(f"{ui_server.url}/api/v1/coverage", timeout=30).json()
    page = ui.open("dashboard", "dashboard")
    ui.after(lambda: page.click("nav a[data-nav=coverage]"), "coverage")
    assert page.get_attribute("nav a[data-nav=coverage]", "class") == "on"
    assert ui.overflow() <= 0
    groups = page.eval_on_selector_all(
        "section.cov-group", "gs => gs.map(g => [g.dataset.service, g.dataset.convention])"
    )
    assert groups == [[g["service_name"], g["convention"]] for g in report["groups"]]
    gaps = [(g, f) for g in report["groups"] for f in g["fields"] if f["status"] == "gap"]
    assert gaps, report  # the demo's traces have gaps (e.g. the traces without a gold case lack case_id)
    for g, f in gaps:
        sel = f'section.cov-group[data-service="{g["service_name"]}"][data-convention="{g["convention"]}"] tr[data-field="{f["field"]}"]'
        assert page.get_attribute(sel, "data-status") == "gap" and "fail" in page.get_attribute(sel, "class")
        # the fix shown is the API's, its `code` spans set as code
        shown = page.inner_text(f"{sel} [data-role=fix]")
        assert shown == f["fix"].replace("`", "") and shown
        codes = page.eval_on_selector_all(f"{sel} [data-role=fix] code", "cs => cs.map(c => c.textContent)")
        assert codes == f["fix"].split("`")[1::2]
        pct = round(100 * f["carried"] / f["denominator"], 1)
        assert page.inner_text(f"{sel} [data-role=share]") == f"{pct:g} % ({f['carried']}/{f['denominator']})"
    # a field with an empty denominator reads n/a, never 0 % or 100 %; an ok field has no fix
    for g in report["groups"]:
        for f in g["fields"]:
            sel = f'section.cov-group[data-service="{g["service_name"]}"][data-convention="{g["convention"]}"] tr[data-field="{f["field"]}"]'
            share = page.inner_text(f"{sel} [data-role=share]")
            if f["status"] == "not_applicable":
                assert share == "n/a (0/0)"
            if f["status"] != "gap":
                assert page.inner_text(f"{sel} [data-role=fix]") == ""
    # keyboard: Tab reaches a group's link in the summary, Enter moves focus to that group
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("!!document.activeElement.dataset.goto"):
            break
    target = page.evaluate("document.activeElement.dataset.goto")
    assert target
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == target


def calibrate(server: Server) -> dict[str, Any]:
    p = subprocess.run(
        [sys.executable, "-m", "ragfault.cli", "judge", "calibrate", "--server", server.url, "--json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    return dict(json.loads(p.stdout))


def test_review_queue_label_reaches_human_labels_and_calibration(ui: Page, ui_server: Server) -> None:
    before = calibrate(ui_server)
    page = ui.open("review", "review")
    head = page.inner_text("main h2")
    assert "the judge changed its label" in head  # the queue opens on the items whose label changed
    claim = page.inner_text("#claim")
    page.fill("#label-form input[name=annotator]", "reviewer-1")
    page.click("#label-form button[data-key='1']")  # focus leaves the input; the key press labels
    page.wait_for_function("() => location.hash.includes('i=1')")
    ui.wait_ready("review")
    page.keyboard.press("3")  # the second item by keyboard: unsupported
    page.wait_for_function("() => location.hash.includes('i=2')")
    rows = ui_server.sql("SELECT claim, label, annotator, metric FROM human_labels ORDER BY labeled_at")
    assert rows[0] == [claim, "supported", "reviewer-1", "judge_answer_support"]
    assert len(rows) == 2 and rows[1][1] == "unsupported"
    after = calibrate(ui_server)
    assert after["human_labels"] == before["human_labels"] + 2
    v2 = next(v for v in after["versions"] if v["prompt_version"] == "v2")
    assert v2["metrics"]["judge_answer_support"]["n"] == 2
    # and the calibration page shows it
    page = ui.open("calibration", "calibration")
    assert "judge_answer_support" in page.inner_text(
        "main"
    ) and f"{after['human_labels']} human labels" in page.inner_text("main")


def test_every_page_fits_1280_and_is_keyboard_reachable(ui: Page, ui_server: Server) -> None:
    # every page below is served under the strict policy: an inline script or style would be refused
    # and logged as a console error, which the fixture fails on
    policy = ui.page.goto(f"{ui.base}/ui").headers["content-security-policy"]
    assert policy == CSP
    tid = ui_server.scalar(
        "SELECT trace_id FROM attribution WHERE case_id = 'refund-day-20' AND run_id = 'demo-v1'"
    )
    for route, name in [*((r, r) for r in ROUTES), (f"trace/{tid}", "trace")]:
        ui.open(route, name)
        assert ui.overflow() <= 0, route
    assert "年度会员" in ui.page.inner_text("main")  # the CJK trace's question
    # the dashboard by keyboard alone: Tab to a root cause, Enter filters
    page = ui.open("dashboard", "dashboard")
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('cause')"):
            break
    cause = page.evaluate("document.activeElement.dataset.cause")
    assert cause
    ui.after(lambda: page.keyboard.press("Enter"), "dashboard")
    assert {r["cause"] for r in case_rows(page)} == {cause}


def test_first_run_page_loads_the_demo(browser: Any, server: Server) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    strict_csp(context, server.url)
    try:
        p = Page(context.new_page(), server.url)
        page = p.page
        page.goto(f"{server.url}/ui")
        p.wait_ready("start")  # an empty database opens on the first-run page
        text = page.inner_text("main")
        assert f"{server.url}/v1/traces" in text and "ragfault load gold" in text
        page.click("#demo")
        p.page.wait_for_function("() => location.hash.startsWith('#/dashboard')", timeout=90_000)
        p.wait_ready("dashboard")
        assert server.scalar("SELECT count(*) FROM attribution") == 17
        assert page.inner_text("[data-role=case-total]") == "17 cases"
        assert p.errors == []
    finally:
        context.close()
