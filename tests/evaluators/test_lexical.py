"""The lexical tier's rules (evaluators/lexical/), English and Chinese, on the seed cases."""

from __future__ import annotations

import pytest

from evaluators.lexical import (
    analyze,
    clauses,
    fact_expressed,
    is_refusal,
    sentences,
    split_claims,
    support,
)

POLICY_2024 = "年度会员购买后 7 天内可全额退款，超过 7 天不支持退款。"
POLICY_2026 = "年度会员购买后 30 天内可申请退款，按剩余天数计算退款金额；超过 30 天不支持退款。"
RETENTION_V1 = "Logs are retained for 30 days."
RETENTION_V2 = "Logs are retained for 7 days."
EXPORT_V2 = "Logs can be exported as JSON."
RETRY_V2 = "Error R-17 means the request was rate limited. Wait 30 seconds before retrying."


# --- sentences -----------------------------------------------------------------------------------


def test_sentences_english_keeps_decimals_and_abbreviations() -> None:
    text = "Version 3.5 costs $4.99 per month. E.g. retries are free, i.e. unlimited! Dr. Smith said no. Why?"
    assert sentences(text) == [
        "Version 3.5 costs $4.99 per month.",
        "E.g. retries are free, i.e. unlimited!",
        "Dr. Smith said no.",
        "Why?",
    ]


def test_sentences_chinese_and_newlines_and_list_markers() -> None:
    assert sentences(POLICY_2026) == [
        "年度会员购买后 30 天内可申请退款，按剩余天数计算退款金额；",
        "超过 30 天不支持退款。",
    ]
    assert sentences("1. Logs are kept.\n- Exports are JSON\n\n好的！谢谢") == [
        "Logs are kept.",
        "Exports are JSON",
        "好的！",
        "谢谢",
    ]
    assert sentences("") == [] and sentences(None) == [] and sentences("... 42 ...") == []


# --- claims ----------------------------------------------------------------------------------------


def test_split_claims_english_clauses() -> None:
    assert split_claims("Logs are retained for 7 days. They can be exported as JSON.") == [
        "Logs are retained for 7 days",
        "They can be exported as JSON",
    ]
    # "and" joining two clauses with their own verbs splits; "and" inside a phrase does not
    assert split_claims("Logs are retained for 7 days and can be exported as JSON.") == [
        "Logs are retained for 7 days",
        "can be exported as JSON",
    ]
    assert split_claims("Wait 30 seconds and retry the request.") == ["Wait 30 seconds and retry the request"]
    assert split_claims("Logs are retained for 7 days, but exports are limited to CSV.") == [
        "Logs are retained for 7 days",
        "exports are limited to CSV",
    ]


def test_split_claims_chinese_clauses_need_content_on_both_sides() -> None:
    assert split_claims(POLICY_2026) == [
        "年度会员购买后 30 天内可申请退款",
        "按剩余天数计算退款金额",
        "超过 30 天不支持退款",
    ]
    # "是的" carries no content: it stays with its neighbour instead of becoming a claim
    assert clauses("是的，30 天内可以退款") == ["是的 30 天内可以退款"]


def test_refusal_and_hedge_sentences_are_not_claims() -> None:
    answer = (
        "Logs are retained for 7 days. I don't know whether they can be exported. Please contact support."
    )
    assert split_claims(answer) == ["Logs are retained for 7 days"]
    assert split_claims("家庭套餐 299 元一年，如有疑问请咨询人工客服。") == ["家庭套餐 299 元一年"]
    # a question echo is not a claim
    assert split_claims("How long are logs retained? Logs are retained for 7 days.") == [
        "Logs are retained for 7 days"
    ]


# --- refusals --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "The documents do not say how far retention can be extended.",
        "I don't know.",
        "I'm not sure. Please contact customer support.",
        "Sorry, I cannot find that in the provided context.",
        "资料里没有家庭套餐价格的信息，建议咨询人工客服。",
        "不清楚，请咨询人工客服。",
        "抱歉，知识库中没有相关信息。",
        "无法确定。",
    ],
)
def test_refusals(answer: str) -> None:
    assert is_refusal(answer)
    assert split_claims(answer) == []


