"""What the demo app does for each question: which chunks its retriever ranks, how many the reranker
keeps, whether the router searches at all, and what the model answers. Each scenario plants one
failure (or none) the way it happens in real systems, and names the root cause ragfault should find.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from importlib import resources

from ragfault.demo.app import Chunk

RUN_ID = "demo-v1"


@dataclass(frozen=True)
class Scenario:
    case_id: str | None  # None: live traffic without a gold case
    question: str
    ranked: tuple[str, ...]  # doc ids in the retriever's rank order; "id:uuid" / "id:noid" variants
    answer: str
    user_scope: tuple[str, ...] = ("public",)
    keep: int = 3
    search: bool = True
    citations: tuple[str, ...] | None = None
    expected: str = "ok"
    story: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("retry-wait", "How long should I wait before retrying after error R-17?",
             ("retry-r17", "export-formats", "api-limits"), "Wait 30 seconds before retrying.",
             keep=2, citations=("retry-r17",), story="healthy"),
    Scenario("sso-protocols", "Which protocols does single sign-on support?",
             ("sso-setup", "password-reset"), "Single sign-on supports SAML 2.0 and OpenID Connect.",
             story="healthy"),
    Scenario("member-transfer", "年度会员能不能转给家人用？", ("member-transfer", "refund-policy-2026"),
             "会员权益仅限本人账号使用，不能转给家人。", user_scope=("support",), story="healthy (Chinese)"),
    Scenario("data-region", "Where is customer data stored by default?", ("data-residency:uuid", "api-limits:uuid"),
             "Customer data is stored in the EU region unless the US region is chosen at signup.",
             story="healthy; chunk UUIDs with the source id only in metadata"),
    Scenario("platinum-price", "What does the Platinum plan cost per month?", ("api-limits", "sso-setup"),
             "The documents do not say what the Platinum plan costs.", story="healthy: correct refusal"),
    Scenario("retention-standard", "How long are logs retained on the Standard plan?",
             ("retention-2025", "retention-2026", "export-formats"), "Logs are retained for 30 days.",
             keep=2, expected="stale_context", story="the index still serves the superseded 2025 policy"),
    Scenario("refund-day-20", "年度会员买了第 20 天，还能退款吗？",
             ("refund-policy-2024", "refund-policy-2026", "member-transfer"), "7 天内可全额退款。",
             user_scope=("support",), keep=2, expected="stale_context",
             story="the answer follows the superseded 2024 refund policy"),
    Scenario("api-rate-limit", "How many API requests per minute are allowed per project?",
             ("sso-setup", "password-reset", "data-residency", "api-limits"), "The API allows 1000 requests per minute.",
             keep=3, expected="dropped_before_context", story="retrieved at rank 4, cut by the reranker's top 3"),
    Scenario("export-download", "In which file formats can I download my logs?", ("retention-2026", "password-reset"),
             "You can download your logs as PDF files.", expected="candidate_miss",
             story="the paraphrase never retrieved the export document"),
    Scenario("r17-meaning", "What does error R-17 mean?", (), "Error R-17 means the server crashed.",
             search=False, expected="no_retrieval", story="the router decided not to search"),
    Scenario("discount-approval", "Who approves large enterprise discounts?", ("enterprise-discounts", "api-limits"),
             "Enterprise discounts above 20 percent need approval from the finance team.",
             expected="permission_violation", story="a finance-only document reached a public user"),
    Scenario("refund-7-day-claim", "年度会员退款期限是多久？", ("refund-policy-2026", "invoice-zh"),
             "年度会员购买后 7 天内可全额退款。", user_scope=("support",), keep=1, expected="unsupported_claims",
             story="the context says 30 days; the model says 7"),
    Scenario("retention-and-export", "How long are logs kept on the Enterprise plan, and how can they be exported?",
             ("retention-2026", "export-formats"), "Logs are kept for 90 days on the Enterprise plan.",
             expected="incomplete_answer", story="the export formats were in context but left out"),
    Scenario("invoice-timing", "付款后多久可以拿到发票？", ("invoice-zh:noid", "member-transfer:noid"), "不清楚，请咨询人工客服。",
             user_scope=("support",), expected="over_refusal",
             story="refused although the invoice policy was in context (documents without ids)"),
    Scenario("family-plan-price", "家庭套餐多少钱一年？", ("refund-policy-2026", "member-transfer"), "家庭套餐 299 元一年。",
             user_scope=("support",), expected="answered_unanswerable", story="invented a price that no document has"),
    Scenario("password-link", "How long is a password reset link valid?", ("password-reset", "sso-setup"),
             "Reset links expire after 24 hours.", citations=("api-limits",), expected="invalid_citation",
             story="cites a document the model never saw"),
    Scenario("status-page", "Where can I see the current service status?", ("data-residency", "api-limits"),
             "The documents do not say where the service status is shown.", expected="evidence_not_in_kb",
             story="the status-page article was never added to the knowledge base"),
    # live traffic: no gold case, judged by the online signals only
    Scenario(None, "Can I change my billing currency?", (), "Billing currency can be changed by support.",
             story="live: no retrieval results", tags=("live",)),
    Scenario(None, "Is log retention 30 days?", ("retention-2025", "export-formats"), "Yes, logs are retained for 30 days.",
             story="live: stale document in context", tags=("live",)),
    Scenario(None, "How do I enable SSO?", ("sso-setup",), "An administrator enables it under Settings, Security.",
             story="live: healthy", tags=("live",)),
)  # fmt: skip


def read_jsonl(name: str) -> list[dict[str, object]]:
    text = resources.files("ragfault.demo").joinpath(name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def chunks_for(scenario: Scenario, kb: dict[str, dict[str, object]]) -> list[Chunk]:
    out = []
    for ref in scenario.ranked:
        doc_id, _, variant = ref.partition(":")
        content = str(kb[doc_id]["content"])
        if variant == "uuid":
            cid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"ragfault-demo/{doc_id}/0"))
            out.append(Chunk(doc_id, content, chunk_id=cid, metadata={"doc_id": doc_id, "chunk": 0}))
        elif variant == "noid":
            out.append(Chunk(doc_id, content, expose_id=False))
        else:
            out.append(Chunk(doc_id, content, metadata={"title": kb[doc_id].get("title")}))
    return out
