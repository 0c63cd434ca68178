# ruff: noqa: E501 -- scenario tables, one scenario a line
"""A small knowledge base and gold set (English and Chinese) on which every root cause (docs/architecture.md, Attribution order)
can be planted, and the scenarios that plant them."""

from __future__ import annotations

import json
import uuid
from typing import Any

KB: list[dict[str, Any]] = [
    {"doc_id": "retry-v2", "version": "2", "valid_from": "2026-01-01", "acl": ["public"],
     "content": "Error R-17 means the request was rate limited. Wait 30 seconds before retrying."},
    {"doc_id": "retention-v1", "version": "1", "valid_from": "2025-01-01", "valid_to": "2026-01-01",
     "superseded_by": "retention-v2", "acl": ["public"], "content": "Logs are retained for 30 days."},
    {"doc_id": "retention-v2", "version": "2", "valid_from": "2026-01-01", "acl": ["public"],
     "content": "Logs are retained for 7 days."},
    {"doc_id": "export-v2", "version": "2", "valid_from": "2026-01-01", "acl": ["public"],
     "content": "Logs can be exported as JSON."},
    {"doc_id": "sso-setup", "version": "1", "valid_from": "2026-01-01", "acl": ["public"],
     "content": "Single sign-on supports SAML 2.0 and OpenID Connect."},
    {"doc_id": "salary-bands", "version": "1", "valid_from": "2026-01-01", "acl": ["hr"],
     "content": "Salary bands are reviewed every April by the compensation committee."},
    {"doc_id": "refund-policy-2024", "version": "2024", "valid_from": "2024-01-01", "valid_to": "2026-03-01",
     "superseded_by": "refund-policy-2026", "acl": ["support"],
     "content": "年度会员购买后 7 天内可全额退款，超过 7 天不支持退款。"},
    {"doc_id": "refund-policy-2026", "version": "2026", "valid_from": "2026-03-01", "acl": ["support"],
     "content": "年度会员购买后 30 天内可申请退款，按剩余天数计算退款金额；超过 30 天不支持退款。"},
    {"doc_id": "member-transfer", "version": "2026", "valid_from": "2026-03-01", "acl": ["support"],
     "content": "会员权益仅限本人账号使用。"},
    {"doc_id": "finance-discounts", "version": "2026", "valid_from": "2026-01-01", "acl": ["finance"],
     "content": "大客户合同折扣由财务部单独审批。"},
]  # fmt: skip

_EN = {"answerable": True, "expected_behavior": "answer", "must_retrieve": True, "user_scope": ["public"],
       "as_of": "2026-09-30"}  # fmt: skip
_ZH = {**_EN, "user_scope": ["support"], "as_of": "2026-09-15"}
GOLD: list[dict[str, Any]] = [
    {**_EN, "case_id": "en-retry", "category": "exact-id",
     "query": "How long should I wait before retrying after error R-17?",
     "evidence": [{"doc_id": "retry-v2", "quote": "Wait 30 seconds before retrying"}],
     "required_facts": [{"id": "wait-30s", "text": "30 seconds"}]},
    {**_EN, "case_id": "en-two", "category": "multi-fact",
     "query": "How long are logs retained, and which export format is supported?",
     "evidence": [{"doc_id": "retention-v2", "quote": "retained for 7 days"},
                  {"doc_id": "export-v2", "quote": "exported as JSON"}],
     "required_facts": [{"id": "keep-7d", "text": "7 days"}, {"id": "json", "text": "JSON"}]},
    {**_EN, "case_id": "en-current", "category": "version-conflict",
     "query": "Under the current policy, how long are logs retained?",
     "evidence": [{"doc_id": "retention-v2", "quote": "retained for 7 days"}],
     "required_facts": [{"id": "keep-7d", "text": "7 days"}], "negative_doc_ids": ["retention-v1"]},
    {**_EN, "case_id": "en-invoice", "category": "kb-gap", "query": "How are invoice numbers assigned?",
     "evidence": [{"doc_id": "billing-v3", "quote": "Invoice numbers are assigned sequentially"}],
     "required_facts": [{"id": "seq", "text": "sequentially"}]},
    {**_EN, "case_id": "en-none", "category": "no-answer", "answerable": False, "expected_behavior": "refuse",
     "query": "What is the maximum number of days retention can be extended to?", "evidence": [],
     "required_facts": []},
    {**_ZH, "case_id": "zh-refund", "category": "policy", "risk": "high", "query": "年度会员买了第 20 天，还能退款吗？",
     "evidence": [{"doc_id": "refund-policy-2026", "quote": "30 天内可申请退款，按剩余天数计算退款金额"}],
     "required_facts": [{"id": "within-30", "text": "30 天内可退款", "aliases": ["30 天内可申请退款", "30天内"]},
                        {"id": "prorated", "text": "按剩余天数计算", "aliases": ["按剩余天数"]}],
     "negative_doc_ids": ["refund-policy-2024"]},
    {**_ZH, "case_id": "zh-transfer", "category": "policy", "query": "年度会员能不能转给家人用？",
     "evidence": [{"doc_id": "member-transfer", "quote": "仅限本人账号使用"}],
     "required_facts": [{"id": "self-only", "text": "仅限本人使用", "aliases": ["仅限本人账号使用", "不能转给家人"]}]},
    {**_ZH, "case_id": "zh-invoice", "category": "kb-gap", "query": "发票编号是怎么生成的？",
     "evidence": [{"doc_id": "invoice-guide", "quote": "发票编号按顺序生成"}],
     "required_facts": [{"id": "seq", "text": "按顺序生成"}]},
    {**_ZH, "case_id": "zh-none", "category": "no-answer", "answerable": False, "expected_behavior": "refuse",
     "risk": "high", "query": "家庭套餐多少钱一年？", "evidence": [], "required_facts": []},
]  # fmt: skip

