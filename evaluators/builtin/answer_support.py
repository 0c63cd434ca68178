"""Answer support by the lexical tier (DESIGN §5, the cheap tier): three values per claim.

``answer_support`` on the LLM step that produced the answer (``span_id`` = that step, NULL when the
trace has no LLM step): the answer is split into atomic claims (``evaluators.lexical.split_claims``;
refusal and hedge sentences and questions are not claims) and each claim is read for structure and
checked against the sentences of the final context (``evaluators.lexical.claims.check_claim``):
*supported* (a clause about the same entity and attribute states it, values equal after
normalization, bounds, periods, conditions and polarity agreeing), *contradicted* (the clause it
aligns to states another value, bound, period, weekday, polarity or quantifier, or a condition the
claim drops; the counterpart is in ``conflicts``), *unsupported* (the context never speaks of it),
or *undecided* (the tier cannot show either way).

Value = supported / decided claims (supported, contradicted, unsupported); ``passed`` when every
decided claim is supported. Undecided claims count neither way: a trace whose claims are all
undecided is not applicable (reason ``all claims undecided``). Not applicable without claims (a
refusal) or without any record of what the model saw. When some claims are undecided, a second row
``answer_support_undecided`` (undecided / claims) tells the judge tier's sampler to send the trace to
the judge (trigger ``undecided_claims``), whose ``judge_answer_support`` then decides them.

The context (``evaluators.builtin._answer.context_sentences``): the context documents; without
any, the answering LLM's input minus the user's question; without that, the candidates.
Words of the user's question do not count toward coverage (``ignore_query_terms``), so a claim is
not supported merely for restating the question; values, names, ids and negations always count.
Details: every claim with its verdict, the deciding clause and its document, what it lacks
(``missing``) and the differences (``conflicts``), and the counts of supported, contradicted,
unsupported and undecided claims.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evaluators.builtin import _trace_needs as needs
from evaluators.builtin._answer import answer_text, context_sentences, query_text
from evaluators.eval_input import EvalInput
from evaluators.lexical import is_refusal, split_claims
from evaluators.lexical.claims import (
    DEFAULT_ABSENT_COVERAGE,
    DEFAULT_CONTRADICTION_COVERAGE,
    DEFAULT_MIN_COVERAGE,
    check_claim,
)
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.spec import EvaluatorSpec, Regexes

UNDECIDED = "answer_support_undecided"


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
        description="Share of a claim's content words the clause that states otherwise must cover for the claim to count as contradicted.",
    )
    absent_coverage: float = Field(
        DEFAULT_ABSENT_COVERAGE,
        gt=0,
        le=1,
        description="A claim whose content words the whole context covers less than this share of is unsupported (the context never speaks of it).",
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
        return [needs.missing("answer_support", needs.ANSWER, span_id=sid)]
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
        return [
            not_applicable(
                "answer_support", needs.reason(needs.ANSWER_LLM_INPUT, "no context recorded"), span_id=sid,
                claims=len(claims), missing_fields=[needs.ANSWER_LLM_INPUT],
            )
        ]  # fmt: skip
    ignore = query_text(inp) if config.ignore_query_terms else None
    rows = []
    counts = {"supported": 0, "contradicted": 0, "unsupported": 0, "undecided": 0}
    for c in claims:
        v = check_claim(
            c,
            ctx.sentences,
            config.min_coverage,
            ignore=ignore,
            absent_coverage=config.absent_coverage,
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
    decided = n - counts["undecided"]
    details = {"claims": rows, **counts, "context": ctx.source, "context_sentences": len(ctx.sentences)}
    out: list[Metric]
    if decided == 0:
        out = [not_applicable("answer_support", "all claims undecided", span_id=sid, **details)]
    else:
        out = [
            ratio(
                "answer_support",
                counts["supported"],
                decided,
                span_id=sid,
                passed=counts["supported"] == decided,
                details=details,
            )
        ]
    if counts["undecided"]:
        out.append(
            ratio(
                UNDECIDED,
                counts["undecided"],
                n,
                span_id=sid,
                details={"undecided": counts["undecided"], "claims": n},
            )
        )
    return out


SPEC = EvaluatorSpec(
    name="answer_support",
    version="2",
    fn=evaluate,
    config=Config,
    applies_to=("llm",),
    tier="cheap",
    needs_case=False,
    description="Lexical claim support, three-valued: claims supported, contradicted or unsupported by the context, or undecided (left to the judge).",
)
