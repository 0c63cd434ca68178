"""Shared helpers of the answer-side evaluators (refusal, fact coverage, answer support, citations).

- The answer: the trace's answer text, else the output of the LLM step that produced it.
- The context the answer is checked against, with the document each sentence came from: the final
  context documents (explicit or derived; docs/architecture.md, Evidence and matching); without any, the input of the answering LLM
  call minus the user's question (what the model actually saw); without that, the candidates (the
  model's input is unknown and they are the best stand-in); else nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluators.builtin._recorded import unrecorded_retrievals
from evaluators.eval_input import EvalInput
from evaluators.lexical import sentences
from evaluators.text import normalize
from evaluators.trace_view import StepDoc

DEFAULT_SOURCE_KEYS = ("doc_id", "document_id", "ref_doc_id", "source", "file_name", "file_path")


def answer_text(inp: EvalInput) -> str:
    """The final answer ('' when the trace has none)."""
    if inp.trace.answer_text and inp.trace.answer_text.strip():
        return inp.trace.answer_text
    step = inp.trace.answer_step
    if step is not None and step.output_text and step.output_text.strip():
        return step.output_text
    return ""


def query_text(inp: EvalInput) -> str:
    if inp.trace.query_text:
        return inp.trace.query_text
    return inp.case.query if inp.case is not None else ""


def doc_content(inp: EvalInput, doc: StepDoc) -> str:
    """A step document's text: its own content, else the registry content of the document it is."""
    if doc.content:
        return doc.content
    kb = inp.matching.kb_doc(doc)
    return kb.content if kb is not None and kb.content else ""


def doc_label(inp: EvalInput, doc: StepDoc) -> str | None:
    return inp.matching.kb_id(doc) or doc.doc_id or doc.chunk_id


def source_ids(inp: EvalInput, doc: StepDoc) -> set[str]:
    """Every id a document answers to: chunk id, document id, registry id and metadata source ids."""
    ids = set(inp.matching.ids_of(doc))
    if doc.metadata:
        for key in inp.source_keys or DEFAULT_SOURCE_KEYS:
            v = doc.metadata.get(key)
            if isinstance(v, (str, int)) and str(v):
                ids.add(str(v))
    return ids


@dataclass(frozen=True)
class ContextSentences:
    source: str  # context, prompt, candidates, none
    sentences: list[str]
    doc_ids: list[str | None]  # parallel to sentences


def context_sentences(inp: EvalInput) -> ContextSentences:
    """The sentences the answer is checked against and the document of each (see the module doc).
    Worked out once a trace (answer support and fact coverage both read it; callers only read)."""
    found = inp._cache.get("context_sentences")
    if found is None:
        found = inp._cache["context_sentences"] = _context_sentences(inp)
    return found  # type: ignore[no-any-return,unused-ignore]


def _context_sentences(inp: EvalInput) -> ContextSentences:
    trace = inp.trace
    docs = trace.context_docs
    # a context derived from the known candidates is only part of the prompt when a retrieval's
    # output was not recorded: the prompt itself is then what the model is known to have seen
    if docs and (trace.has_explicit_context or not unrecorded_retrievals(inp)):
        return _from_docs(inp, docs, "context")
    step = trace.answer_step
    if step is not None and step.input_text and step.input_text.strip():
        q = normalize(query_text(inp))
        sents = [
            s
            for s in sentences(step.input_text)
            if not (q and q in normalize(s)) and not s.rstrip().endswith(("?", "？"))
        ]
        return ContextSentences("prompt", sents, [None] * len(sents))
    if trace.candidates:
        return _from_docs(inp, trace.candidates, "candidates")
    return ContextSentences("none", [], [])


def _from_docs(inp: EvalInput, docs: list[StepDoc], source: str) -> ContextSentences:
    sents: list[str] = []
    ids: list[str | None] = []
    seen: set[tuple[str | None, str]] = set()
    for d in docs:
        label = doc_label(inp, d)
        for s in sentences(doc_content(inp, d)):
            if (label, s) in seen:
                continue
            seen.add((label, s))
            sents.append(s)
            ids.append(label)
    return ContextSentences(source, sents, ids)


def context_norm(inp: EvalInput) -> str:
    """Normalized text of what the model saw: context documents, plus the prompt when derived."""
    parts = [inp.matching.content_norm(d) for d in inp.trace.context_docs]
    if not inp.trace.has_explicit_context and inp.trace.prompt_norm:
        parts.append(inp.trace.prompt_norm)
    return "\n".join(p for p in parts if p)
