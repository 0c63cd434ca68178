"""Freshness (docs/architecture.md, Gold cases and the registry): stale documents among the candidates and in the final context.

A document is judged at time t (the case's ``as_of``, else the trace time: ``EvalInput.as_of``) from
its registry row (found by id, source id or content), else from the span's own metadata
(``version``, ``valid_from``, ``valid_to``, ``superseded_by``). It is stale when:
- ``superseded``: ``superseded_by`` is set and the successor is in force at t (the successor's
  ``valid_from`` is unset or <= t); when the successor is not in the registry, when ``valid_to`` is
  unset or <= t;
- ``expired``: ``valid_to`` <= t;
- ``not_yet_valid``: ``valid_from`` > t.
Without any time, only supersession can be judged.

Metrics (documents counted distinct by registry id, else id, else normalized content):
- ``stale_candidates`` per retrieval step and per trace: stale candidates / candidates. A flag:
  ``passed`` stays NULL (it is not an attribution layer).
- ``stale_context`` per trace: stale context documents / context documents. ``passed`` follows the
  ``stale_context`` policy: ``always`` fails whenever a stale document is in the context;
  ``when_followed`` (default) fails only when the answer follows a stale document — some claim of
  the answer is supported (lexical checker) by a sentence of a stale context document and by no
  sentence of a fresh context document.
The case's ``negative_doc_ids`` found among the candidates or in the context are reported in
``details.negative`` as flags; they do not change the counts.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evaluators import lexical
from evaluators.builtin._docs import as_time, distinct, doc_name, judged_once, meta, per_registry
from evaluators.eval_input import EvalInput
from evaluators.gold import KBDocument
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.spec import EvaluatorSpec
from evaluators.trace_view import StepDoc


class Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    stale_context: Literal["when_followed", "always"] = Field(
        "when_followed",
        description=(
            "When a stale document in the final context fails `stale_context`: `always`, or only "
            "`when_followed` (the answer states something only the stale document supports)."
        ),
    )
    min_coverage: float | None = Field(
        None,
        gt=0,
        le=1,
        description=(
            "Share of a claim's content terms a sentence must cover to support it "
            "(default: the lexical checker's)."
        ),
    )


def staleness(inp: EvalInput, doc: StepDoc) -> dict[str, Any] | None:
    """Why a document is stale at ``inp.as_of`` (None when it is not, or nothing is known)."""
    kb_doc = inp.matching.kb_doc(doc)
    if kb_doc is None:
        # without metadata nothing is known, at any time
        return _staleness(inp, doc, None) if doc.metadata else None
    if not kb_doc.superseded_by and kb_doc.valid_from is None and kb_doc.valid_to is None:
        return None  # nothing in its registry row can make it stale, at any time
    # a registry document's staleness depends on its row, the registry and the time alone (its
    # name is its registry id): computed once per registry and time, shared by every trace
    return per_registry(
        inp, ("freshness.staleness", kb_doc.doc_id, inp.as_of), lambda: _staleness(inp, doc, kb_doc)
    )


def staleness_memo(inp: EvalInput) -> Callable[[StepDoc], dict[str, Any] | None]:
    """``staleness`` for the documents of this trace, worked out once per document (freshness and
    follows_stale both judge the same candidates and context documents; callers only read). The
    trace's cache holds the judgements, not the function: a function there that refers to the
    input would make a cycle only the garbage collector frees."""
    memo: dict[int, dict[str, Any] | None] = inp._cache.setdefault("freshness.staleness", {})

    def fn(doc: StepDoc) -> dict[str, Any] | None:
        key = id(doc)  # the documents belong to the trace, which outlives the cache
        try:
            return memo[key]
        except KeyError:
            found = memo[key] = staleness(inp, doc)
            return found

    return fn


def _staleness(inp: EvalInput, doc: StepDoc, kb_doc: KBDocument | None) -> dict[str, Any] | None:
    if kb_doc is not None:
        source = "registry"
        version, valid_from, valid_to, successor = (
            kb_doc.version,
            kb_doc.valid_from,
            kb_doc.valid_to,
            kb_doc.superseded_by,
        )
    else:
        source = "metadata"
        version = meta(doc, "version")
        valid_from = meta(doc, "valid_from")
        valid_to = meta(doc, "valid_to")
        successor = meta(doc, "superseded_by")
    valid_from, valid_to = as_time(valid_from), as_time(valid_to)
    successor = str(successor) if successor not in (None, "") else None
    t = as_time(inp.as_of)
    why: list[str] = []
    if successor:
        succ = inp.kb.get(successor)
        if t is None:
            why.append("superseded")
        elif succ is not None:
            succ_from = as_time(succ.valid_from)
            if succ_from is None or succ_from <= t:
                why.append("superseded")
        elif valid_to is None or valid_to <= t:
            why.append("superseded")
    if t is not None and valid_to is not None and valid_to <= t:
        why.append("expired")
    if t is not None and valid_from is not None and valid_from > t:
        why.append("not_yet_valid")
    if not why:
        return None
    out: dict[str, Any] = {"doc_id": doc_name(inp, doc), "why": why, "source": source}
    if successor:
        out["superseded_by"] = successor
    if valid_to is not None:
        out["valid_to"] = valid_to.isoformat()
    if valid_from is not None and "not_yet_valid" in why:
        out["valid_from"] = valid_from.isoformat()
    if version is not None:
        out["version"] = str(version)
    return out


def _content(inp: EvalInput, doc: StepDoc) -> str:
    if doc.content:
        return doc.content
    kb_doc = inp.matching.kb_doc(doc)
    return kb_doc.content or "" if kb_doc is not None else ""


def followed(
    inp: EvalInput, stale: list[StepDoc], fresh: list[StepDoc], min_coverage: float | None = None
) -> dict[str, list[str]]:
    """For each stale document the answer follows, the claims only it supports."""
    answer = inp.trace.answer_text
    if not answer or not stale:
        return {}
    coverage = lexical.DEFAULT_MIN_COVERAGE if min_coverage is None else min_coverage

    def supported(claim: str, sents: list[str]) -> bool:
        return bool(sents) and lexical.support(claim, sents, coverage).label == "supported"

    fresh_sents = [s for d in fresh for s in lexical.sentences(_content(inp, d))]
    out: dict[str, list[str]] = {}
    for claim in lexical.split_claims(answer):
        if supported(claim, fresh_sents):
            continue
        for d in stale:
            if supported(claim, lexical.sentences(_content(inp, d))):
                out.setdefault(doc_name(inp, d), []).append(claim)
    return out


def _negative(inp: EvalInput, docs: list[StepDoc]) -> list[str]:
    if inp.case is None or not inp.case.negative_doc_ids:
        return []
    neg = set(inp.case.negative_doc_ids)
    found: list[str] = []
    for d in docs:
        hits = neg & inp.matching.ids_of(d)
        found.extend(sorted(hits - set(found)))
    return found


def evaluate(inp: EvalInput, config: Config) -> list[Metric]:
    out: list[Metric] = []
    trace = inp.trace
    stale_of = staleness_memo(inp)
    as_of = inp.as_of.isoformat() if isinstance(inp.as_of, datetime) else None
    by_docs: dict[tuple[int, ...], list[dict[str, Any]]] = {}

    def stale_among(docs: list[StepDoc]) -> list[dict[str, Any]]:
        return judged_once(by_docs, docs, lambda d: [s for s in map(stale_of, d) if s])

    # candidates, per step and per trace
    for step, docs in trace.candidates_by_step:
        docs = distinct(inp, docs)
        stale = stale_among(docs)
        out.append(
            ratio(
                "stale_candidates",
                len(stale),
                len(docs),
                span_id=step.span_id,
                details={"stale": stale, "as_of": as_of},
                na_reason="no candidates",
            )
        )
    cands = distinct(inp, trace.candidates)
    if not trace.candidates_by_step:
        out.append(not_applicable("stale_candidates", "no retrieval step"))
    else:
        stale = stale_among(cands)
        out.append(
            ratio(
                "stale_candidates",
                len(stale),
                len(cands),
                details={"stale": stale, "negative": _negative(inp, cands), "as_of": as_of},
                na_reason="no candidates",
            )
        )

    # context
    ctx = distinct(inp, trace.context_docs)
    if not ctx:
        out.append(not_applicable("stale_context", "no context documents"))
        return out
    judged = [(d, stale_of(d)) for d in ctx]
    stale_docs = [d for d, s in judged if s]
    fresh_docs = [d for d, s in judged if not s]
    follows = followed(inp, stale_docs, fresh_docs, config.min_coverage)
    stale = [{**s, "followed": s["doc_id"] in follows} for _, s in judged if s]
    passed = not stale if config.stale_context == "always" else not follows
    out.append(
        ratio(
            "stale_context",
            len(stale),
            len(ctx),
            passed=passed,
            label=config.stale_context,
            details={
                "stale": stale,
                "followed_claims": follows,
                "policy": config.stale_context,
                "negative": _negative(inp, ctx),
                "as_of": as_of,
            },
        )
    )
    return out


SPEC = EvaluatorSpec(
    name="freshness",
    version="1",
    fn=evaluate,
    config=Config,
    applies_to=("retrieval", "trace"),
    tier="cheap",
    needs_case=False,
    description="Superseded, expired or not-yet-valid documents among the candidates and in the context.",
)
