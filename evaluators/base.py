"""What an evaluator sees and returns.

An evaluator is a pure function ``fn(inp: EvalInput, config) -> list[Metric]`` plus an
``EvaluatorSpec``. It does no I/O and reads no clock: the runner loads the trace, its gold case and
the knowledge base into an ``EvalInput`` and writes the returned metrics to ``evaluations``.

Status rules (docs/architecture.md, Evaluators and metrics): a metric with an empty denominator is ``not_applicable`` — never 0, never 1.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from operator import itemgetter
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, NamedTuple, TypeVar, overload

from pydantic import AfterValidator, BaseModel, ConfigDict

from evaluators.content_index import ContentIndex
from evaluators.gold import GoldCase, KBDocument
from evaluators.text import normalize as normalize  # re-exported
from evaluators.text import normalize_doc as normalize_doc  # re-exported

if TYPE_CHECKING:
    from evaluators.matching import Matching

_T = TypeVar("_T")


class cached_property(Generic[_T]):  # noqa: N801  (named after functools.cached_property)
    """``functools.cached_property`` without its lock (Python 3.11 takes an RLock on every first
    access; a trace computes dozens of these). The value is stored in the instance ``__dict__``,
    which then shadows the descriptor. An instance is only ever used by one thread at a time here."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.attrname = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.attrname = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached_property[_T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> _T | cached_property[_T]:
        if instance is None:
            return self
        value = self.func(instance)
        instance.__dict__[self.attrname] = value
        return value


Status = Literal["ok", "not_applicable", "error", "skipped"]
Tier = Literal["cheap", "judge"]


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


class KnowledgeBase:
    """The registry, indexed for id and content look-ups."""

    def __init__(self, docs: list[KBDocument] | None = None) -> None:
        self.by_id: dict[str, KBDocument] = {d.doc_id: d for d in docs or []}
        self._norm: list[tuple[str, str]] = [
            (d.doc_id, normalize(d.content)) for d in docs or [] if d.content
        ]
        self._index: ContentIndex | None = None  # built on the first look-up by content
        self._by_content: dict[str, str | None] = {}
        # results evaluators derive from registry rows alone, shared by every trace (bounded)
        self._memo: dict[Any, Any] = {}

    def __len__(self) -> int:
        return len(self.by_id)

    def memo(self) -> dict[Any, Any]:
        """A cache for results that depend only on registry rows (and the key); emptied when large.
        Cached values are shared: callers must not modify them."""
        if len(self._memo) > 100_000:
            self._memo.clear()
        return self._memo

    def get(self, doc_id: str | None) -> KBDocument | None:
        return self.by_id.get(doc_id) if doc_id else None

    def identify(self, content: str | None) -> str | None:
        """The first registry document whose content contains this text, or is contained in it (at
        least 8 characters), once normalized (``evaluators.content_index``)."""
        if not content or not self._norm:
            return None
        norm = normalize_doc(content)
        if not norm:
            return None
        if norm in self._by_content:
            return self._by_content[norm]
        if self._index is None:
            self._index = ContentIndex([t for _, t in self._norm])
        first = self._index.first(norm)  # the first registry text containing norm or inside it
        found = self._norm[first][0] if first is not None else None
        if len(self._by_content) > 100_000:
            self._by_content.clear()
        self._by_content[norm] = found
        return found


@dataclass
class EvalInput:
    """Everything an evaluator may read: the trace, its case (if joined), the registry, the time."""

    trace: TraceView
    case: GoldCase | None
    kb: KnowledgeBase
    as_of: datetime | None = None
    source_keys: tuple[str, ...] = ()
    _cache: dict[Any, Any] = field(default_factory=dict)
    # The judge-tier oracle (``evaluators.judge.Judge``), set by the judge runner; None in the cheap tier.
    # Evaluators stay pure in the sense that matters: everything they read arrives here.
    judge: Any = None

    @cached_property
    def matching(self) -> Matching:
        from evaluators.matching import Matching

        return Matching(self)

    @cached_property
    def user_scope(self) -> tuple[str, ...] | None:
        """The caller's scopes: from the trace, else from the gold case; None when neither names any."""
        if self.trace.user_scope:
            return self.trace.user_scope
        if self.case is not None and self.case.user_scope:
            return tuple(self.case.user_scope)
        return None


class Metric(NamedTuple):
    """One row of ``evaluations`` as an evaluator returns it (the runner adds ids and versions).

    Immutable. A tuple rather than a dataclass: a trace yields dozens of these, and the runner lays
    a batch's rows out as columns by transposing them (``zip(*metrics)``) in C."""

    metric: str
    status: Status = "ok"
    value: float | None = None
    numerator: float | None = None
    denominator: float | None = None
    span_id: str | None = None
    passed: bool | None = None
    label: str | None = None
    reason: str | None = None
    details: dict[str, Any] | None = None


def ratio(
    metric: str,
    numerator: float,
    denominator: float,
    *,
    span_id: str | None = None,
    passed: bool | None = None,
    label: str | None = None,
    details: dict[str, Any] | None = None,
    na_reason: str = "empty denominator",
) -> Metric:
    """A ratio metric; ``not_applicable`` (value NULL) when the denominator is 0."""
    # every field given, in order: built by tuple.__new__ (Metric's own __new__ is a Python function)
    fields: tuple[Any, ...]
    if not denominator:
        fields = (
            metric,
            "not_applicable",
            None,
            numerator,
            denominator,
            span_id,
            None,
            label,
            na_reason,
            details,
        )
    else:
        fields = (
            metric,
            "ok",
            numerator / denominator,
            numerator,
            denominator,
            span_id,
            passed,
            label,
            None,
            details,
        )
    return _new_metric(Metric, fields)  # type: ignore[no-any-return]


_new_metric: Callable[..., Any] = tuple.__new__


def not_applicable(metric: str, reason: str, span_id: str | None = None, **details: Any) -> Metric:
    return Metric(metric, "not_applicable", span_id=span_id, reason=reason, details=details or None)


def _valid_regexes(patterns: tuple[str, ...]) -> tuple[str, ...]:
    for p in patterns:
        try:
            re.compile(p)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {p!r}: {exc}") from exc
    return patterns


Regexes = Annotated[tuple[str, ...], AfterValidator(_valid_regexes)]
"""A config option holding regular expressions, each checked to compile at startup."""


class NoConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True)
class EvaluatorSpec:
    """How the runner knows an evaluator. ``applies_to`` names step types, or ``trace``."""

    name: str
    version: str
    fn: Callable[[EvalInput, Any], list[Metric]]
    config: type[BaseModel] = NoConfig
    applies_to: tuple[str, ...] = ("trace",)
    tier: Tier = "cheap"
    needs_case: bool = False
    description: str = ""