QUERY = {c["case_id"]: c["query"] for c in GOLD}
CONTENT = {d["doc_id"]: d["content"] for d in KB}


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode()


def docs(ids: tuple[str, ...] | list[str], mode: str = "id") -> list[dict[str, Any]]:
    """Step documents for registry ids: ``id`` (the doc id), ``uuid`` (a chunk UUID, the source id
    only in metadata) or ``noid`` (content only, no id of any kind)."""
    out = []
    for n, i in enumerate(ids):
        d: dict[str, Any] = {"content": CONTENT[i], "score": round(1.0 - n / 10, 2)}
        if mode == "id":
            d["id"] = i
        elif mode == "uuid":
            d["id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"chunk/{i}/0"))
            d["metadata"] = {"doc_id": i, "chunk": 0}
        out.append(d)
    return out


# (case, candidates, reranked or None, answer, citations, retrieve)
Plant = tuple[str, tuple[str, ...], tuple[str, ...] | None, str, tuple[str, ...] | None, bool]

EN_OK = "Wait 30 seconds before retrying."
ZH_OK = "会员权益仅限本人账号使用。"
ZH_FULL = "30 天内可申请退款，按剩余天数计算退款金额。"

PLANTS: dict[str, dict[str, Plant]] = {
    "en": {
        "permission_violation": ("en-retry", ("retry-v2", "salary-bands"), None, EN_OK, None, True),
        "no_retrieval": ("en-retry", (), None, EN_OK, None, False),
        "evidence_not_in_kb": ("en-invoice", ("export-v2",), None, "Invoice numbers are assigned sequentially.", None, True),
        "stale_context": ("en-current", ("retention-v1", "retry-v2"), None, "Logs are retained for 30 days.", None, True),
        "candidate_miss": ("en-two", ("retention-v2", "retry-v2"), None, "Logs are retained for 7 days.", None, True),
        "dropped_before_context": ("en-retry", ("sso-setup", "export-v2", "retry-v2"), ("sso-setup", "export-v2"),
                                   EN_OK, None, True),
        "answered_unanswerable": ("en-none", ("retention-v2", "export-v2"), None,
                                  "Retention can be extended to 90 days.", None, True),
        "over_refusal": ("en-retry", ("retry-v2", "export-v2"), None,
                         "I don't know. Please contact the support team.", None, True),
        "unsupported_claims": ("en-retry", ("retry-v2",), None, "Wait 60 seconds before retrying.", None, True),
        "incomplete_answer": ("en-two", ("retention-v2", "export-v2"), None, "Logs are retained for 7 days.", None, True),
        "invalid_citation": ("en-retry", ("retry-v2", "export-v2"), ("retry-v2",), EN_OK, ("export-v2",), True),
        "ok": ("en-retry", ("retry-v2", "export-v2"), None, EN_OK, ("retry-v2",), True),
    },
    "zh": {
        "permission_violation": ("zh-refund", ("refund-policy-2026", "finance-discounts"), None, ZH_FULL, None, True),
        "no_retrieval": ("zh-refund", (), None, "7 天内可以全额退款。", None, False),
        "evidence_not_in_kb": ("zh-invoice", ("member-transfer",), None, "发票编号按顺序生成。", None, True),
        "stale_context": ("zh-refund", ("refund-policy-2024", "refund-policy-2026"), None, "7 天内可全额退款。", None, True),
        "candidate_miss": ("zh-refund", ("member-transfer",), None, ZH_OK, None, True),
        "dropped_before_context": ("zh-refund", ("member-transfer", "refund-policy-2026"), ("member-transfer",),
                                   "7 天。", None, True),
        "answered_unanswerable": ("zh-none", ("member-transfer", "refund-policy-2026"), None, "家庭套餐 299 元一年。", None, True),
        "over_refusal": ("zh-refund", ("refund-policy-2026",), None, "不清楚，请咨询人工客服。", None, True),
        "unsupported_claims": ("zh-refund", ("refund-policy-2026",), None, "7 天内全额退款。", None, True),
        "incomplete_answer": ("zh-refund", ("refund-policy-2026",), None, "30 天内可申请退款。", None, True),
        "invalid_citation": ("zh-transfer", ("member-transfer",), None, ZH_OK, ("refund-policy-2026",), True),
        "ok": ("zh-transfer", ("member-transfer", "refund-policy-2026"), None, ZH_OK, ("member-transfer",), True),
    },
}  # fmt: skip

# Traps: (name, language, plant, doc mode, join by query text, expected root cause)
TRAPS: dict[str, tuple[str, Plant, str, bool, str]] = {
    # a stale document only among the candidates (the reranker cut it) is not stale_context
    "en-stale-cut": ("en", ("en-current", ("retention-v1", "retention-v2"), ("retention-v2",),
                            "Logs are retained for 7 days.", None, True), "id", False, "ok"),
    "zh-stale-cut": ("zh", ("zh-refund", ("refund-policy-2024", "refund-policy-2026"), ("refund-policy-2026",),
                            ZH_FULL, None, True), "id", False, "ok"),
    # a forbidden document among the candidates is a violation even when the reranker cut it
    "en-forbidden-cut": ("en", ("en-retry", ("salary-bands", "retry-v2"), ("retry-v2",), EN_OK, None, True),
                         "id", False, "permission_violation"),
    "zh-forbidden-cut": ("zh", ("zh-refund", ("finance-discounts", "refund-policy-2026"), ("refund-policy-2026",),
                                ZH_FULL, None, True), "id", False, "permission_violation"),
    # stale in context, but the answer follows the current document: ok under the default policy
    "en-stale-not-followed": ("en", ("en-current", ("retention-v2", "retention-v1"), None,
                                     "Under the current policy, logs are retained for 7 days.", None, True),
                              "id", False, "ok"),
    # chunk UUIDs, the source id only in metadata (citations name the source id)
    "en-uuid-ok": ("en", PLANTS["en"]["ok"], "uuid", False, "ok"),
    "zh-uuid-ok": ("zh", PLANTS["zh"]["ok"], "uuid", False, "ok"),
    "en-uuid-stale": ("en", PLANTS["en"]["stale_context"], "uuid", False, "stale_context"),
    "zh-uuid-stale": ("zh", PLANTS["zh"]["stale_context"], "uuid", False, "stale_context"),
    "en-uuid-forbidden": ("en", PLANTS["en"]["permission_violation"], "uuid", False, "permission_violation"),
    "zh-uuid-dropped": ("zh", PLANTS["zh"]["dropped_before_context"], "uuid", False, "dropped_before_context"),
    "en-uuid-citation": ("en", PLANTS["en"]["invalid_citation"], "uuid", False, "invalid_citation"),
    # no id at all: identified through the registry by content
    "en-noid-ok": ("en", PLANTS["en"]["ok"][:4] + (None, True), "noid", False, "ok"),
    "zh-noid-ok": ("zh", PLANTS["zh"]["ok"][:4] + (None, True), "noid", False, "ok"),
    "en-noid-stale": ("en", PLANTS["en"]["stale_context"], "noid", False, "stale_context"),
    "zh-noid-stale": ("zh", PLANTS["zh"]["stale_context"], "noid", False, "stale_context"),
    "en-noid-forbidden": ("en", PLANTS["en"]["permission_violation"], "noid", False, "permission_violation"),
    "zh-noid-forbidden": ("zh", PLANTS["zh"]["permission_violation"], "noid", False, "permission_violation"),
    "en-noid-forbidden-cut": ("en", ("en-retry", ("salary-bands", "retry-v2"), ("retry-v2",), EN_OK, None, True),
                              "noid", False, "permission_violation"),
    "zh-noid-dropped": ("zh", PLANTS["zh"]["dropped_before_context"], "noid", False, "dropped_before_context"),
    "en-noid-miss": ("en", PLANTS["en"]["candidate_miss"], "noid", False, "candidate_miss"),
    # joined to the case by query text (no ragfault.case_id)
    "en-byquery-ok": ("en", PLANTS["en"]["ok"], "id", True, "ok"),
    "zh-byquery-ok": ("zh", PLANTS["zh"]["ok"], "id", True, "ok"),
    "en-byquery-refusal": ("en", PLANTS["en"]["over_refusal"], "id", True, "over_refusal"),
    "zh-byquery-stale": ("zh", PLANTS["zh"]["stale_context"], "id", True, "stale_context"),
    "zh-byquery-unanswerable": ("zh", PLANTS["zh"]["answered_unanswerable"], "id", True, "answered_unanswerable"),
}  # fmt: skip


def query_variant(query: str) -> str:
    """The same question as a user might type it: other case, spacing and punctuation."""
    return "  " + query.upper().replace(" ", "  ").replace("？", "?").replace("，", ", ") + " "
