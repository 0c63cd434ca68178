"""Answer support by the lexical checker (DESIGN §5, the cheap tier).

``answer_support`` on the LLM step that produced the answer (``span_id`` = that step, NULL when the
trace has no LLM step): the answer is split into atomic claims (``evaluators.lexical.split_claims``;
refusal and hedge sentences and questions are not claims) and each claim is checked against the
sentences of the final context: supported when one sentence covers ``min_coverage`` of its content
words and matches every number with its unit, date, identifier and negation; contradicted when a
sentence about the same thing conflicts with it (7 days vs 30 days); else unsupported.
Value = supported / claims; ``passed`` when every claim is supported; not applicable without claims
(a refusal) or without any record of what the model saw.

The context (``evaluators.builtin._answer.context_sentences``): the context documents; without
any, the answering LLM's input minus the user's question; without that, the candidates.
Words of the user's question do not count toward coverage (``ignore_query_terms``), so a claim is
not supported merely for restating the question; numbers, dates, ids and negations always count.
Details: every claim with its verdict, the deciding sentence and its document, and the counts of
supported, contradicted and unsupported claims.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evaluators.base import EvalInput, EvaluatorSpec, Metric, Regexes, not_applicable, ratio
from evaluators.builtin._answer import answer_text, context_sentences, query_text
from evaluators.lexical import (
    DEFAULT_CONTRADICTION_COVERAGE,
    DEFAULT_MIN_COVERAGE,
    is_refusal,
    split_claims,
    support,
)


class Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    min_coverage: float = Field(
        DEFAULT_MIN_COVERAGE,
        gt=0,
        le=1,
        description="Share of a claim's content words one context sentence must cover.",
    )
    contradiction_coverage: float = Field(
        DEFAULT_CONTRADICTION_COVERAGE,
        gt=0,
        le=1,
        description="Share a conflicting sentence must cover for the claim to count as contradicted (not just unsupported).",
    )
    ignore_query_terms: bool = Field(
        True, description="Do not count words of the user's question toward coverage."
    )
    extra_refusal_patterns: Regexes = Field((), description="Extra refusal/hedge patterns (not claims).")

    @model_validator(mode="after")
    def _order(self) -> Config:
        if self.contradiction_coverage > self.min_coverage:
            raise ValueError("contradiction_coverage must not exceed min_coverage")
        return self


def evaluate(inp: EvalInput, config: Config) -> list[Metric]:
    step = inp.trace.answer_step
    sid = step.span_id if step is not None else None
    answer = answer_text(inp)
    if not answer.strip():
        return [not_applicable("answer_support", "no answer", span_id=sid)]
    claims = split_claims(answer, config.extra_refusal_patterns)
    if not claims:
        return [
            not_applicable(
                "answer_support",
                "no claims",
                span_id=sid,
                refusal=is_refusal(answer, config.extra_refusal_patterns),
            )
        ]
    ctx = context_sentences(inp)
    if ctx.source == "none":
        return [not_applicable("answer_support", "no context recorded", span_id=sid, claims=len(claims))]
    ignore = query_text(inp) if config.ignore_query_terms else None
    rows = []
    counts = {"supported": 0, "contradicted": 0, "unsupported": 0}
    for c in claims:
        v = support(
            c,
            ctx.sentences,
            config.min_coverage,
            ignore=ignore,
            contradiction_coverage=config.contradiction_coverage,
        )
        counts[v.label] += 1
        rows.append(
            {
                "claim": c,
                "verdict": v.label,
                "sentence": v.sentence,
                "doc_id": ctx.doc_ids[v.index] if v.index is not None else None,
                "coverage": v.coverage,
                "missing": list(v.missing),
                "conflicts": list(v.conflicts),
            }
        )
    n = len(claims)
    return [
        ratio(
            "answer_support",
            counts["supported"],
            n,
            span_id=sid,
            passed=counts["supported"] == n,
            details={
                "claims": rows,
                **counts,
                "context": ctx.source,
                "context_sentences": len(ctx.sentences),
            },
        )
    ]


SPEC = EvaluatorSpec(
    name="answer_support",
    version="1",
    fn=evaluate,
    config=Config,
    applies_to=("llm",),
    tier="cheap",
    needs_case=False,
    description="Lexical claim support: answer claims supported by a context sentence (numbers, dates, ids, negation matched).",
)
