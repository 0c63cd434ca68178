"""The UI's API without a browser: the demo loaded through it, the dashboard's attribution snapshot
following new verdicts, paging and sorting bounds, and the review queue's halves."""

from __future__ import annotations

import json

from ragfault.demo.scenarios import SCENARIOS
from tests.conftest import Server
from tests.ui.data import add_judge_verdicts
from tests.waiting import wait_until


def _wait_evaluated(server: Server, n: int) -> None:

    def evaluated() -> int:
        server.settle()
        count: int = server.scalar("SELECT count(*) FROM traces WHERE evaluated_at IS NOT NULL")
        return count

    wait_until(evaluated, lambda count: count >= n, what=f"{n} of the demo's traces evaluated", timeout=60)


def test_ui_api_on_the_demo(server: Server) -> None:
    http = server.http
    assert http.get("/api/v1/ui/overview").json()["traces"] == 0
    r = http.post("/api/v1/ui/demo")
    assert r.status_code == 200, r.text
    assert r.json() == {"sent": len(SCENARIOS), "run_id": "demo-v1"}
    _wait_evaluated(server, len(SCENARIOS))
    server.wait_for("SELECT count(*) FROM attribution", 17)

    dash = http.get("/api/v1/ui/dashboard").json()
    counts = {r["root_cause"]: r["traces"] for r in dash["root_causes"]}
    assert sum(counts.values()) == 17 and counts["ok"] == 5
    assert sum(r["traces"] for r in dash["trend"]) == 17
    assert {r["category"] for r in dash["refusal_table"]} >= {"(all)", "policy"}

    # a gold case reloaded with another category: its trace is evaluated again, and the next call
    # sees the new verdicts (the snapshot follows the data's version)
    gold = [json.loads(line) for line in open_demo("gold.jsonl")]
    case = next(c for c in gold if c["case_id"] == "api-rate-limit")
    http.post(
        "/api/v1/gold?dataset=helpdesk-demo", content=json.dumps({**case, "category": "renamed"})
    ).raise_for_status()
    got = wait_until(
        lambda: http.get("/api/v1/ui/cases", params={"category": "renamed"}).json(),
        lambda page: page["total"] == 1,
        what="the renamed category's case",
    )
    assert got["total"] == 1 and got["rows"][0]["case_id"] == "api-rate-limit"

    # paging: total, disjoint pages, the order the server was asked for
    a = http.get("/api/v1/ui/cases", params={"limit": 10, "sort": "case_id"}).json()
    b = http.get("/api/v1/ui/cases", params={"limit": 10, "offset": 10, "sort": "case_id"}).json()
    ids = [r["case_id"] for r in a["rows"] + b["rows"]]
    assert a["total"] == b["total"] == 17 and ids == sorted(ids) and len(set(ids)) == 17
    past = http.get("/api/v1/ui/cases", params={"limit": 10, "offset": 100}).json()
    assert past["rows"] == [] and past["total"] == 17
    assert http.get("/api/v1/ui/cases", params={"sort": "evidence"}).status_code == 400
    assert http.get("/api/v1/ui/traces", params={"limit": 0}).status_code == 400
    assert http.get("/api/v1/ui/traces", params={"limit": 201}).status_code == 400

    t = http.get("/api/v1/ui/traces", params={"limit": 5, "desc": "false"}).json()
    assert t["total"] == len(SCENARIOS) and len(t["rows"]) == 5
    starts = [r["start_time"] for r in t["rows"]]
    assert starts == sorted(starts)
    assert all(r["tokens"] and r["latency_ms"] is not None for r in t["rows"])
    no_case = http.get("/api/v1/ui/traces", params={"q": "billing currency"}).json()
    assert no_case["total"] == 1 and no_case["rows"][0]["root_cause"] is None  # live traffic: no gold case
    stale = http.get("/api/v1/ui/traces", params={"root_cause": "stale_context"}).json()
    assert stale["total"] == 2 and {r["root_cause"] for r in stale["rows"]} == {"stale_context"}

    # the review queue: half where the judge changed its label, the rest drawn with the week's seed
    add_judge_verdicts(server.runtime)
    q = http.get("/api/v1/ui/review", params={"size": 6, "week": "2026-W01"}).json()
    whys = [i["why"] for i in q["items"]]
    assert whys == ["changed", "changed", "random", "random", "random", "random"]
    assert all(i["previous_label"] != i["label"] for i in q["items"] if i["why"] == "changed")
    again = http.get("/api/v1/ui/review", params={"size": 6, "week": "2026-W01"}).json()
    assert again == q  # a week's queue is stable
    item = q["items"][0]
    http.post("/api/v1/labels", json={"trace_id": item["trace_id"], "metric": item["metric"], "claim": item["claim"],
                                      "label": "supported", "annotator": "t"}).raise_for_status()  # fmt: skip
    after = http.get("/api/v1/ui/review", params={"size": 6, "week": "2026-W01"}).json()["items"]
    assert (item["trace_id"], item["claim"]) not in {
        (i["trace_id"], i["claim"]) for i in after
    }  # labelled: gone
    screen = http.get(
        "/api/v1/ui/review/item",
        params={"trace_id": item["trace_id"], "metric": item["metric"], "claim": item["claim"]},
    ).json()
    assert screen["trace"]["trace_id"] == item["trace_id"] and screen["context"]


def open_demo(name: str) -> list[str]:
    from importlib import resources

    return resources.files("ragfault.demo").joinpath(name).read_text(encoding="utf-8").splitlines()


def test_a_trace_view_joins_the_gold_case_the_evaluators_joined(server: Server) -> None:
    """The view reads the gold cases of its own trace: by case id, or by the normalized question of a
    trace without one (a live question given a gold case later), as the evaluators join them."""
    http = server.http
    http.post("/api/v1/ui/demo").raise_for_status()
    _wait_evaluated(server, len(SCENARIOS))
    # a gold case for a live question (no case id on its trace), written with other spacing and case
    case = {
        "case_id": "billing-currency", "query": "can I change my  billing currency?", "answerable": False,
        "expected_behavior": "refuse", "category": "live-joined",
    }  # fmt: skip
    http.post("/api/v1/gold?dataset=helpdesk-demo", content=json.dumps(case)).raise_for_status()
    server.wait_for("SELECT count(*) FROM attribution WHERE case_id = 'billing-currency'", 1, timeout=60)
    joined = server.sql("SELECT trace_id, case_id FROM attribution ORDER BY trace_id")
    assert len(joined) == 18
    for trace_id, case_id in joined:
        view = http.get(f"/api/v1/traces/{trace_id}/view").json()
        assert view["case"]["case_id"] == case_id, trace_id
        assert view["trace"]["case_id"] == case_id
    live = next(t for t, c in joined if c == "billing-currency")
    assert http.get(f"/api/v1/traces/{live}/view").json()["case"]["category"] == "live-joined"
