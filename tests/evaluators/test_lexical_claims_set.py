"""The lexical checker on the labelled claim/context set of ``bench/lexical/claims.jsonl``: the
figures ``bench/lexical_claims.py`` prints, pinned as exact counts so that a change to the checker
that gains or loses a pair shows here (update the figures in bench/README.md with them)."""

from __future__ import annotations

from collections import Counter

from bench.lexical_claims import evaluate, load, predict


def test_the_set_covers_what_it_claims() -> None:
    rows = load()
    assert len(rows) == 204 and len({r["id"] for r in rows}) == 204
    assert Counter(r["lang"] for r in rows) == {"en": 111, "zh": 93}
    kinds = Counter(r["kind"] for r in rows)
    assert set(kinds) == {"paraphrase", "number", "unit", "period", "date", "identifier", "entity", "negation",
                          "added_clause"}  # fmt: skip
    assert all((r["label"] == "supported") == (r["kind"] == "paraphrase") for r in rows)


def test_pinned_figures() -> None:
    out = evaluate(load())
    assert (out["true_supported"], out["supported"]) == (54, 60)
    assert (out["true_unsupported"], out["unsupported"]) == (136, 144)
    assert round(out["balanced_accuracy"], 3) == 0.922
    assert (out["false_unsupported_paraphrases"], out["paraphrases"]) == (6, 60)
    assert out["by_kind"]["period"] == (10, 10)
    assert out["by_kind"]["unit"] == (17, 17)
    assert out["by_kind"]["entity"] == (22, 29)  # the seven left: Chinese names without Latin letters


def test_unit_period_and_named_things() -> None:
    ctx = "The API allows 600 requests per minute per project."
    assert predict("The API allows 600 requests per hour per project.", ctx) == "unsupported"
    assert predict("Each project may send up to 600 API requests per minute.", ctx) == "supported"
    assert predict("Wait 30 minutes before retrying.", "Wait 30 seconds before retrying.") == "unsupported"
    assert predict("年付套餐每月 1200 元。", "年付套餐每年 1200 元。") == "unsupported"
    assert (
        predict("The annual plan costs $120 a year.", "The annual plan costs $120 per year.") == "supported"
    )
    logs = "Logs can be exported as JSON or CSV from the Logs page."
    assert predict("Logs can be exported as JSON, CSV or PDF from the Logs page.", logs) == "unsupported"
    assert predict("From the Logs page you can export logs in JSON or CSV format.", logs) == "supported"
    assert predict("错误 R-17 表示请求被 Cloudflare 限流。", "错误 R-17 表示请求被限流。") == "unsupported"
