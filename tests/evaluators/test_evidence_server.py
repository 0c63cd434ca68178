"""End to end through a real server: a rerank cut shows as context_retention < 1 (rerank_cut) and a
forbidden candidate as a permission violation, in the `evaluations` table."""

from __future__ import annotations

import json
from typing import Any

from tests.otel_helpers import http_provider
from tests.tracegen import rag_trace

KB = [
    {
        "doc_id": "refund-policy-2024",
        "version": "2024",
        "valid_from": "2024-01-01",
        "valid_to": "2026-03-01",
        "superseded_by": "refund-policy-2026",
        "content": "年度会员购买后 7 天内可全额退款，超过 7 天不支持退款。",
        "acl": ["support"],
    },
    {
        "doc_id": "refund-policy-2026",
        "version": "2026",
        "valid_from": "2026-03-01",
        "content": "年度会员购买后 30 天内可申请退款，按剩余天数计算退款金额；超过 30 天不支持退款。",
        "acl": ["support"],
    },
    {
        "doc_id": "member-transfer",
        "version": "2026",
        "valid_from": "2026-03-01",
        "content": "会员权益仅限本人账号使用。",
        "acl": ["support"],
    },
    {
        "doc_id": "finance-discounts",
        "version": "2026",
        "valid_from": "2026-01-01",
        "content": "大客户合同折扣由财务部单独审批。",
        "acl": ["finance"],
    },
]
CASE: dict[str, Any] = {
    "case_id": "refund-day-20", "query": "年度会员买了第 20 天，还能退款吗？", "answerable": True,
    "expected_behavior": "answer", "must_retrieve": True,
    "evidence": [{"doc_id": "refund-policy-2026", "quote": "30 天内可申请退款，按剩余天数计算退款金额"}],
    "negative_doc_ids": ["refund-policy-2024"], "user_scope": ["support"], "as_of": "2026-09-15",
}  # fmt: skip


def docs(*ids: str) -> list[dict[str, Any]]:
    by_id = {d["doc_id"]: d for d in KB}
    return [{"id": i, "content": by_id[i]["content"], "score": 1.0 - n / 10} for n, i in enumerate(ids)]


def test_rerank_cut_and_forbidden_candidate_reach_evaluations(server):
    def jsonl(rows):
        return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode()

    assert server.http.post("/api/v1/kb", content=jsonl(KB)).json()["loaded"] == 4
    assert server.http.post("/api/v1/gold", content=jsonl([CASE])).json()["loaded"] == 1

    provider = http_provider(server.url)
    tracer = provider.get_tracer("test")
    # the evidence ranks 3rd; the reranker keeps only the top 2, one of them a finance document
    trace_id = rag_trace(
        tracer,
        query=CASE["query"],
        answer="会员权益仅限本人账号使用。",
        candidates=docs("member-transfer", "finance-discounts", "refund-policy-2026"),
        reranked=docs("member-transfer", "finance-discounts"),
        case_id="refund-day-20",
    )
    provider.force_flush()
    provider.shutdown()
    server.wait_for("SELECT count(*) FROM spans WHERE trace_id = $t", 4, t=trace_id)
    server.settle()
    server.wait_for(
        "SELECT count(DISTINCT evaluator) FROM evaluations WHERE trace_id = $t "
        "AND evaluator IN ('context', 'permission', 'freshness', 'duplicates', 'evidence_kb')",
        5,
        t=trace_id,
    )

    def row(metric, where="span_id IS NULL"):
        rows = server.sql(
            "SELECT status, value, numerator, denominator, passed, reason, details FROM evaluations "
            f"WHERE trace_id = $t AND metric = $m AND {where}",
            t=trace_id,
            m=metric,
        )
        assert len(rows) == 1, rows
        status, value, num, den, passed, reason, details = rows[0]
        return status, value, num, den, passed, reason, json.loads(details) if details else None

    rerank_span = server.scalar(
        "SELECT span_id FROM steps WHERE trace_id = $t AND step_type = 'rerank'", t=trace_id
    )

    status, value, num, den, passed, reason, details = row("context_retention")
    assert (status, value, num, den, passed, reason) == ("ok", 0.0, 0, 1, False, "rerank_cut")
    [dropped] = details["dropped"]
    assert (
        dropped["step"] == "rerank_cut"
        and dropped["span_id"] == rerank_span
        and dropped["candidate_rank"] == 3
    )

    status, value, *_ = row("context_recall")
    assert (status, value) == ("ok", 0.0)

    # the case's scope is support; the trace sent none, so the case's applies
    status, value, num, den, passed, reason, details = row("permission_violations")
    assert (status, num, den, passed) == ("ok", 1, 3, False)
    assert [(f["doc_id"], f["acl"]) for f in details["forbidden"]] == [("finance-discounts", ["finance"])]
    assert [f["doc_id"] for f in details["forbidden_in_context"]] == ["finance-discounts"]
    status, _, num, den, passed, *_ = row("permission_violations", "span_id IS NOT NULL")
    assert (status, num, den, passed) == ("ok", 1, 3, False)

    assert row("evidence_in_kb")[:5] == ("ok", 1.0, 1, 1, True)
    assert row("stale_candidates")[2:5] == (0, 3, None)
