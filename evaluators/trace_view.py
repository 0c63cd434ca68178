"""A settled trace as evaluators see it: ``TraceView`` with its steps (``StepInfo``) and the
documents each step saw (``StepDoc``), and what is derived from them once a trace (its retrieval
calls, candidates, context, answer)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from operator import itemgetter
from typing import Any, NamedTuple

from evaluators.cached import cached_property
from evaluators.text import normalize


@dataclass(frozen=True, slots=True)
class StepInfo:
    span_id: str
    parent_span_id: str | None
    step_type: str
    name: str | None
    start_time: datetime | None
    end_time: datetime | None
    duration_ms: float | None
    status_code: str | None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    query_text: str | None = None
    input_text: str | None = None
    output_text: str | None = None
    tool_name: str | None = None
    tool_arguments: str | None = None
    tool_result: str | None = None
    top_k: int | None = None
    citations: tuple[str, ...] = ()
    is_root: bool = False


class StepDoc(NamedTuple):
    """A document at one stage of one step. Immutable; a tuple, because a batch loads tens of
    thousands (the runner builds them from fetched columns without a Python call each). Two step
    documents are told apart by identity (``id``), never by value."""

    span_id: str
    stage: str  # candidate, rerank_input, reranked, context, surfaced, opened
    position: int
    doc_id: str | None
    chunk_id: str | None
    content: str | None
    score: float | None
    metadata: dict[str, Any] | None
    source: str  # span, derived


_POSITION = itemgetter(2)  # StepDoc.position, read in C


@dataclass(frozen=True)
class TraceView:
    """A settled trace as evaluators see it."""

    trace_id: str
    start_time: datetime | None = None
    end_time: datetime | None = None
    service_name: str | None = None
    case_id: str | None = None
    run_id: str | None = None
    session_id: str | None = None
    user_id: str | None = None
    user_scope: tuple[str, ...] | None = None
    query_text: str | None = None
    answer_text: str | None = None
    answer_span_id: str | None = None
    error_count: int = 0
    steps: tuple[StepInfo, ...] = ()
    documents: tuple[StepDoc, ...] = ()

    def steps_of(self, *types: str) -> list[StepInfo]:
        """Steps of the given types, in start order."""
        return sorted(
            (s for s in self.steps if s.step_type in types),
            key=lambda s: (s.start_time is None, s.start_time or datetime.min),
        )

    def docs(self, stage: str, span_id: str | None = None) -> list[StepDoc]:
        """Documents of a stage (of one step, or of every step), by step and position."""
        if span_id is None:
            out = [d for d in self.documents if d.stage == stage]
            return sorted(out, key=lambda d: (d.span_id, d.position))
        return list(self._docs_by_step.get((stage, span_id), ()))

    @cached_property
    def _docs_by_step(self) -> dict[tuple[str, str], list[StepDoc]]:
        out: dict[tuple[str, str], list[StepDoc]] = {}
        for d in self.documents:
            out.setdefault((d.stage, d.span_id), []).append(d)
        for docs in out.values():
            docs.sort(key=_POSITION)  # stable: the order of equal positions is kept
        return out

    @cached_property
    def retrieval_steps(self) -> list[StepInfo]:
        """Retrieval steps in start order. A step without candidates nested in (or enclosing) a
        retrieval step that has them is the same retrieval reported twice (LlamaIndex emits a
        document-less ``_retrieve`` span inside ``retrieve``) and is left out, so it neither counts
        as a second retrieval call nor halves the per-step means. So is one that only passes on the
        documents of a retrieval nested in it (``passed_through``)."""
        steps = [s for s in self.steps_of("retrieval") if s.span_id not in self.passed_through]
        if len(steps) < 2:
            return steps
        with_docs = {d.span_id for d in self.documents if d.stage == "candidate"}
        parent = {s.span_id: s.parent_span_id for s in self.steps}
        ids = {s.span_id for s in steps}

        def ancestors(span_id: str) -> set[str]:
            out: set[str] = set()
            p = parent.get(span_id)
            while p and p not in out:
                out.add(p)
                p = parent.get(p)
            return out

        lineage = {s.span_id: ancestors(s.span_id) & ids for s in steps}
        shadowed = {
            s.span_id
            for s in steps
            if s.span_id not in with_docs
            and (
                lineage[s.span_id] & with_docs
                or any(s.span_id in lineage[o] for o in with_docs if o in lineage)
            )
        }
        return [s for s in steps if s.span_id not in shadowed]

    @cached_property
    def passed_through(self) -> frozenset[str]:
        """Span ids of the retrieval and tool steps whose candidates are all among those of a retrieval
        or tool step nested in them: a search tool that calls a retriever and hands on its documents
        (all of them, or the first few) is that retriever's call, not a second retrieval. The inner
        step keeps the candidates (the retriever's own list, with its scores). An outer step that
        adds documents of its own (a fusion of two searches) is a retrieval of its own."""
        held: dict[str, set[object]] = {}
        for d in self.documents:
            if d.stage == "candidate":
                held.setdefault(d.span_id, set()).add(d.doc_id or d.chunk_id or ("text", d.content))
        if len(held) < 2:
            return frozenset()
        kinds = {s.span_id: s.step_type for s in self.steps}
        parent = {s.span_id: s.parent_span_id for s in self.steps}
        out: set[str] = set()
        for inner, docs in held.items():
            if kinds.get(inner) not in ("retrieval", "tool"):
                continue
            seen: set[str] = set()
            p = parent.get(inner)
            while p and p not in seen:
                seen.add(p)
                if p in held and kinds.get(p) in ("retrieval", "tool") and held[p] <= docs:
                    out.add(p)
                p = parent.get(p)
        return frozenset(out)

    @cached_property
    def retrieval_callers(self) -> frozenset[str]:
        """Span ids of the steps that enclose a retrieval step or a retrieving tool: a search tool
        whose name says retrieval, calling another that returned the documents, is one call."""
        parent = {s.span_id: s.parent_span_id for s in self.steps}
        out: set[str] = set(self.retrieval_wrappers)
        for r in self.retrieving_tools:
            p = parent.get(r.span_id)
            while p and p not in out:
                out.add(p)
                p = parent.get(p)
        return frozenset(out)

    @cached_property
    def retrieval_wrappers(self) -> frozenset[str]:
        """Span ids of the steps that enclose a retrieval step (e.g. a search tool calling a retriever)."""
        parent = {s.span_id: s.parent_span_id for s in self.steps}
        out: set[str] = set()
        for r in self.retrieval_steps:
            p = parent.get(r.span_id)
            while p and p not in out:
                out.add(p)
                p = parent.get(p)
        return frozenset(out)

    @cached_property
    def retrieving_tools(self) -> list[StepInfo]:
        """Tool steps whose result listed documents (an agent's search tool), unless the tool wraps a
        retrieval step: then the retriever's documents are the same ones, counted there."""
        tools = self.steps_of("tool")
        if not tools:
            return []
        with_docs = {d.span_id for d in self.documents if d.stage == "candidate"}
        skip = self.retrieval_wrappers | self.passed_through
        return [t for t in tools if t.span_id in with_docs and t.span_id not in skip]

    @cached_property
    def opening_tools(self) -> list[StepInfo]:
        """Tool steps that opened documents a search listed (stage ``opened``; docs/architecture.md, Evidence and matching)."""
        opened = {d.span_id for d in self.documents if d.stage == "opened"}
        if not opened:
            return []
        return [t for t in self.steps_of("tool") if t.span_id in opened]

    @cached_property
    def candidates_by_step(self) -> list[tuple[StepInfo, list[StepDoc]]]:
        """Each retrieval step (and retrieving tool step) with its candidates in rank order; rerank
        inputs when nothing else. A document a search agent opened is a candidate of the tool step
        that opened it (its text was retrieved); one only listed by a search (``surfaced``) is not."""
        steps = self.retrieval_steps
        if self.retrieving_tools or self.opening_tools:
            steps = sorted(
                steps + self.retrieving_tools + self.opening_tools,
                key=lambda s: (s.start_time is None, s.start_time or datetime.min),
            )
        out = [(s, self.docs("candidate", s.span_id) or self.docs("opened", s.span_id)) for s in steps]
        if not any(docs for _, docs in out):
            for s in self.steps_of("rerank"):
                docs = self.docs("rerank_input", s.span_id)
                if docs:
                    out.append((s, docs))
        return out

    @cached_property
    def candidates(self) -> list[StepDoc]:
        return [d for _, docs in self.candidates_by_step for d in docs]

    @cached_property
    def context_docs(self) -> list[StepDoc]:
        explicit = [d for d in self.documents if d.stage == "context" and d.source == "span"]
        return explicit or [d for d in self.documents if d.stage == "context"]

    @cached_property
    def has_explicit_context(self) -> bool:
        return any(d.stage == "context" and d.source == "span" for d in self.documents)

    @cached_property
    def answer_step(self) -> StepInfo | None:
        for s in self.steps:
            if s.span_id == self.answer_span_id:
                return s
        llms = self.steps_of("llm")
        return llms[-1] if llms else None

    @cached_property
    def prompt_norm(self) -> str:
        """The normalized input of the LLM call that produced the answer ('' when none)."""
        step = self.answer_step
        return normalize(step.input_text) if step and step.input_text else ""

    @cached_property
    def citations(self) -> tuple[str, ...]:
        out: list[str] = []
        for s in self.steps:
            for c in s.citations:
                if c not in out:
                    out.append(c)
        return tuple(out)
