"""From a thumbs-down on a live trace to a gate that holds it (issue 41, parts 2-3): the triage queue,
promotion through the API and the CLI (on the server and on the file), the promoted cases as JSONL."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evaluators.gold import Evidence, GoldCase
from ragfault.cli import main
from tests.live.conftest import DOCS, LiveServer
from tests.tracegen import rag_trace

NO_SAMPLE = "[sampling]\nproduction_rate = 0.0\n"
KB = {
    "doc_id": "policy",
    "title": "Refund policy",
    "content": "Refunds are accepted within 30 days of purchase.",
}
SHOES = "Are refunds accepted for shoes I bought two months ago?"
WRONG = "Yes, returns are accepted at any time."
RIGHT = "No: refunds are accepted within 30 days of purchase."
RULES = """
[[rule]]
name = "promoted cases evaluated"
metric = "traces"
where = { promoted = true }
min = 1

[[rule]]
name = "every promoted case passes"
metric = "ok_rate"
where = { promoted = true }
min = 1
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def thumbs_down(srv: LiveServer, trace_id: str) -> None:
    r = srv.http.post("/api/v1/feedback", json={"trace_id": trace_id, "kind": "thumbs", "value": "down"})
    assert r.status_code == 200 and r.json()["negative"] is True, r.text


