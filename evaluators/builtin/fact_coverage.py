"""Fact coverage and the ``incomplete_answer`` layer (docs/architecture.md, Attribution order).

- ``fact_coverage`` (trace): required facts expressed in the answer / required facts. A fact is
  expressed when its text or an alias is inside the answer after normalization (with numbers that
  agree: "7 days" is not inside "17 days"), else when one answer sentence supports it lexically
  with every number, unit, date and identifier matched ("30 days" does not express "7 days").
  ``passed``: every fact expressed. A refusal expresses no fact (0 / N, status ok).
- ``facts_missing_in_context`` (trace): required facts missing from the answer although they were
  in the context / required facts; ``passed`` when there are none. A fact is in the context when its
  text or an alias is inside the normalized text the model saw (context documents, and the
  answering LLM's prompt when the context was derived from it), when a context sentence supports it
  lexically, or — when every gold evidence unit reached the context — whenever it is missing from the
  answer (the evidence holding it was there).
Both are not applicable without a gold case, without required facts, or without an answer;
``facts_missing_in_context`` also when the trace does not show what the model saw (neither explicit
context documents nor the answering LLM's input: ``answer_llm_input``).
Details list every fact: expressed or not, in context or not, and how.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from evaluators.builtin import _trace_needs as needs
from evaluators.builtin._answer import answer_text, context_norm, context_sentences
from evaluators.eval_input import EvalInput
from evaluators.lexical import DEFAULT_MIN_COVERAGE, fact_expressed, support
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.spec import EvaluatorSpec
from evaluators.text import normalize

NAMES = ("fact_coverage", "facts_missing_in_context")


class Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    min_coverage: float = Field(
        DEFAULT_MIN_COVERAGE,
        gt=0,
        le=1,
        description="Share of a fact's content words one sentence must cover.",
    )


def _in_context(
    inp: EvalInput, fact_text: str, aliases: list[str], ctx_norm: str, sents: list[str], cfg: Config
) -> str | None:
    """How the fact is in the context (``text``, ``lexical``, ``evidence``), or None."""
    for v in (fact_text, *aliases):
        n = normalize(v)
        if n and n in ctx_norm:
            return "text"
    if sents and any(support(v, sents, cfg.min_coverage).label == "supported" for v in (fact_text, *aliases)):
        return "lexical"
    m = inp.matching
    if m.units and m.in_context >= {u.index for u in m.units}:
        return "evidence"
    return None


def evaluate(inp: EvalInput, config: Config) -> list[Metric]:
    case = inp.case
    if case is None:
        return [not_applicable(n, "no gold case") for n in NAMES]
    facts = case.required_facts
    if not facts:
        return [not_applicable(n, "no required facts") for n in NAMES]
    answer = answer_text(inp)
    if not answer.strip():
        return [needs.missing(n, needs.ANSWER) for n in NAMES]
    # what the model saw is unknown: whether a fact was in it cannot be told
    seen = inp.matching.has_context_stage
    ctx_norm = context_norm(inp) if seen else ""
    ctx = context_sentences(inp)
    rows = []
    expressed = 0
    missing_in_ctx = 0
    for f in facts:
        ok = fact_expressed(f.text, f.aliases, answer, config.min_coverage)
        how = None if ok or not seen else _in_context(inp, f.text, f.aliases, ctx_norm, ctx.sentences, config)
        expressed += ok
        missing_in_ctx += (not ok) and how is not None
        rows.append(
            {
                "id": f.id,
                "text": f.text,
                "expressed": ok,
                "in_context": how is not None if not ok else None,
                "how": how,
            }
        )
    n = len(facts)
    missing = [r["id"] for r in rows if not r["expressed"]]
    missing_ctx = [r["id"] for r in rows if not r["expressed"] and r["in_context"]]
    coverage = ratio(
        "fact_coverage", expressed, n, passed=expressed == n, details={"facts": rows, "missing": missing}
    )
    if not seen:
        return [coverage, needs.missing("facts_missing_in_context", needs.ANSWER_LLM_INPUT)]
    return [
        coverage,
        ratio(
            "facts_missing_in_context",
            missing_in_ctx,
            n,
            passed=missing_in_ctx == 0,
            details={
                "missing_in_context": missing_ctx,
                "missing": missing,
                "facts": rows,
                "context": ctx.source,
            },
        ),
    ]


SPEC = EvaluatorSpec(
    name="fact_coverage",
    version="1",
    fn=evaluate,
    config=Config,
    applies_to=("trace",),
    tier="cheap",
    needs_case=True,
    description="Required facts expressed in the answer, and those missing although in the context.",
)