@pytest.mark.parametrize(
    "answer",
    [
        "家庭套餐 299 元一年",
        "Logs are retained for 7 days. Please contact support for details.",
        "Refunds are not available after 30 days.",  # a negated fact is not a refusal
        "超过 30 天不支持退款。",
        "会员权益没有有效期限制。",
    ],
)
def test_answers_are_not_refusals(answer: str) -> None:
    assert not is_refusal(answer)
    assert split_claims(answer)


def test_refusal_edges_and_extra_patterns() -> None:
    assert not is_refusal("")
    assert not is_refusal(None)
    assert not is_refusal("That is outside my remit.")
    assert is_refusal("That is outside my remit.", extra_patterns=[r"outside my remit"])
    assert split_claims("That is outside my remit.", extra_refusal_patterns=[r"outside my remit"]) == []


# --- support ---------------------------------------------------------------------------------------


def test_seed_002_seven_days_against_the_2026_policy_is_contradicted() -> None:
    v = support("7 天内可全额退款", sentences(POLICY_2026))
    assert v.label == "contradicted"
    assert v.sentence == sentences(POLICY_2026)[0]
    assert "7 day" in v.missing and any("30 day" in c for c in v.conflicts)


def test_seed_002_seven_days_against_the_2024_policy_is_supported() -> None:
    v = support("7 天内可全额退款", sentences(POLICY_2024))
    assert v.label == "supported" and v.coverage == 1.0 and v.index == 0
    # with both policies in context the claim is faithful to one of them
    both = sentences(POLICY_2026) + sentences(POLICY_2024)
    assert support("7 天内可全额退款", both).label == "supported"


def test_seed_000_stale_answer_is_faithful_to_the_stale_text() -> None:
    assert support("Logs are retained for 30 days.", [RETENTION_V1]).label == "supported"
    v = support("Logs are retained for 30 days.", [RETENTION_V2])
    assert v.label == "contradicted" and v.missing == ("30 day",)
    # ... while the required fact "7 days" is not expressed by that answer
    assert not fact_expressed("7 days", [], "Logs are retained for 30 days.")
    assert fact_expressed("7 days", [], "Under the current policy, logs are retained for 7 days.")


def test_seed_000_invented_extension_is_unsupported() -> None:
    v = support("Retention can be extended to 90 days.", [RETENTION_V2, EXPORT_V2])
    assert v.label == "unsupported"
    assert v.coverage < 0.6


def test_paraphrase_with_stemming_is_supported() -> None:
    v = support("Wait 30 seconds, then retry.", sentences(RETRY_V2))
    assert v.label == "supported" and v.index == 1
    assert support("They can be exported as JSON.", [EXPORT_V2]).label == "supported"


def test_coverage_threshold_is_configurable() -> None:
    claim = "Logs from the billing service are retained for 7 days."  # 3 of 5 content words covered
    assert support(claim, [RETENTION_V2], min_coverage=0.7).label == "unsupported"
    assert support(claim, [RETENTION_V2], min_coverage=0.6).label == "supported"


def test_query_terms_can_be_ignored() -> None:
    claim = "Under the current archive rules, logs are retained for 7 days."
    assert support(claim, [RETENTION_V2]).label == "unsupported"  # 3 of 6 content words
    question = "What are the current archive rules for logs?"
    assert support(claim, [RETENTION_V2], ignore=question).label == "supported"
    # numbers always count, whatever the question says
    wrong = "Under the current archive rules, logs are retained for 30 days."
    assert support(wrong, [RETENTION_V2], ignore=question).label == "contradicted"
    # a claim made only of question words keeps all of them
    assert support("Current archive rules apply.", [RETENTION_V2], ignore=question).label == "unsupported"


