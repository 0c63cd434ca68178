"""The judge tier end to end: a real server (HTTP ingest, DuckDB), real OTel traces, the judge runner
against the local fake LLM endpoint; rows beside the cheap tier's, cache, budget, calls, labels API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from evaluators.judge.service import build_judge_runner
from evaluators.judge.settings import JudgeSettings
from tests.conftest import Server, make_settings
from tests.judge.fakellm import FakeLLM
from tests.otel_helpers import http_provider
from tests.tracegen import rag_trace

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "refund-zh"
POLICY_2026 = {
    "id": "refund-policy-2026",
    "content": "年度会员购买后 30 天内可申请退款，按剩余天数计算退款金额；超过 30 天不支持退款。",
}
WRONG = "7 天内可全额退款，超过 7 天不支持退款。"
REFUSAL = "资料里没有家庭套餐价格的信息，建议咨询人工客服。"

RULES: list[tuple[str, dict[str, Any]]] = [
    (
        "ANSWER:\n7 天内",
        {
            "claims": [
                {"text": "7 天内可全额退款", "verdict": "contradicted", "sentence": "S1"},
                {"text": "超过 7 天不支持退款", "verdict": "contradicted", "sentence": "S2"},
            ]
        },
    ),
    (
        "TEXT (one sentence per line, id first):\nS1: 年度会员购买后 30 天",
        {
            "facts": [
                {"id": "within-30", "verdict": "supported", "sentence": "S1"},
                {"id": "prorated", "verdict": "supported", "sentence": "S1"},
            ]
        },
    ),
    ("REPLY:\n资料里没有", {"label": "refused", "reason": "says the information is missing"}),
]


@pytest.fixture
def srv(tmp_path: Path) -> Iterator[Server]:
    # the judge's API is an installed component (entry point ``judge``): the default server has it
    s = Server(make_settings(tmp_path))
    try:
        yield s
    finally:
        s.stop()


def load_examples(srv: Server) -> None:
    for kind in ("kb", "gold"):
        r = srv.http.post(
            f"/api/v1/{kind}",
            content=(EXAMPLES / f"{kind}.jsonl").read_bytes(),
            headers={"Content-Type": "application/x-ndjson"},
        )
        assert r.status_code == 200, r.text


def emit(srv: Server, wait_cheap: bool = True) -> tuple[str, str]:
    provider = http_provider(srv.url)
    tracer = provider.get_tracer("test")
    wrong = rag_trace(
        tracer,
        query="年度会员买了第 20 天，还能退款吗？",
        answer=WRONG,
        candidates=[POLICY_2026],
        case_id="refund-day-20",
        user_scope=["support"],
    )
    refusal = rag_trace(
        tracer,
        query="家庭套餐多少钱一年？",
        answer=REFUSAL,
        candidates=[],
        case_id="family-plan-price",
        user_scope=["support"],
    )
    provider.shutdown()
    srv.wait_for("SELECT count(*) FROM spans", 6)
    srv.settle()
    if wait_cheap:  # the cheap tier evaluates settled traces on its own
        srv.wait_for("SELECT count(*) FROM traces WHERE evaluated_at IS NOT NULL", 2)
    return wrong, refusal


def judge_rows(srv: Server, trace_id: str) -> dict[str, dict[str, Any]]:
    rows = srv.sql(
        "SELECT metric, status, value, numerator, denominator, reason, label, details, tier "
        "FROM evaluations WHERE trace_id = $t AND tier = 'judge'",
        t=trace_id,
    )
    return {
        r[0]: {
            "status": r[1],
            "value": r[2],
            "num": r[3],
            "den": r[4],
            "reason": r[5],
            "label": r[6],
            "details": json.loads(r[7]) if r[7] else None,
        }
        for r in rows
    }


def settings(llm: FakeLLM, **kw: Any) -> JudgeSettings:
    return JudgeSettings(
        **{
            "base_url": llm.base_url,
            "model": "judge-a",
            "backoff_base_s": 0.01,
            "cost_per_1k_input": 0.15,
            "cost_per_1k_output": 0.6,
            **kw,
        }
    )


def test_judge_rows_beside_cheap_rows_then_cache_then_budget(srv: Server, llm: FakeLLM) -> None:
    load_examples(srv)
    wrong, refusal = emit(srv)
    cheap_before = srv.sql(
        "SELECT trace_id, metric, status, value FROM evaluations WHERE tier = 'cheap' ORDER BY ALL"
    )
    assert cheap_before
    llm.rules.extend(RULES)

    runner = build_judge_runner(srv.runtime, settings(llm))
    assert runner is not None
    assert runner.evaluate([wrong, refusal]) == 2
    calls = llm.calls
    assert calls > 0

    w = judge_rows(srv, wrong)
    assert w["judge_answer_support"]["status"] == "ok"
    assert (w["judge_answer_support"]["value"], w["judge_answer_support"]["den"]) == (0.0, 2.0)
    d = w["judge_answer_support"]["details"]
    assert (d["supported"], d["contradicted"], d["unsupported"]) == (0, 2, 0)
    assert d["items"][0]["evidence_doc"] == "refund-policy-2026"
    assert d["judge"] == {"model": "judge-a", "prompt_version": "v1"}
    assert w["judge_answer_support"]["label"] == "contradicted"
    assert (w["claim_recall"]["value"], w["judge_fact_coverage"]["value"]) == (1.0, 0.0)
    assert (w["context_utilization"]["num"], w["context_utilization"]["den"]) == (0.0, 2.0)
    assert w["judge_citation_support"]["status"] == "not_applicable"
    assert (w["judge_refusal"]["value"], w["judge_refusal"]["label"]) == (0.0, "answered")

    r = judge_rows(srv, refusal)
    assert (r["judge_refusal"]["value"], r["judge_refusal"]["label"]) == (1.0, "refused")
    assert r["judge_answer_support"]["status"] == "not_applicable"  # a refusal has no claims
    assert r["claim_recall"]["status"] == "not_applicable"  # the case has no required facts

    # the cheap tier's rows are untouched
    assert (
        srv.sql("SELECT trace_id, metric, status, value FROM evaluations WHERE tier = 'cheap' ORDER BY ALL")
        == cheap_before
    )
    # every call recorded with model, prompt version, tokens, cost and latency
    rec = srv.sql(
        "SELECT model, prompt_version, status, sum(input_tokens), sum(output_tokens), sum(cost_usd), "
        "min(latency_ms) FROM judge_calls GROUP BY ALL"
    )
    assert len(rec) == 1 and rec[0][:3] == ["judge-a", "v1", "ok"]
    assert rec[0][3] == sum(u[0] for u in llm.usage) and rec[0][4] == sum(u[1] for u in llm.usage)
    assert rec[0][5] == pytest.approx(rec[0][3] / 1000 * 0.15 + rec[0][4] / 1000 * 0.6)
    assert rec[0][6] > 0
    assert srv.scalar("SELECT count(*) FROM judge_calls") == calls

    # a second run (a new runner, so nothing in memory) makes no call: everything from judge_cache
    again = build_judge_runner(srv.runtime, settings(llm))
    assert again is not None and again.evaluate([wrong, refusal]) == 2
    assert llm.calls == calls
    assert judge_rows(srv, wrong)["judge_answer_support"]["value"] == 0.0

    # budget: another judge model (cache misses) with the hour's budget spent -> skipped, no call
    poor = build_judge_runner(srv.runtime, settings(llm, model="judge-b", tokens_per_hour=100))
    assert poor is not None and poor.evaluate([wrong, refusal]) == 2
    assert llm.calls == calls
    for rows in (judge_rows(srv, wrong), judge_rows(srv, refusal)):
        for metric in ("judge_answer_support", "judge_refusal"):
            assert (rows[metric]["status"], rows[metric]["reason"]) == ("skipped", "budget")
    assert (
        srv.scalar(
            "SELECT count(DISTINCT trace_id) FROM eval_log WHERE tier = 'judge' AND decision = 'over_budget'"
        )
        == 2
    )
    assert (
        srv.sql("SELECT trace_id, metric, status, value FROM evaluations WHERE tier = 'cheap' ORDER BY ALL")
        == cheap_before
    )


def test_no_judge_table_means_no_runner(srv: Server) -> None:
    assert build_judge_runner(srv.runtime) is None


def test_labels_api_and_calibration_report(srv: Server, llm: FakeLLM) -> None:
    load_examples(srv)
    wrong, refusal = emit(srv, wait_cheap=False)
    llm.rules.extend(RULES)
    runner = build_judge_runner(srv.runtime, settings(llm))
    assert runner is not None
    runner.evaluate([wrong, refusal])
    labels = [
        {
            "trace_id": wrong,
            "metric": "judge_answer_support",
            "claim": "7 天内可全额退款",
            "label": "contradicted",
            "annotator": "ana",
            "anchor": True,
        },
        {
            "trace_id": wrong,
            "metric": "judge_answer_support",
            "claim": "超过 7 天不支持退款",
            "label": "unsupported",
            "annotator": "ana",
            "anchor": True,
        },
        {"trace_id": refusal, "metric": "judge_refusal", "label": "refused", "annotator": "ana"},
    ]
    body = "\n".join(json.dumps(x, ensure_ascii=False) for x in labels)
    r = srv.http.post(
        "/api/v1/labels", content=body.encode(), headers={"Content-Type": "application/x-ndjson"}
    )
    assert r.status_code == 200 and r.json() == {"loaded": 3}
    bad = srv.http.post("/api/v1/labels", json=[{"trace_id": wrong, "metric": "m", "label": "x"}])
    assert bad.status_code == 400 and "annotator" in bad.json()["detail"]

    report = srv.http.get("/api/v1/judge/calibration").json()
    (ver,) = report["versions"]
    assert (ver["model"], ver["prompt_version"]) == ("judge-a", "v1")
    assert ver["overall"]["n"] == 3 and ver["overall"]["accuracy"] == pytest.approx(2 / 3)
    assert ver["metrics"]["judge_answer_support"]["confusion"] == {
        "contradicted": {"contradicted": 1},
        "unsupported": {"contradicted": 1},
    }
    # the anchors are re-scored on demand; their verdicts are stored apart from evaluations
    before = srv.scalar("SELECT count(*) FROM evaluations")
    r = srv.http.post("/api/v1/judge/anchors/rescore")
    assert r.status_code == 409  # the server has no [judge] table
    assert runner.rescore_anchors() == 1
    anchor_verdicts = srv.scalar("SELECT count(*) FROM judge_verdicts WHERE source = 'anchor'")
    assert anchor_verdicts > 0
    assert srv.scalar("SELECT count(*) FROM evaluations") == before
    drift = srv.http.get("/api/v1/judge/calibration").json()["drift"]
    assert drift["baseline"] is None and drift["trusted"] is False
    # a new judge version re-scores the anchors by itself before its first batch; the drift report compares
    newer = build_judge_runner(srv.runtime, settings(llm, model="judge-c"))
    assert newer is not None and newer.evaluate([refusal]) == 1
    # every anchor verdict of the first version has its counterpart from the new one
    assert (
        srv.scalar("SELECT count(*) FROM judge_verdicts WHERE source = 'anchor' AND model = 'judge-c'")
        == anchor_verdicts
    )
    drift = srv.http.get("/api/v1/judge/calibration").json()["drift"]
    assert drift["version"]["model"] == "judge-c" and drift["baseline"]["model"] == "judge-a"
    assert drift["agreement_between_versions"]["accuracy"] == 1.0 and drift["drifted"] is False


def test_the_fake_judge_endpoint_refuses_unknown_paths(llm: FakeLLM) -> None:
    # sanity of the fake itself: an unknown path is a 404, so a wrong base URL cannot pass silently
    r = httpx.post(llm.base_url.replace("/v1", "/v2") + "/chat/completions", json={"messages": []})
    assert r.status_code == 404
