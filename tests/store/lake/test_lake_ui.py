"""The web UI on a lake collector (``--store ducklake``): a file collector and a lake collector receive
the same spans (the demo's second run, one exporter each), the demo's knowledge base and gold set
and the same judge verdicts; every call the UI's pages make answers the same on both. Then Debian's
chromium (Playwright) finds a failing trace's root cause from the lake collector's dashboard."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest

from tests.conftest import Server, make_settings
from tests.store.conftest import Lake
from tests.ui.conftest import Page, browser, strict_csp  # noqa: F401 (fixture)
from tests.ui.data import RUN2, add_judge_verdicts, send_second_run
from tests.waiting import wait_until


def _load_references(server: Server) -> None:
    demo = resources.files("ragfault.demo")
    for path, name in (("/api/v1/kb", "kb.jsonl"), ("/api/v1/gold?dataset=helpdesk-demo", "gold.jsonl")):
        server.http.post(path, content=demo.joinpath(name).read_bytes()).raise_for_status()


def _wait_evaluated(server: Server, n: int, timeout: float = 90) -> None:

    def attributed() -> int:
        server.settle()
        got: int = server.scalar("SELECT count(*) FROM attribution")
        return got

    what = f"{n} traces in attribution on {server.settings.store}"
    wait_until(attributed, lambda got: got >= n, what=what, timeout=timeout, every=0.1)


@pytest.fixture(scope="module")
def pair(postgres: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Server]]:
    """(a file collector, a lake collector) holding the same traces, evaluated."""
    tmp = tmp_path_factory.mktemp("lake-ui")
    lake = Lake(postgres.create_database("lakeui"), tmp / "lake-data")
    file = Server(make_settings(tmp / "file"))
    on_lake = None
    try:
        on_lake = Server(
            make_settings(
                tmp / "lake",
                store="ducklake",
                catalog=lake.catalog,
                data_path=str(lake.data_path),
                extension_repository=False,
            )
        )
        for s in (file, on_lake):
            _load_references(s)
        n = send_second_run(file.url, on_lake.url)
        for s in (file, on_lake):
            _wait_evaluated(s, n)
            add_judge_verdicts(s.runtime, RUN2)
        yield file, on_lake
    finally:
        file.stop()
        if on_lake is not None:
            on_lake.stop()


def _calls(server: Server) -> list[str]:
    """Every call the pages make, with the filters, sorts and pages they offer."""
    traces = [r[0] for r in server.sql("SELECT trace_id FROM traces ORDER BY trace_id")]
    cause = server.scalar("SELECT min(root_cause) FROM attribution WHERE root_cause <> 'ok'")
    ui = "/api/v1/ui"
    return [
        f"{ui}/overview",
        f"{ui}/dashboard",
        f"{ui}/dashboard?bucket=hour",
        f"{ui}/dashboard?run_id={RUN2}&dataset=helpdesk-demo",
        f"{ui}/dashboard?since=2000-01-01&until=2100-01-01",
        f"{ui}/cases",
        f"{ui}/cases?sort=case_id&limit=5",
        f"{ui}/cases?sort=case_id&limit=5&offset=10",
        f"{ui}/cases?sort=context_recall&desc=true",
        f"{ui}/cases?root_cause={cause}",
        f"{ui}/cases?layer=retrieval",
        f"{ui}/cases?q=refund",
        f"{ui}/traces",
        f"{ui}/traces?desc=false&limit=5",
        f"{ui}/traces?limit=5&offset=10",
        f"{ui}/traces?sort=latency_ms",
        f"{ui}/traces?root_cause={cause}",
        f"{ui}/traces?q=API",
        f"{ui}/traces?service=helpdesk-demo-v2&feedback=false",
        f"{ui}/compare?base={RUN2}&new={RUN2}",
        f"{ui}/review?size=6&week=2026-W01",
        f"{ui}/queries",
        "/api/v1/coverage",  # the coverage page's
        *(f"/api/v1/traces/{t}/view" for t in traces),
    ]


def _answer(server: Server, path: str) -> Any:
    # 202 while the facts are computed in the background
    r = wait_until(
        lambda: server.http.get(path), lambda r: r.status_code != 202, what=path, timeout=60, every=0.1
    )
    assert r.status_code == 200, (server.settings.store, path, r.text)
    body = r.json()
    if isinstance(body, dict):
        body.pop("timings_ms", None)  # how long each section took
        body.pop("grpc_port", None)  # each server's own port
    return body


def test_every_ui_call_answers_on_a_lake_as_on_the_file(pair: tuple[Server, Server]) -> None:
    file, on_lake = pair
    calls = _calls(file)
    assert calls == _calls(on_lake)
    assert len(calls) > 30  # the trace views of every trace are among them
    for path in calls:
        assert _answer(on_lake, path) == _answer(file, path), path
    # a review screen of the queue's first item
    item = _answer(file, "/api/v1/ui/review?size=6&week=2026-W01")["items"][0]
    screen = (
        f"/api/v1/ui/review/item?trace_id={item['trace_id']}&metric={item['metric']}&claim={item['claim']}"
    )
    assert _answer(on_lake, screen) == _answer(file, screen)
    # the data is not trivial: causes, a refusal table, items to review
    dash = _answer(on_lake, "/api/v1/ui/dashboard")
    assert sum(r["traces"] for r in dash["root_causes"] if r["root_cause"] != "ok") > 0
    assert dash["refusal_table"] and dash["layer_metrics"] and dash["quadrant"]


def test_a_lake_collector_keeps_its_dashboard_facts_in_memory(pair: tuple[Server, Server]) -> None:
    from ragfault.ui.api import facts_of

    _, on_lake = pair
    facts = facts_of(on_lake.runtime)
    # computed (the calls above used them), never written anywhere: the lake's path names no directory
    assert facts.path is None and facts.facts is not None and facts.refreshes.full >= 1
    assert facts.save() is False and facts.refreshes.saved == 0


@pytest.mark.browser
def test_a_lake_collectors_dashboard_finds_a_failing_traces_root_cause(
    browser: Any,  # noqa: F811 (the fixture imported above)
    pair: tuple[Server, Server],
) -> None:
    _, on_lake = pair
    cause, case = on_lake.sql(
        "SELECT root_cause, case_id FROM attribution WHERE root_cause <> 'ok' ORDER BY root_cause, case_id LIMIT 1"
    )[0]
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB")
    strict_csp(context, on_lake.url)
    ui = Page(context.new_page(), on_lake.url)
    try:
        page = ui.open("dashboard", "dashboard")
        ui.after(lambda: page.click(f"button.cause[data-cause={cause}]"), "dashboard")
        cases = page.eval_on_selector_all(
            "#cases tbody tr[data-trace]", "rs => rs.map(r => r.cells[1].innerText.trim())"
        )
        expected = on_lake.sql(
            "SELECT case_id FROM attribution WHERE root_cause = $c ORDER BY case_id", c=cause
        )
        assert sorted(cases) == [r[0] for r in expected] and case in cases
        assert ui.overflow() == 0
        ui.after(lambda: page.click("#cases tbody tr[data-trace] a"), "trace")
        assert cause in page.inner_text("#root-cause")
        page = ui.open("traces", "traces")
        total = on_lake.scalar("SELECT count(*) FROM traces")
        assert f"{total} traces" in page.inner_text("main")
        assert ui.unexpected_errors() == [], ui.errors
    finally:
        context.close()
