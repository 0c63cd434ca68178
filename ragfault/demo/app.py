"""A sample helpdesk RAG agent, instrumented the way an app adds ragfault to its own code.

The app is ordinary Python: a router decides whether to search, a retriever returns ranked chunks,
a reranker keeps the best few, a prompt is built within a token budget, and a model answers. Each
step is an OpenTelemetry span carrying OpenInference attributes (the convention most RAG
instrumentors emit), plus ragfault's own attributes for what no convention carries: the gold case
and run, the caller's access scopes, and the cited documents. Any OTLP exporter sends the spans to
ragfault.

The model is a stand-in (``ScriptedLLM``) so the demo runs offline; a real app calls its LLM there.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Tracer

# OpenInference attribute names (https://github.com/Arize-ai/openinference/tree/main/spec)
SPAN_KIND = "openinference.span.kind"
INPUT, OUTPUT = "input.value", "output.value"


@dataclass
class Chunk:
    """A retrievable piece of a knowledge-base document."""

    doc_id: str
    content: str
    chunk_id: str | None = None  # e.g. a vector-store UUID; the source id then lives in metadata
    metadata: dict[str, Any] = field(default_factory=dict)
    expose_id: bool = True  # some frameworks report no id at all


def _tokens(text: str) -> set[str]:
    words = set(re.findall(r"[a-z0-9]+", text.lower()))
    cjk = re.sub(r"[^\u4e00-\u9fff]", "", text)
    return words | {cjk[i : i + 2] for i in range(len(cjk) - 1)}


def overlap_score(query: str, text: str) -> float:
    q, t = _tokens(query), _tokens(text)
    return round(len(q & t) / (len(q) or 1), 4)


class ScriptedLLM:
    """Stands in for a chat model: returns the answer the scenario scripts for this question."""

    model = "scripted-helpdesk-llm"

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers

    def complete(self, question: str, prompt: str) -> str:
        return self.answers.get(question, "I don't know.")


class HelpdeskApp:
    def __init__(
        self, tracer: Tracer | None = None, llm: ScriptedLLM | None = None, prompt_budget_chars: int = 1200
    ):
        self.tracer = tracer or trace.get_tracer("ragfault.demo.helpdesk")
        self.llm = llm or ScriptedLLM({})
        self.prompt_budget_chars = prompt_budget_chars

    # --- the steps -------------------------------------------------------------------------

    def search(self, question: str, ranked: Sequence[Chunk]) -> list[tuple[Chunk, float]]:
        """Retriever: returns chunks in rank order with a similarity score."""
        with self.tracer.start_as_current_span("kb.search") as span:
            results = [(c, overlap_score(question, c.content)) for c in ranked]
            span.set_attribute(SPAN_KIND, "RETRIEVER")
            span.set_attribute(INPUT, question)
            for i, (c, score) in enumerate(results):
                _set_document(span, f"retrieval.documents.{i}", c, score)
            return results

    def rerank(
        self, question: str, results: list[tuple[Chunk, float]], keep: int
    ) -> list[tuple[Chunk, float]]:
        """Reranker: keeps the top ``keep`` (a cut-off too tight for some questions)."""
        with self.tracer.start_as_current_span("rerank") as span:
            kept = results[:keep]
            span.set_attribute(SPAN_KIND, "RERANKER")
            span.set_attribute("reranker.query", question)
            span.set_attribute("reranker.top_k", keep)
            span.set_attribute("reranker.model_name", "demo-cross-encoder")
            for i, (c, score) in enumerate(results):
                _set_document(span, f"reranker.input_documents.{i}", c, score)
            for i, (c, score) in enumerate(kept):
                _set_document(span, f"reranker.output_documents.{i}", c, score)
            return kept

    def build_prompt(self, question: str, context: Sequence[Chunk]) -> str:
        blocks = []
        used = 0
        for c in context:
            if used + len(c.content) > self.prompt_budget_chars:
                break  # token budget: later chunks are truncated away
            blocks.append(f"[{c.doc_id}] {c.content}")
            used += len(c.content)
        joined = "\n".join(blocks) if blocks else "(no documents)"
        return f"Context:\n{joined}\n\nQuestion: {question}"

    def generate(self, question: str, prompt: str, citations: Sequence[str] | None) -> str:
        with self.tracer.start_as_current_span("llm.chat") as span:
            answer = self.llm.complete(question, prompt)
            system = (
                "You are a helpdesk assistant. Answer only from the context; say so when it has no answer."
            )
            span.set_attribute(SPAN_KIND, "LLM")
            span.set_attribute("llm.model_name", self.llm.model)
            span.set_attribute("llm.input_messages.0.message.role", "system")
            span.set_attribute("llm.input_messages.0.message.content", system)
            span.set_attribute("llm.input_messages.1.message.role", "user")
            span.set_attribute("llm.input_messages.1.message.content", prompt)
            span.set_attribute("llm.output_messages.0.message.role", "assistant")
            span.set_attribute("llm.output_messages.0.message.content", answer)
            span.set_attribute("llm.token_count.prompt", (len(system) + len(prompt)) // 4)
            span.set_attribute("llm.token_count.completion", len(answer) // 4)
            span.set_attribute("llm.token_count.total", (len(system) + len(prompt) + len(answer)) // 4)
            if citations:
                span.set_attribute("ragfault.answer.citations", list(citations))
            return answer

    # --- the request -------------------------------------------------------------------------

    def answer(
        self,
        question: str,
        ranked: Sequence[Chunk],
        *,
        user_scope: Sequence[str],
        keep: int = 3,
        search: bool = True,
        citations: Sequence[str] | None = None,
        case_id: str | None = None,
        run_id: str | None = None,
        session_id: str | None = None,
    ) -> str:
        with self.tracer.start_as_current_span("helpdesk.answer") as root:
            root.set_attribute(SPAN_KIND, "AGENT")
            root.set_attribute(INPUT, question)
            root.set_attribute("session.id", session_id or str(uuid.uuid4()))
            root.set_attribute("ragfault.user_scope", list(user_scope))
            if case_id:
                root.set_attribute("ragfault.case_id", case_id)
            if run_id:
                root.set_attribute("ragfault.run_id", run_id)
            with self.tracer.start_as_current_span("route") as route:
                route.set_attribute(SPAN_KIND, "CHAIN")
                route.set_attribute(INPUT, question)
                route.set_attribute(OUTPUT, json.dumps({"search": search}))
            context: list[Chunk] = []
            if search:
                context = [c for c, _ in self.rerank(question, self.search(question, ranked), keep)]
            prompt = self.build_prompt(question, context)
            answer = self.generate(question, prompt, citations)
            root.set_attribute(OUTPUT, answer)
            return answer


def _set_document(span: Any, prefix: str, chunk: Chunk, score: float) -> None:
    if chunk.expose_id:
        span.set_attribute(f"{prefix}.document.id", chunk.chunk_id or chunk.doc_id)
    span.set_attribute(f"{prefix}.document.content", chunk.content)
    span.set_attribute(f"{prefix}.document.score", score)
    if chunk.metadata:
        span.set_attribute(f"{prefix}.document.metadata", json.dumps(chunk.metadata, ensure_ascii=False))
