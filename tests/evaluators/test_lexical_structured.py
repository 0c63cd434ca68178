"""The three-valued lexical tier (``evaluators.lexical.claims``) on the structured claim set of
``bench/lexical/structured.jsonl`` and on the values and verdicts it is built from.

The set is data grown by ``bench/lexical/generate.py`` from hand-written seeds: the file must be
what the generator writes. The figures are the issue's targets (per language too) and the counts
``bench/lexical_structured.py`` prints, pinned so that a change to the tier that gains or loses a
pair shows here."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from bench.lexical import generate
from bench.lexical_structured import evaluate, load
from evaluators.lexical import sentences
from evaluators.lexical.claims import check_claim
from evaluators.lexical.values import read_values, same_value

CLASSES = {
    "entity_swap", "quantifier", "comparator", "condition_dropped", "negation", "period", "unit", "weekday",
    "number", "time", "date", "unit_conversion", "time_format", "number_words", "cn_magnitude", "date_format",
    "adjacent_sentences", "double_negative",
}  # fmt: skip


def test_the_set_is_what_the_generator_writes_and_covers_the_classes() -> None:
    seeds = [
        json.loads(line)
        for name in ("seeds_en.jsonl", "seeds_zh.jsonl")
        for line in (generate.HERE / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    rows = load()
    assert generate.build(seeds) == [{k: r[k] for k in r if k != "kind"} for r in rows]
    assert len(rows) >= 600 and len({r["id"] for r in rows}) == len(rows)
    assert Counter(r["lang"] for r in rows) == {"en": 364, "zh": 372}
    assert len({r["domain"] for r in rows}) >= 9
    cats = Counter(r["category"] for r in rows)
    assert set(cats) >= CLASSES
    assert {r["label"] for r in rows} == {"supported", "unsupported"}
    assert Counter(r["origin"] for r in rows)["generated"] > Counter(r["origin"] for r in rows)["hand"]


def test_targets_on_the_set_overall_and_per_language() -> None:
    out = evaluate(load())
    for scope in [out["all"], *out["by_lang"].values()]:
        assert scope["flag_precision"] >= 0.95  # what it flags as unsupported is right
        assert scope["decided_rate"] >= 0.70
        assert scope["balanced_accuracy"] >= 0.90
    a = out["all"]
    assert (a["pairs"], a["decided"], a["flagged"]) == (736, 657, 406)
    assert a["supported_recall"] == (247, 248) and a["unsupported_recall"] == (405, 409)


def test_the_older_set_keeps_the_targets() -> None:
    """``bench/lexical/claims.jsonl``, written before this tier, read the same way."""
    out = evaluate(load("claims"))
    for scope in [out["all"], *out["by_lang"].values()]:
        assert scope["flag_precision"] >= 0.95 and scope["decided_rate"] >= 0.70
        assert scope["balanced_accuracy"] >= 0.90


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("2 hours", "120 minutes"),
        ("an hour and a half", "90 minutes"),
        ("11:59 p.m.", "23:59"),
        ("晚上 11 点 59 分", "11:59 p.m."),
        ("twenty-five dollars", "$25"),
        ("5 万元", "50000 元"),
        ("五万元", "50,000 元"),
        ("四千二百元", "4200 元"),
        ("2 kg", "4 斤"),
        ("12 months", "1 year"),
        ("October 15, 2026", "2026-10-15"),
        ("2026 年 10 月 15 日", "15 October 2026"),
        ("３０ 天", "30 days"),  # full-width digits
    ],
)
def test_equal_values_written_differently(a: str, b: str) -> None:
    (va,), (vb,) = read_values(a).values, read_values(b).values
    assert same_value(va, vb)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("2 hours", "2 days"),
        ("20 kg", "20 pounds"),
        ("3 p.m.", "3 a.m."),
        ("5 万元", "5 千元"),
        ("4 weeks", "1 month"),
    ],
)
def test_different_values_stay_apart(a: str, b: str) -> None:
    (va,), (vb,) = read_values(a).values, read_values(b).values
    assert not same_value(va, vb)


def test_weekdays_and_bounds() -> None:
    assert read_values("open Monday to Friday").weekdays == 0b0011111
    assert read_values("周一至周五开放").weekdays == read_values("工作日开放").weekdays == 0b0011111
    assert read_values("at most 2 units").values[0].direction == "upper"
    assert read_values("at least 2 units").values[0].direction == "lower"
    assert read_values("商品签收后 7 天内").values[0].direction == "upper"  # 内 binds tighter than 后
    assert read_values("回调失败后最多重试 5 次").values[0].direction == "upper"


SHIPPING = sentences(
    "Standard shipping is free on orders over $75. Express shipping costs $15 and arrives in 2 business days."
)
LEAVE = sentences(
    "Full-time employees receive 20 days of paid leave per year. Contractors receive 5 days of paid leave per year."
)


def test_a_fact_moved_to_the_other_entity_is_contradicted_with_the_counterpart() -> None:
    v = check_claim("Contractors receive 20 days of paid leave per year.", LEAVE)
    assert v.label == "contradicted" and v.sentence == LEAVE[1] and v.conflicts == ("20 days vs 5 days",)
    assert check_claim("Contractors get 5 days of paid leave each year.", LEAVE).label == "supported"


def test_a_dropped_condition_and_a_flipped_comparator_are_contradicted() -> None:
    v = check_claim("Standard shipping is free.", SHIPPING)
    assert v.label == "contradicted" and "condition dropped: lower $75" in v.conflicts
    v = check_claim("Standard shipping is free on orders under $75.", SHIPPING)
    assert v.label == "contradicted" and v.conflicts == ("upper $75 vs lower $75",)
    assert check_claim("Orders over $75 ship free with standard shipping.", SHIPPING).label == "supported"


def test_periods_quantifiers_negation_and_weekdays() -> None:
    fees = sentences("Tuition is $4,200 per semester. The lab fee is $150 per year.")
    assert check_claim("Tuition is $4,200 per year.", fees).conflicts == ("per year vs per semester",)
    sso = sentences("Single sign-on is available only on the Enterprise plan. Two-factor authentication is available on every plan.")  # fmt: skip
    assert check_claim("Single sign-on is available on every plan.", sso).label == "contradicted"
    zh = sentences("试用期员工不能申请远程办公。转正后每周最多可远程办公 2 天。")
    assert check_claim("试用期员工可以申请远程办公。", zh).label == "contradicted"
    assert check_claim("转正后每周至少远程办公 2 天。", zh).label == "contradicted"
    bus = sentences("酒店班车每周二和周四早上 7:15 发车。")
    assert check_claim("酒店班车每周一和周三早上 7:15 发车。", bus).label == "contradicted"


def test_equal_values_and_support_across_two_sentences_are_supported() -> None:
    checkin = sentences(
        "Online check-in opens 24 hours before departure. It closes 90 minutes before departure."
    )
    assert (
        check_claim("Online check-in closes an hour and a half before departure.", checkin).label
        == "supported"
    )
    assert check_claim("Online check-in opens one day before departure.", checkin).label == "supported"
    limit = sentences("单日转账限额为 5 万元。超过限额需要到柜台办理。")
    assert check_claim("单日转账限额为 50000 元。", limit).label == "supported"
    assert check_claim("单日转账限额为 5000 元。", limit).label == "contradicted"


def test_what_it_cannot_show_is_undecided_and_what_the_context_never_says_is_unsupported() -> None:
    ctx = sentences("Refunds are accepted within 30 days of purchase.")
    v = check_claim("Refunds of annual plans are accepted within 30 days.", ctx)
    assert v.label == "undecided" and not v.decided
    v = check_claim("The family plan costs $299 a year.", ctx)
    assert v.label == "unsupported" and any("not in context" in m for m in v.missing)
    assert (
        check_claim("家庭套餐 299 元一年。", sentences("年度会员购买后 30 天内可申请退款。")).label
        == "unsupported"
    )
