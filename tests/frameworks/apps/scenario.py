"""The knowledge base, gold cases and questions every framework app runs (standard library only: the
apps import it inside their own virtual environments).

Each app indexes ``KB`` in its framework's own store, retrieves ``TOP_K`` candidates per question and
puts only the first ``BUDGET`` of them in the prompt, then asks the model (the local chat server). The
three questions are chosen so that, with a keyword retriever or the bag-of-words embedding:

- ``ok``: the evidence ranks first, so it is in the prompt and the answer quotes it;
- ``dropped``: the evidence is a candidate ranked below documents that repeat the question's words, so
  the budget cuts it and the answer quotes a distractor (``dropped_before_context``);
- ``miss``: the evidence shares no word with the question, so it is never retrieved (``candidate_miss``).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

TOP_K = 3
BUDGET = 1

KB: list[dict[str, Any]] = [
    {"doc_id": "refund-window", "content": "Refunds are accepted within 30 days of delivery for unused items."},
    {"doc_id": "warranty-term", "content": "Hardware carries a two year warranty covering manufacturing defects."},
    {"doc_id": "warranty-claims", "content": "Hardware warranty claims need the receipt; warranty hardware repairs run in Berlin."},
    {"doc_id": "warranty-shipping", "content": "Hardware sent back under warranty ships free; warranty hardware labels come by email."},
    {"doc_id": "shop-hours", "content": "Opening times at Alexanderplatz: 9 until 19, Monday to Saturday."},
    {"doc_id": "berlin-pickup", "content": "Berlin orders can be picked up; the Berlin shop holds parcels for a week."},
    {"doc_id": "berlin-delivery", "content": "Berlin deliveries arrive next day; the Berlin shop also ships parcels abroad."},
]  # fmt: skip

CASES: list[dict[str, Any]] = [
    {"case_id": "fw-ok", "query": "How many days after delivery are refunds accepted?",
     "evidence": [{"doc_id": "refund-window", "quote": "within 30 days of delivery"}],
     "required_facts": [{"id": "days-30", "text": "30 days"}]},
    {"case_id": "fw-dropped", "query": "How long is the warranty on hardware?",
     "evidence": [{"doc_id": "warranty-term", "quote": "two year warranty"}],
     "required_facts": [{"id": "two-years", "text": "two year"}]},
    {"case_id": "fw-miss", "query": "When does the Berlin shop close?",
     "evidence": [{"doc_id": "shop-hours", "quote": "9 until 19"}],
     "required_facts": [{"id": "closes-19", "text": "19"}]},
]  # fmt: skip
for _case in CASES:
    _case.update(answerable=True, expected_behavior="answer", must_retrieve=True)

QUESTIONS = {"ok": CASES[0]["query"], "dropped": CASES[1]["query"], "miss": CASES[2]["query"]}
CASE_OF = {"ok": "fw-ok", "dropped": "fw-dropped", "miss": "fw-miss"}


_STOP = frozenset(
    (
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "is",
        "are",
        "how",
        "what",
        "when",
        "does",
        "do",
    )
)


def words(text: str) -> list[str]:
    """Lower-cased words of three letters or more, stop words left out (the apps' keyword retrieval)."""
    import re

    return [w for w in re.findall(r"\w+", text.lower()) if len(w) > 2 and w not in _STOP]


def keyword_search(query: str, top_k: int = TOP_K) -> list[dict[str, Any]]:
    """The apps' keyword retrieval: the knowledge base's documents sharing words with ``query``, most
    shared words first (ties in the knowledge base's order), at most ``top_k``, as ``{"id",
    "content", "score"}`` (the score: the words shared). Each app hands these to its framework in
    the framework's own types."""
    q = set(words(query))
    scored = [(sum(w in q for w in words(d["content"])), i, d) for i, d in enumerate(KB)]
    ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
    return [{"id": d["doc_id"], "content": d["content"], "score": float(n)} for n, _, d in ranked[:top_k]]


def prompt(docs: list[str], question: str) -> str:
    """The prompt every app sends: the budgeted context, then the question."""
    context = "\n".join(f"- {d}" for d in docs[:BUDGET])
    return f"Answer from the context only.\nContext:\n{context}\nQuestion: {question}"


def settings() -> tuple[str, str]:
    """(OTLP traces endpoint, chat server base URL) given by the test through the environment."""
    return os.environ["RAGFAULT_TEST_OTLP"], os.environ["RAGFAULT_TEST_CHAT_URL"]


def report(trace_ids: dict[str, str]) -> None:
    """The app's one line of output: the trace id of each question, for the test to look up."""
    sys.stdout.write(json.dumps(trace_ids) + "\n")
    sys.stdout.flush()


def http_tracer_provider(service: str) -> Any:
    """A tracer provider exporting through the real OTLP/HTTP exporter, one span at a time."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    endpoint, _ = settings()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    return provider


def trace_ids() -> Any:
    """A span processor that records the trace id of the spans each question produced: set its
    ``current`` to the question's key before the question runs, read ``ids`` at the end. It also
    counts the spans still open: ``wait_ended(seconds)`` waits until every started span has ended (a
    framework that ends its spans from event handlers in threads of its own may end the last one
    after the run returns; exporting before then would lose it)."""
    import threading

    from opentelemetry.sdk.trace import SpanProcessor

    class TraceIds(SpanProcessor):
        def __init__(self) -> None:
            self.current: str | None = None
            self.ids: dict[str, str] = {}
            self._open = 0
            self._ended = threading.Condition()

        def on_start(self, span: Any, parent_context: Any = None) -> None:
            if self.current is not None and self.current not in self.ids:
                self.ids[self.current] = format(span.get_span_context().trace_id, "032x")
            with self._ended:
                self._open += 1

        def on_end(self, span: Any) -> None:
            with self._ended:
                self._open -= 1
                self._ended.notify_all()

        def wait_ended(self, seconds: float) -> bool:
            with self._ended:
                return self._ended.wait_for(lambda: self._open <= 0, timeout=seconds)

    return TraceIds()
