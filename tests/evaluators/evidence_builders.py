"""Build EvalInput objects by hand (no server): traces with a retriever, an optional reranker and an
answering LLM call whose prompt holds the context, as the collector's assembler would see them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from collector.normalize import DEFAULT_SOURCE_KEYS
from collector.normalize.docvalues import make_doc
from collector.normalize.step import Stage
from evaluators.eval_input import EvalInput, KnowledgeBase
from evaluators.gold import GoldCase, KBDocument
from evaluators.metric import Metric
from evaluators.trace_view import StepDoc, StepInfo, TraceView

T0 = datetime(2026, 9, 15, 12, 0, 0)


def step(
    span_id: str, step_type: str, *, start: int = 0, inp: str | None = None, out: str | None = None
) -> StepInfo:
    return StepInfo(
        span_id=span_id,
        parent_span_id=None if span_id == "root" else "root",
        step_type=step_type,
        name=span_id,
        start_time=T0 + timedelta(seconds=start),
        end_time=T0 + timedelta(seconds=start + 1),
        duration_ms=1000.0,
        status_code="OK",
        input_text=inp,
        output_text=out,
        is_root=span_id == "root",
    )


def docs(
    span_id: str, stage: Stage, items: list[dict[str, Any] | str], source: str = "span"
) -> list[StepDoc]:
    """Step documents as the normalizer makes them: ``{"id", "content", "metadata", "score"}`` or a
    plain content string (no id at all, as LangChain sends)."""
    out = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            item = {"content": item}
        d = make_doc(
            stage,
            i,
            item.get("id"),
            item.get("content"),
            item.get("score"),
            item.get("metadata"),
            DEFAULT_SOURCE_KEYS,
        )
        out.append(StepDoc(span_id, stage, i, d.doc_id, d.chunk_id, d.content, d.score, d.metadata, source))
    return out


def content_of(item: dict[str, Any] | str) -> str:
    return item if isinstance(item, str) else item.get("content") or ""


def rag(
    *,
    candidates: list[dict[str, Any] | str] | None = None,
    reranked: list[dict[str, Any] | str] | None = None,
    rerank_input: list[dict[str, Any] | str] | None = None,
    context: list[dict[str, Any] | str] | None = None,
    prompt: str | None = None,
    explicit_context: bool = False,
    answer: str = "An answer.",
    llm: bool = True,
    extra_steps: Sequence[tuple[str, list[dict[str, Any] | str]]] = (),
    user_scope: tuple[str, ...] | None = None,
    start: datetime = T0,
) -> TraceView:
    """A trace; ``candidates=None`` means no retrieval step, ``[]`` one that returned nothing (and
    recorded so: its output is ``[]``, not unknown). Context defaults to reranked, else candidates;
    it is derived from the prompt (as the assembler does) unless ``explicit_context``."""
    steps = [step("root", "chain", out=answer)]
    documents: list[StepDoc] = []
    if candidates is not None:
        steps.append(step("ret", "retrieval", start=1, out=None if candidates else "[]"))
        documents += docs("ret", "candidate", candidates)
    for i, (span_id, items) in enumerate(extra_steps):
        steps.append(step(span_id, "retrieval", start=2 + i, out=None if items else "[]"))
        documents += docs(span_id, "candidate", items)
    if reranked is not None:
        steps.append(step("rr", "rerank", start=5))
        documents += docs(
            "rr", "rerank_input", rerank_input if rerank_input is not None else candidates or []
        )
        documents += docs("rr", "reranked", reranked)
    if context is None:
        context = reranked if reranked is not None else candidates or []
    if llm:
        if prompt is None:
            prompt = "Context:\n" + "\n\n".join(content_of(c) for c in context) + "\n\nQuestion: ?"
        steps.append(step("llm", "llm", start=6, inp=prompt, out=answer))
        if not explicit_context:
            # what the assembler derives: candidates whose content is inside the prompt
            documents += [
                StepDoc("llm", "context", i, d.doc_id, d.chunk_id, d.content, d.score, d.metadata, "derived")
                for i, d in enumerate(docs("llm", "context", context))
            ]
    if explicit_context:
        documents += docs("root", "context", context)
    return TraceView(
        trace_id="t" * 32,
        start_time=start,
        end_time=start + timedelta(seconds=10),
        user_scope=user_scope,
        answer_text=answer,
        answer_span_id="llm" if llm else None,
        steps=tuple(steps),
        documents=tuple(documents),
    )


def case(evidence: list[dict[str, Any]] | None = None, **kw: Any) -> GoldCase:
    return GoldCase.model_validate({"case_id": "c1", "query": "q?", "evidence": evidence or [], **kw})


def kb(*rows: dict[str, Any]) -> KnowledgeBase:
    return KnowledgeBase([KBDocument.model_validate(r) for r in rows])


def inp(trace: TraceView, gold: GoldCase | None = None, registry: KnowledgeBase | None = None) -> EvalInput:
    as_of = gold.as_of if gold is not None and gold.as_of else trace.start_time
    return EvalInput(trace, gold, registry or KnowledgeBase(), as_of, DEFAULT_SOURCE_KEYS)


def one(metrics: list[Metric], name: str, span_id: str | None = None) -> Metric:
    found = [m for m in metrics if m.metric == name and m.span_id == span_id]
    assert len(found) == 1, f"{name}@{span_id}: {found}"
    return found[0]