def test_numbers_units_money_and_percentages() -> None:
    ctx = ["The family plan costs 299 元 per year and renews at a 15% discount."]
    assert support("The family plan costs 299 元 per year.", ctx).label == "supported"
    assert support("The family plan costs 399 元 per year.", ctx).label == "contradicted"
    assert support("The family plan renews at a 15% discount.", ctx).label == "supported"
    assert support("The family plan renews at a 20% discount.", ctx).label == "contradicted"
    # same number, other unit: not the same fact
    assert support("Logs are retained for 7 weeks.", [RETENTION_V2]).label != "supported"
    assert support("家庭套餐 299 元一年", ["家庭套餐价格为 299 元一年。"]).label == "supported"
    assert support("家庭套餐 199 元一年", ["家庭套餐价格为 299 元一年。"]).label == "contradicted"


def test_dates() -> None:
    ctx = ["The new policy took effect on 2026-03-01."]
    assert support("The new policy took effect on March 1, 2026.", ctx).label == "supported"
    assert support("The new policy took effect on 2026-04-01.", ctx).label == "contradicted"
    assert support("新政策于 2026 年 3 月 1 日生效", ["新政策自 2026年3月1日 起生效。"]).label == "supported"
    assert (
        support("新政策于 2026 年 4 月 1 日生效", ["新政策自 2026年3月1日 起生效。"]).label == "contradicted"
    )


def test_identifiers() -> None:
    ctx = sentences(RETRY_V2)
    assert support("Error R-17 means the request was rate limited.", ctx).label == "supported"
    assert support("Error R17 means the request was rate limited.", ctx).label == "supported"
    v = support("Error R-18 means the request was rate limited.", ctx)
    assert v.label == "contradicted" and v.missing == ("R18",)
    assert support("SKU-123 ships in 2 days.", ["SKU-124 ships in 2 days."]).label == "contradicted"
    assert analyze("Order SKU-123 and retry-v2").identifiers == ("SKU123", "RETRYV2")


def test_negation_english() -> None:
    assert support("Logs are not exported.", [EXPORT_V2]).label == "contradicted"
    assert support("Logs can be exported.", ["Logs cannot be exported."]).label == "contradicted"
    assert support("Logs can't be exported.", ["Logs cannot be exported."]).label == "supported"
    # the same negation, phrased differently
    assert (
        support("No refunds are given after 30 days.", ["Refunds are not given after 30 days."]).label
        == "supported"
    )
    # a negation elsewhere in the sentence does not flip an unrelated claim
    assert (
        support("Logs are retained for 7 days.", ["Logs are retained for 7 days and are not exported."]).label
        == "supported"
    )


def test_negation_chinese() -> None:
    s = sentences(POLICY_2026)
    assert support("超过 30 天不支持退款", s).label == "supported"
    assert support("超过 30 天支持退款", s).label == "contradicted"
    assert support("会员权益不限本人账号使用", ["会员权益仅限本人账号使用。"]).label != "supported"
    # "非常" is not a negation
    assert not analyze("退款非常快").has_negation
    assert analyze("不支持退款").negated


def test_no_context_and_tie_breaking() -> None:
    v = support("Logs are retained for 7 days.", [])
    assert v.label == "unsupported" and v.sentence is None and v.coverage == 0.0
    # two identical sentences: the earlier one decides, every time
    v1 = support("Logs are retained for 7 days.", [RETENTION_V2, RETENTION_V2])
    assert v1.index == 0 and v1 == support("Logs are retained for 7 days.", [RETENTION_V2, RETENTION_V2])


def test_fact_expressed_text_aliases_and_numbers() -> None:
    assert fact_expressed("JSON", [], "They can be exported as JSON.")
    assert fact_expressed(
        "30 天内可退款", ["30 天内可申请退款", "30天内"], "购买后30天内可以申请退款，按剩余天数计算。"
    )
    assert not fact_expressed("30 天内可退款", ["30 天内可申请退款", "30天内"], "7 天内可全额退款")
    assert not fact_expressed("7 days", [], "Logs are retained for 17 days.")
    assert fact_expressed("仅限本人使用", ["仅限本人账号使用", "不能转给家人"], "年度会员不能转给家人。")
    assert not fact_expressed("7 days", [], "")
