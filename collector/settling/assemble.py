"""Trace assembly at settle time: the query, the answer, and the context stage (docs/architecture.md, Evidence and matching).

A trace's spans arrive in any order and in several requests, so what needs the whole trace is done
once it has settled: find the query text and the final answer, and — when the app did not send the
final context explicitly (``ragfault.context.documents``) — derive it: a candidate is in context when
its content appears in the input of the LLM call that produced the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol, TypeVar

from collector.normalize import pyrepr, structural
from collector.normalize.messages import unwrap_text
from collector.normalize.shape import wordy
from collector.normalize.values import parse_json
from ragfault_core.textnorm import normalize, normalize_doc

# Which row represents a document found in the prompt when it appears in several stages.
# where a context document found in the prompt is named from first (``settle`` fetches by this too)
# (``opened``: a document a search agent fetched, ``collector.settling.search_stages``, derived with the trace)
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


def plain_text(value: str | None, answer: bool = False) -> str | None:
    """The human text inside a JSON-wrapped input or output value, else the value itself.

    The usual wrappers are taken off first (``unwrap_text``); a value still structured after that
    is read by the structural rules (``collector.normalize.structural``: decorated calls, pipeline
    components, message lists under any key, content blocks), and kept as it is when it holds no
    single text. ``answer``: the value is an output (its text is what was said, not what was asked)."""
    text = unwrap_text(value, answer)
    if text and is_structured(text):
        found = structural.answer_of(text) if answer else structural.query_of(text)
        if found and not is_structured(found):
            return found
        described = pyrepr.value(text) if _REPR.match(text.strip()) else None  # a message object's repr
        if isinstance(described, (dict, list)):
            found = structural.answer_of(described) if answer else structural.query_of(described)
            if found and not is_structured(found):
                return found
    return text


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


class _Stepish(Protocol):
    """What ``answer_prompt`` reads of a step (assembly's ``StepView``, evaluators' ``StepInfo``)."""

    @property
    def span_id(self) -> str: ...
    @property
    def parent_span_id(self) -> str | None: ...
    @property
    def step_type(self) -> str: ...
    @property
    def input_text(self) -> str | None: ...
    @property
    def start_time(self) -> Any: ...


_S = TypeVar("_S", bound=_Stepish)


def answer_prompt(answer: _S, steps: Sequence[_S]) -> tuple[_S, str] | None:
    """The nearest recorded prompt of the answering call, and the step it was recorded on.

    Its own input; else the input of the nearest LLM call enclosing it (a wrapper such as
    LlamaIndex's ``LLM.predict``); else the nearest input recorded inside it, breadth first in start
    order (a custom LLM whose outer span records only the output, its prompt in an inner task's
    ``{"args": ["Context information is below..."]}``), unwrapped to its text. None when no step
    around the call recorded one: what the model saw is then unknown."""
    if answer.input_text:
        return answer, answer.input_text
    by_id = {s.span_id: s for s in steps}
    seen = {answer.span_id}
    parent = answer.parent_span_id
    while parent and parent not in seen and parent in by_id:
        seen.add(parent)
        p = by_id[parent]
        if p.step_type == "llm" and p.input_text:
            return p, p.input_text
        parent = p.parent_span_id
    children: dict[str, list[_S]] = {}
    for s in steps:
        if s.parent_span_id:
            children.setdefault(s.parent_span_id, []).append(s)
    level = [answer]
    visited = {answer.span_id}
    while level:
        nxt = [c for s in level for c in children.get(s.span_id, ()) if c.span_id not in visited]
        nxt.sort(key=lambda c: (c.start_time is None, c.start_time or 0))
        for c in nxt:
            visited.add(c.span_id)
            text = structural.text_of(c.input_text) if c.input_text else None
            if text is not None and wordy(text):
                return c, text
        level = nxt
    return None


def answering_llm(steps: list[StepView], answer: str | None = None) -> StepView | None:
    """The LLM call that produced the answer: the one whose output is the final ``answer`` when
    given and one's is, else the last one to end that has an output.

    Frameworks nest model calls (LlamaIndex's ``LLM.predict`` wraps ``LLM.complete``; both are LLM
    spans): the innermost call is the one whose input is the prompt the model read, so an LLM step
    that encloses another is skipped when an inner one has an output.
    """
    by_id = {s.span_id: s for s in steps}
    llms = sorted((s for s in steps if s.step_type == "llm"), key=_sort_key)
    wrappers = {a.span_id for s in llms for a in _llm_ancestors(s, by_id)}
    leaves = [s for s in llms if s.span_id not in wrappers]
    answering = [s for s in leaves if s.output_text] or [s for s in llms if s.output_text] or llms
    if answer and len(answering) > 1:
        said = [s for s in answering if plain_text(s.output_text, answer=True) == answer]
        if said:
            return said[-1]
    return answering[-1] if answering else None


def assemble(steps: list[StepView], docs: list[DocView]) -> Assembly:
    out = Assembly()
    roots = [s for s in steps if s.is_root]
    root = roots[0] if roots else None
    llms = sorted((s for s in steps if s.step_type == "llm"), key=_sort_key)
    answer_llm = answering_llm(steps)
    retrievals = sorted((s for s in steps if s.step_type in ("retrieval", "rerank")), key=_sort_key)

    # query: the root's input, else the first retrieval query, else the user message of the first LLM
    # call that has one.
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
        # the first model call that recorded a question (an inner call of a wrapper may record none)
        out.query_text = next((q for s in llms if (q := plain_text(s.query_text))), None)
    if not out.query_text and root is not None:
        out.query_text = plain_text(root.query_text or root.input_text)

    # answer: the root's output when it is a chain or agent and plain text, else the answering LLM's
    # output. A root output that is structured (a pipeline's outputs by component, the repr of a
    # framework's message object) or that merely wraps the LLM's text is not the answer's text.
    llm_answer = plain_text(answer_llm.output_text, answer=True) if answer_llm is not None else None
    if root is not None and root.step_type in ("chain", "agent", "other") and root.output_text:
        text = plain_text(root.output_text, answer=True)
        wraps_llm = llm_answer is not None and text != llm_answer and llm_answer in (text or "")
        if not is_structured(text) and not wraps_llm:
            out.answer_text = text
            if text != llm_answer:  # the generation whose output is the final answer, if one's is
                answer_llm = answering_llm(steps, text) or answer_llm
    if answer_llm is not None:
        out.answer_span_id = answer_llm.span_id
        if not out.answer_text:
            out.answer_text = llm_answer
    if not out.answer_text and root is not None and root.step_type in ("chain", "agent", "other"):
        out.answer_text = plain_text(root.output_text, answer=True)

    for s in ([root] if root else []) + steps:
        if s is not None and s.user_scope:
            out.user_scope = s.user_scope
            break

    explicit = [d for d in docs if d.stage == "context" and d.source == "span"]
    if explicit or answer_llm is None:
        return out
    found_prompt = answer_prompt(answer_llm, steps)  # its own input, a wrapper's, or an inner span's
    if found_prompt is None:
        return out
    prompt_text = found_prompt[1]
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