def test_thumbs_down_to_triage_to_gold_case_to_gate(
    live, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    srv = live(NO_SAMPLE)
    assert srv.http.post("/api/v1/kb", content=json.dumps(KB) + "\n").status_code == 200
    tracer = srv.tracer("shop")
    wrong = rag_trace(tracer, query=SHOES, answer=WRONG, candidates=DOCS)
    quiet = rag_trace(tracer, query="What colours do the shoes come in?", answer="Red.", candidates=DOCS)
    srv.drain()
    thumbs_down(srv, wrong)
    srv.drain()

    queue = srv.http.get("/api/v1/triage", params={"service": "shop"}).json()["items"]
    row = next(i for i in queue if i["trace_id"] == wrong)
    assert "negative_feedback" in row["reasons"] and row["thumbs_down"] == 1
    assert row["question"] == SHOES and row["answer"] == WRONG
    assert row["registry_search"][0]["doc_id"] == "policy"
    # feedback comes first; the other trace is in the queue for the judge-tier trigger it fired alone
    assert [(i["trace_id"], i["reasons"]) for i in queue] == [
        (wrong, ["negative_feedback", "live_attribution", "trigger"]),
        (quiet, ["trigger"]),
    ]
    assert queue[0]["root_cause"] == "unsupported_claims" and "unsupported_claims" in queue[0]["evidence"]
    assert queue[1]["root_cause"] == "none_seen" and queue[1]["triggers"]
    # the cap per service: one row of "shop"
    assert [
        i["trace_id"] for i in srv.http.get("/api/v1/triage", params={"per_service": 1}).json()["items"]
    ] == [wrong]
    # the cap per day through the CLI's bundled query: the most urgent row of the day
    code, text, err = run(
        capsys, "query", "triage", "-p", "per_day=1", "--server", srv.url, "--format", "json"
    )
    assert code == 0, err
    assert [(r["trace_id"], r["reasons"]) for r in json.loads(text)] == [(wrong, queue[0]["reasons"])]
    assert srv.sql("SELECT count(*) FROM attribution WHERE trace_id = $t", t=wrong) == [[0]]

    bad = srv.http.post("/api/v1/gold/promote", json={"trace_id": wrong, "cause": "gremlins"})
    assert bad.status_code == 422
    unknown = srv.http.post("/api/v1/gold/promote", json={"trace_id": "ab" * 16, "cause": "ok"})
    assert unknown.status_code == 404, unknown.text
    r = srv.http.post(
        "/api/v1/gold/promote",
        json={
            "trace_id": wrong.upper(),
            "cause": "unsupported_claims",
            "evidence": [{"doc_id": "policy", "quote": "within 30 days of purchase"}],
            "required_facts": [{"id": "window", "text": "30 days"}],
            "user": "reviewer@example.com",
        },
    )
    assert r.status_code == 200, r.text
    out = r.json()
    case_id = out["case_id"]
    assert case_id == f"live-{wrong[:16]}" and out["dataset"] == "production"
    assert out["root_cause"] is not None and out["root_cause"] != "ok"  # the wrong answer fails with its case
    GoldCase.model_validate(out["case"])
    assert srv.sql("SELECT case_id, root_cause FROM attribution WHERE trace_id = $t", t=wrong) == [
        [case_id, out["root_cause"]]
    ]
    assert srv.sql(
        "SELECT trace_id, cause, promoted_by, promoted_at IS NOT NULL FROM gold_promotions WHERE case_id = $c",
        c=case_id,
    ) == [[wrong, "unsupported_claims", "reviewer@example.com", True]]
    # promoted: out of the queue, and a second promotion to another case id is refused
    assert wrong not in {i["trace_id"] for i in srv.http.get("/api/v1/triage").json()["items"]}
    again = srv.http.post(
        "/api/v1/gold/promote", json={"trace_id": wrong, "cause": "ok", "case_id": "another"}
    )
    assert again.status_code == 400 and case_id in again.json()["detail"]

    # the gate: the promoted case counts, and its failing trace fails the rule
    rules = tmp_path / "gates.toml"
    rules.write_text(RULES, encoding="utf-8")
    code, text, _ = run(capsys, "gate", "--rules", str(rules), "--server", srv.url)
    assert code == 1, text
    assert re.search(r"^FAIL +every promoted case passes +0 +0/1 +1", text, re.M), text
    assert re.search(r"^PASS +promoted cases evaluated", text, re.M), text
    # a fixed release answers the same question right: its run passes the gate
    rag_trace(srv.tracer("shop"), query=SHOES, answer=RIGHT, candidates=DOCS, run_id="v2")
    srv.drain()
    code, text, _ = run(capsys, "gate", "--rules", str(rules), "--server", srv.url, "--run", "v2")
    assert code == 0, text

    # the CLI through the server: a second thumbs-down trace, the cause live attribution suggests unless given
    other = rag_trace(tracer, query="How fast is shipping?", answer="Shipping is instant.", candidates=DOCS)
    srv.drain()
    thumbs_down(srv, other)
    srv.drain()
    code, text, err = run(
        capsys, "gold", "promote", other, "--cause", "evidence_not_in_kb", "--expect", "refuse",
        "--unanswerable", "--user", "cli", "--server", srv.url,
    )  # fmt: skip
    assert code == 0, err
    assert f"gold case live-{other[:16]}" in text
    assert srv.sql("SELECT count(*) FROM attribution WHERE trace_id = $t", t=other) == [[1]]
    assert srv.sql("SELECT promoted_by FROM gold_promotions WHERE trace_id = $t", t=other) == [["cli"]]
    code, text, _ = run(capsys, "gold", "export", "--server", srv.url)
    cases = [GoldCase.model_validate_json(line) for line in text.splitlines()]
    assert [c.case_id for c in cases] == [case_id, f"live-{other[:16]}"]
    evidence = cases[0].evidence[0]
    assert isinstance(evidence, Evidence) and evidence.doc_id == "policy"
    assert cases[1].expected_behavior == "refuse"

    # the CLI on the file, once the server is gone
    third = rag_trace(tracer, query="Do you ship abroad?", answer="We ship to the moon.", candidates=DOCS)
    srv.drain()
    srv.stop()
    db = str(srv.settings.db)
    code, text, err = run(
        capsys, "gold", "promote", third, "--cause", "unsupported_claims", "--evidence", "policy",
        "--fact", "no shipping abroad", "--db", db,
    )  # fmt: skip
    assert code == 0, err
    assert f"live-{third[:16]}" in text and "attribution with the case: not evaluated" not in text
    code, text, _ = run(capsys, "query", "SELECT count(*) AS n FROM attribution WHERE trace_id = '" + third + "'",
                        "--db", db, "--format", "json")  # fmt: skip
    assert code == 0 and json.loads(text)[0]["n"] == 1
    code, text, _ = run(capsys, "gate", "--rules", str(rules), "--db", db)
    assert code == 1 and "every promoted case passes" in text


def test_promotion_refuses_what_cannot_become_a_case(live, capsys: pytest.CaptureFixture[str]) -> None:
    srv = live(NO_SAMPLE)
    t = rag_trace(srv.tracer(), query="Where is my parcel?", answer="On its way.", candidates=DOCS)
    srv.drain()
    for body, status, words in (
        (
            {"trace_id": t, "cause": "ok", "expected_behavior": "answer", "answerable": False},
            400,
            "answerable",
        ),
        ({"trace_id": t, "cause": "ok", "evidence": [{}]}, 422, ""),
        ({"trace_id": "not-hex", "cause": "ok"}, 422, ""),
        ({"trace_id": t, "cause": "ok", "surprise": 1}, 422, ""),
    ):
        r = srv.http.post("/api/v1/gold/promote", json=body)
        assert r.status_code == status, (body, r.text)
        assert words in r.text
    assert srv.sql("SELECT count(*) FROM gold_promotions") == [[0]]
    # the CLI: live attribution suggests no cause for this trace, so --cause is asked for
    code, _, err = run(capsys, "gold", "promote", t, "--server", srv.url)
    assert code == 1 and "--cause" in err
    code, _, err = run(
        capsys, "gold", "promote", t, "--cause", "ok", "--evidence", ":quote", "--server", srv.url
    )
    assert code == 1 and "DOC:QUOTE" in err


def test_the_cli_names_the_dataset_promote_writes() -> None:
    from evaluators.service.promote import DEFAULT_DATASET
    from ragfault.commands import gold

    assert gold.DEFAULT_DATASET == DEFAULT_DATASET
