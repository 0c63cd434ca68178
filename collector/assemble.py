"""Trace assembly at settle time: the query, the answer, and the context stage (DESIGN §3).

A trace's spans arrive in any order and in several requests, so what needs the whole trace is done
once it has settled: find the query text and the final answer, and — when the app did not send the
final context explicitly (``ragfault.context.documents``) — derive it: a candidate is in context when
its content appears in the input of the LLM call that produced the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

from collector.normalize.common import parse_json, unwrap_text
from collector.textnorm import normalize, normalize_doc

# Which row represents a document found in the prompt when it appears in several stages.
# where a context document found in the prompt is named from first (``settle`` fetches by this too)
# (``opened``: a document a search agent fetched, ``collector.search_stages``, derived with the trace)
STAGE_PRIORITY = {"reranked": 0, "candidate": 1, "rerank_input": 2, "opened": 3}


@dataclass
class StepView:
    span_id: str
    parent_span_id: str | None
    step_type: str
    start_time: Any
    end_time: Any
    query_text: str | None
    input_text: str | None
    output_text: str | None
    user_scope: list[str] | None
    is_root: bool
    tool_name: str | None = None
    tool_arguments: str | None = None
    tool_result: str | None = None
    status_code: str | None = None


@dataclass
class DocView:
    span_id: str
    stage: str
    position: int
    doc_id: str | None
    chunk_id: str | None
    content: str | None
    score: float | None
    metadata: str | None
    source: str


DOC_FIELDS = tuple(f.name for f in fields(DocView))  # a document row's columns, in order


@dataclass
class Assembly:
    query_text: str | None = None
    answer_text: str | None = None
    answer_span_id: str | None = None
    user_scope: list[str] | None = None
    context: list[DocView] = field(default_factory=list)


def plain_text(value: str | None) -> str | None:
    """The human text inside a JSON-wrapped input or output value, else the value itself."""
    return unwrap_text(value)


_REPR = re.compile(r"^[A-Za-z_][\w.]*\((?:[A-Za-z_]\w*=|\))")


def is_structured(text: str | None) -> bool:
    """True for a JSON object or array, or a Python object repr (``ChatMessage(_role=...)``): text that
    no person asked or was answered with."""
    if not text:
        return False
    s = text.strip()
    if s[:1] in ("{", "[") and isinstance(parse_json(s), (dict, list)):
        return True
    return bool(_REPR.match(s))


def _sort_key(s: StepView) -> tuple[Any, Any]:
    return (s.end_time is None, s.end_time or s.start_time)


def _llm_ancestors(step: StepView, by_id: dict[str, StepView]) -> list[StepView]:
    """The LLM steps enclosing ``step`` (nearest first)."""
    out: list[StepView] = []
    seen = {step.span_id}
    parent = step.parent_span_id
    while parent and parent not in seen and parent in by_id:
        seen.add(parent)
        p = by_id[parent]
        if p.step_type == "llm":
            out.append(p)
        parent = p.parent_span_id
    return out


def answering_llm(steps: list[StepView]) -> StepView | None:
    """The LLM call that produced the answer: the last one to end that has an output.

    Frameworks nest model calls (LlamaIndex's ``LLM.predict`` wraps ``LLM.complete``; both are LLM
    spans): the innermost call is the one whose input is the prompt the model read, so an LLM step
    that encloses another is skipped when an inner one has an output.
    """
    by_id = {s.span_id: s for s in steps}
    llms = sorted((s for s in steps if s.step_type == "llm"), key=_sort_key)
    wrappers = {a.span_id for s in llms for a in _llm_ancestors(s, by_id)}
    leaves = [s for s in llms if s.span_id not in wrappers]
    answering = [s for s in leaves if s.output_text] or [s for s in llms if s.output_text] or llms
    return answering[-1] if answering else None


def assemble(steps: list[StepView], docs: list[DocView]) -> Assembly:
    out = Assembly()
    roots = [s for s in steps if s.is_root]
    root = roots[0] if roots else None
    llms = sorted((s for s in steps if s.step_type == "llm"), key=_sort_key)
    answer_llm = answering_llm(steps)
    retrievals = sorted((s for s in steps if s.step_type in ("retrieval", "rerank")), key=_sort_key)

    # query: the root's input, else the first retrieval query, else the user message of the first LLM call.
    # A root input that is still structured after unwrapping (Haystack's ``{"data": {"<component>":
    # {...}}}`` naming two inputs) holds no single query: the retrieval's query is the one asked.
    if root is not None and root.step_type not in ("llm", "retrieval", "rerank", "tool"):
        text = plain_text(root.query_text or root.input_text)
        out.query_text = None if is_structured(text) else text
    if not out.query_text:
        for s in retrievals:
            if s.query_text:
                out.query_text = plain_text(s.query_text)
                break
    if not out.query_text and llms:
        out.query_text = plain_text(llms[0].query_text)
    if not out.query_text and root is not None:
        out.query_text = plain_text(root.query_text or root.input_text)

    # answer: the root's output when it is a chain or agent and plain text, else the answering LLM's
    # output. A root output that is structured (a pipeline's outputs by component, the repr of a
    # framework's message object) or that merely wraps the LLM's text is not the answer's text.
    llm_answer = plain_text(answer_llm.output_text) if answer_llm is not None else None
    if root is not None and root.step_type in ("chain", "agent", "other") and root.output_text:
        text = plain_text(root.output_text)
        wraps_llm = llm_answer is not None and text != llm_answer and llm_answer in (text or "")
        if not is_structured(text) and not wraps_llm:
            out.answer_text = text
    if answer_llm is not None:
        out.answer_span_id = answer_llm.span_id
        if not out.answer_text:
            out.answer_text = llm_answer
    if not out.answer_text and root is not None and root.step_type in ("chain", "agent", "other"):
        out.answer_text = plain_text(root.output_text)

    for s in ([root] if root else []) + steps:
        if s is not None and s.user_scope:
            out.user_scope = s.user_scope
            break

    explicit = [d for d in docs if d.stage == "context" and d.source == "span"]
    if explicit or answer_llm is None:
        return out
    by_id = {s.span_id: s for s in steps}
    prompt_text = answer_llm.input_text or next(
        (a.input_text for a in _llm_ancestors(answer_llm, by_id) if a.input_text), None
    )
    if not prompt_text:
        return out
    prompt = normalize(prompt_text)
    tried: set[str] = set()  # a text is looked for once: the first document carrying it names it
    found: list[tuple[int, DocView]] = []
    ranked = sorted(
        (d for d in docs if d.stage in STAGE_PRIORITY and d.content),
        key=lambda d: STAGE_PRIORITY[d.stage],
    )
    for d in ranked:
        norm = normalize_doc(d.content)  # the same chunks recur: at several stages, and trace after trace
        if not norm or norm in tried:
            continue
        tried.add(norm)
        at = prompt.find(norm)
        if at >= 0:
            found.append((at, d))
    found.sort(key=lambda x: x[0])
    out.context = [
        DocView(
            span_id=answer_llm.span_id,
            stage="context",
            position=i,
            doc_id=d.doc_id,
            chunk_id=d.chunk_id,
            content=d.content,
            score=d.score,
            metadata=d.metadata,
            source="derived",
        )
        for i, (_, d) in enumerate(found)
    ]
    return out
