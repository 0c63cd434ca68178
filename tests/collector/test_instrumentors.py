"""Real instrumented apps, run offline, exporting through the real OTLP/HTTP exporter to a real server.

- LlamaIndex + ``openinference-instrumentation-llama-index``: a VectorStoreIndex over six small
  documents, a deterministic bag-of-words embedding, a reranking node postprocessor and ``MockLLM``.
- LangChain + OpenLLMetry's ``opentelemetry-instrumentation-langchain``: an LCEL chain
  (retriever | format | prompt | fake chat model).
- Hand-built OTel GenAI semconv spans (invoke_agent, retrieval, chat, execute_tool) from the OTel SDK.

The instrumentors patch globally; every fixture uninstruments in its finalizer.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.otel_helpers import http_provider

pytestmark = pytest.mark.instrumentors


class Capture:
    """A provider exporting to the server, plus an in-memory copy to know how many spans were sent."""

    def __init__(self, server: Any, service: str) -> None:
        self.provider: TracerProvider = http_provider(server.url, service=service)
        self.memory = InMemorySpanExporter()
        self.provider.add_span_processor(SimpleSpanProcessor(self.memory))
        self.server = server

    def trace_ids(self) -> set[str]:
        return {format(s.context.trace_id, "032x") for s in self.memory.get_finished_spans()}

    def wait_stored(self) -> str:
        """Wait until every exported span is queryable, assemble now, return the single trace id."""
        self.provider.force_flush()
        ids = self.trace_ids()
        assert len(ids) == 1, f"expected one trace, got {len(ids)}"
        (trace_id,) = ids
        n = sum(1 for s in self.memory.get_finished_spans() if format(s.context.trace_id, "032x") == trace_id)
        self.server.wait_for("SELECT count(*) FROM spans WHERE trace_id = $t", n, t=trace_id)
        self.server.settle()
        return trace_id


def rows_as_dicts(server: Any, sql: str, **params: Any) -> list[dict[str, Any]]:
    r = server.http.post("/api/v1/sql", json={"sql": sql, "params": params})
    assert r.status_code == 200, r.text
    body = r.json()
    return [dict(zip(body["columns"], row, strict=True)) for row in body["rows"]]


def metadata_of(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


# ==================================================================================================
# LlamaIndex + OpenInference

from llama_index.core import Document, VectorStoreIndex  # noqa: E402
from llama_index.core.base.embeddings.base import BaseEmbedding  # noqa: E402
from llama_index.core.instrumentation import get_dispatcher  # noqa: E402
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent  # noqa: E402
from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.postprocessor.types import BaseNodePostprocessor  # noqa: E402
from llama_index.core.schema import NodeWithScore, QueryBundle  # noqa: E402

_WORD = re.compile(r"\w+")
_dispatcher = get_dispatcher(__name__)


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if len(w) > 2]


class BagOfWordsEmbedding(BaseEmbedding):
    """Deterministic hashed bag of words (crc32, not ``hash()``, which is salted per process)."""

    dim: int = 512

    def _vec(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for w in words(text):
            v[zlib.crc32(w.encode()) % self.dim] += 1.0
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / norm for x in v]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vec(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vec(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vec(text)


class KeywordRerank(BaseNodePostprocessor):
    """A reranker that announces itself like LlamaIndex's own rerankers do (ReRank start/end events).

    Scores each node by the share of query words it contains, keeps ``top_n``.
    """

    top_n: int = 2

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        query = query_bundle.query_str if query_bundle else ""
        _dispatcher.event(
            ReRankStartEvent(query=query_bundle, nodes=nodes, top_n=self.top_n, model_name="keyword-overlap")
        )
        q = set(words(query))
        scored = [
            NodeWithScore(node=n.node, score=len(q & set(words(n.node.get_content()))) / (len(q) or 1))
            for n in nodes
        ]
        kept = sorted(scored, key=lambda n: -(n.score or 0.0))[: self.top_n]
        _dispatcher.event(ReRankEndEvent(nodes=kept))
        return kept


class PassThrough(BaseNodePostprocessor):
    """A plain postprocessor that does not emit rerank events."""

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return nodes


KB = {
    "refund-policy": "Refunds are accepted within 30 days of delivery when the item is unused.",
    "refund-exceptions": "Digital downloads and gift cards are not eligible for refunds after delivery.",
    "shipping": "Standard shipping takes 3 to 5 business days inside the European Union.",
    "warranty": "Hardware carries a two year warranty covering manufacturing defects.",
    "store-hours": "The Berlin store opens at 9 and closes at 19 from Monday to Saturday.",
    "loyalty": "Loyalty points expire 12 months after they were earned.",
}


@pytest.fixture
def llama_index_app(server: Any) -> Iterator[tuple[Capture, Any, Any]]:
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    docs = [
        Document(
            text=text,
            doc_id=doc_id,
            metadata={"file_name": f"{doc_id}.md", "category": "policy"},
            excluded_llm_metadata_keys=["file_name", "category"],
        )
        for doc_id, text in KB.items()
    ]
    index = VectorStoreIndex.from_documents(docs, embed_model=BagOfWordsEmbedding())
    capture = Capture(server, "llamaindex-app")
    instrumentor = LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=capture.provider)
    try:
        yield capture, index, instrumentor
    finally:
        instrumentor.uninstrument()
        capture.provider.shutdown()


def test_llamaindex_openinference_query(server: Any, llama_index_app: tuple[Capture, Any, Any]) -> None:
    from openinference.instrumentation import using_attributes

    capture, index, _ = llama_index_app
    engine = index.as_query_engine(
        llm=MockLLM(max_tokens=6),
        similarity_top_k=4,
        node_postprocessors=[PassThrough(), KeywordRerank(top_n=2)],
    )
    question = "Are gift cards eligible for refunds after delivery?"
    with using_attributes(session_id="sess-li", user_id="user-li", metadata={"ragfault.case_id": "case-li"}):
        response = engine.query(question)
    answer = str(response)
    trace_id = capture.wait_stored()

    # --- retrieval: candidates with content, score, metadata; doc_id from metadata, chunk_id a node UUID
    node_ids = set(index.docstore.docs)
    retrievals = rows_as_dicts(
        server,
        "SELECT s.span_id, s.query_text, count(d.position) AS n FROM steps s "
        "LEFT JOIN step_documents d "
        "ON d.trace_id = s.trace_id AND d.span_id = s.span_id AND d.stage = 'candidate' "
        "WHERE s.trace_id = $t AND s.step_type = 'retrieval' GROUP BY ALL ORDER BY n DESC",
        t=trace_id,
    )
    assert retrievals and retrievals[0]["n"] == 4
    assert retrievals[0]["query_text"] == question
    # LlamaIndex also reports its inner ``_retrieve`` call as a RETRIEVER span, without documents
    assert all(r["n"] == 0 for r in retrievals[1:])
    cands = rows_as_dicts(
        server,
        "SELECT position, doc_id, chunk_id, content, score, metadata, convention FROM step_documents d "
        "JOIN steps s USING (trace_id, span_id) "
        "WHERE d.trace_id = $t AND d.stage = 'candidate' ORDER BY position",
        t=trace_id,
    )
    assert [c["position"] for c in cands] == [0, 1, 2, 3]
    assert {c["convention"] for c in cands} == {"openinference"}
    for c in cands:
        assert c["chunk_id"] in node_ids  # document.id is the chunk (node) UUID ...
        doc_id = c["doc_id"].removesuffix(".md")
        assert c["doc_id"] == f"{doc_id}.md" and c["chunk_id"] != c["doc_id"]  # ... doc_id from file_name
        assert c["content"] == KB[doc_id]
        assert metadata_of(c["metadata"]) == {"file_name": f"{doc_id}.md", "category": "policy"}
        assert isinstance(c["score"], float) and 0.0 <= c["score"] <= 1.0
    scores = [c["score"] for c in cands]
    assert scores == sorted(scores, reverse=True)
    assert cands[0]["doc_id"] == "refund-exceptions.md" and scores[0] > 0.5  # a sensible ranking

    # --- the reranker: RERANKER span -> rerank step with its input and its kept output
    reranks = rows_as_dicts(
        server,
        "SELECT span_id, query_text, top_k, model FROM steps WHERE trace_id = $t AND step_type = 'rerank'",
        t=trace_id,
    )
    assert len(reranks) == 1
    assert (reranks[0]["query_text"], reranks[0]["top_k"], reranks[0]["model"]) == (
        question,
        2,
        "keyword-overlap",
    )
    reranked = rows_as_dicts(
        server,
        "SELECT position, doc_id, chunk_id, score FROM step_documents "
        "WHERE trace_id = $t AND stage = 'reranked' "
        "ORDER BY position",
        t=trace_id,
    )
    assert len(reranked) == 2 and reranked[0]["doc_id"] == "refund-exceptions.md"
    assert {r["chunk_id"] for r in reranked} <= {c["chunk_id"] for c in cands}
    assert (
        server.scalar(
            "SELECT count(*) FROM step_documents WHERE trace_id = $t AND stage = 'rerank_input'", t=trace_id
        )
        == 4
    )
    # a postprocessor that emits no rerank events is only a CHAIN span to the instrumentor
    plain = rows_as_dicts(
        server, "SELECT step_type FROM steps WHERE trace_id = $t AND name LIKE 'PassThrough%'", t=trace_id
    )
    assert plain and {p["step_type"] for p in plain} == {"chain"}

    # --- the LLM call: the whole prompt as input_text, with the kept chunks in it
    llms = rows_as_dicts(
        server,
        "SELECT span_id, parent_span_id, name, input_text, output_text, model FROM steps "
        "WHERE trace_id = $t AND step_type = 'llm' ORDER BY end_time",
        t=trace_id,
    )
    assert llms, "no LLM step"
    complete = [s for s in llms if s["name"].endswith(".complete")]
    assert len(complete) == 1
    prompt = complete[0]["input_text"]
    assert question in prompt and "Context information is below" in prompt
    kept_chunks = [KB[r["doc_id"].removesuffix(".md")] for r in reranked]
    assert all(chunk in prompt for chunk in kept_chunks)
    assert complete[0]["output_text"] == answer == "text text text text text text"
    # LLM.predict wraps LLM.complete; its prompt is rendered from the template and its variables
    predict = [s for s in llms if s["name"].endswith(".predict")]
    assert predict and all(chunk in predict[0]["input_text"] for chunk in kept_chunks)

    # --- the trace: query, answer, the answering LLM, ids from the OpenInference metadata attribute
    tr = rows_as_dicts(
        server,
        "SELECT query_text, answer_text, answer_span_id, case_id, session_id, user_id "
        "FROM traces WHERE trace_id = $t",
        t=trace_id,
    )[0]
    assert (tr["query_text"], tr["answer_text"]) == (question, answer)
    assert tr["answer_span_id"] == complete[0]["span_id"]
    assert (tr["case_id"], tr["session_id"], tr["user_id"]) == ("case-li", "sess-li", "user-li")

    # --- the context stage: derived from the prompt = the reranked chunks, in prompt order
    ctx = rows_as_dicts(
        server,
        "SELECT span_id, position, doc_id, chunk_id, content, source FROM step_documents "
        "WHERE trace_id = $t AND stage = 'context' ORDER BY position",
        t=trace_id,
    )
    assert [c["chunk_id"] for c in ctx] == [r["chunk_id"] for r in reranked]
    assert {c["source"] for c in ctx} == {"derived"} and {c["span_id"] for c in ctx} == {
        complete[0]["span_id"]
    }
    assert [prompt.index(c["content"]) for c in ctx] == sorted(prompt.index(c["content"]) for c in ctx)
    dropped = {c["chunk_id"] for c in cands} - {c["chunk_id"] for c in ctx}
    assert len(dropped) == 2 and not any(
        KB[c["doc_id"].removesuffix(".md")] in prompt for c in cands if c["chunk_id"] in dropped
    )


# ==================================================================================================
# LangChain + OpenLLMetry

from langchain_core.callbacks import CallbackManagerForRetrieverRun  # noqa: E402
from langchain_core.documents import Document as LCDocument  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.output_parsers import StrOutputParser  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.runnables import RunnableLambda, RunnablePassthrough  # noqa: E402


class KeywordRetriever(BaseRetriever):
    """Ranks a fixed corpus by query-word overlap; documents carry metadata but (as usual) no id."""

    k: int = 3

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[LCDocument]:
        q = set(words(query))
        ranked = sorted(KB.items(), key=lambda kv: (-len(q & set(words(kv[1]))), kv[0]))
        return [
            LCDocument(page_content=text, metadata={"source": f"kb/{doc_id}.md", "lang": "en"})
            for doc_id, text in ranked[: self.k]
        ]


@pytest.fixture
def langchain_instrumented(server: Any) -> Iterator[Capture]:
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    capture = Capture(server, "langchain-app")
    instrumentor = LangchainInstrumentor()
    instrumentor.instrument(tracer_provider=capture.provider)
    try:
        yield capture
    finally:
        instrumentor.uninstrument()
        capture.provider.shutdown()


def test_langchain_openllmetry_lcel_chain(server: Any, langchain_instrumented: Capture) -> None:
    capture = langchain_instrumented

    def format_docs(docs: list[LCDocument]) -> str:
        return "\n\n".join(d.page_content for d in docs[:2])  # a budget: only the top two reach the prompt

    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer only from this context:\n{context}"), ("human", "{question}")]
    )
    model = FakeListChatModel(responses=["Gift cards cannot be refunded after delivery."])
    chain = (
        {"context": KeywordRetriever() | RunnableLambda(format_docs), "question": RunnablePassthrough()}
        | prompt
        | model
        | StrOutputParser()
    )
    question = "Can gift cards get refunds after delivery?"
    answer = chain.invoke(question, config={"metadata": {"ragfault.case_id": "case-lc"}})
    trace_id = capture.wait_stored()

    steps = rows_as_dicts(
        server,
        "SELECT span_id, name, step_type, convention, query_text, input_text, output_text, is_root, case_id "
        "FROM steps WHERE trace_id = $t ORDER BY start_time",
        t=trace_id,
    )
    assert {s["convention"] for s in steps} == {"traceloop"}
    root = [s for s in steps if s["is_root"]]
    assert len(root) == 1 and root[0]["step_type"] == "chain"  # a workflow, though labelled invoke_agent
    assert (root[0]["query_text"], root[0]["output_text"]) == (question, answer)

    retrievals = [s for s in steps if s["step_type"] == "retrieval"]
    assert len(retrievals) == 1 and retrievals[0]["query_text"] == question
    cands = rows_as_dicts(
        server,
        "SELECT position, doc_id, chunk_id, content, score, metadata FROM step_documents "
        "WHERE trace_id = $t AND stage = 'candidate' ORDER BY position",
        t=trace_id,
    )
    expected = KeywordRetriever()._get_relevant_documents(question, run_manager=None)  # type: ignore[arg-type]
    assert [c["content"] for c in cands] == [d.page_content for d in expected]
    assert [c["doc_id"] for c in cands] == [d.metadata["source"] for d in expected]  # from metadata
    assert all(c["chunk_id"] is None and c["score"] is None for c in cands)  # LangChain gives neither
    assert [metadata_of(c["metadata"]) for c in cands] == [d.metadata for d in expected]

    llms = [s for s in steps if s["step_type"] == "llm"]
    assert len(llms) == 1
    assert llms[0]["query_text"] == question
    assert llms[0]["input_text"].startswith("Answer only from this context:\n" + expected[0].page_content)
    assert llms[0]["input_text"].endswith(question)
    assert llms[0]["output_text"] == answer

    tr = rows_as_dicts(
        server,
        "SELECT query_text, answer_text, answer_span_id, case_id FROM traces WHERE trace_id = $t",
        t=trace_id,
    )[0]
    assert (tr["query_text"], tr["answer_text"], tr["answer_span_id"]) == (
        question,
        answer,
        llms[0]["span_id"],
    )
    # LangChain run metadata travels as traceloop.association.properties.* on the spans that carry it
    assert tr["case_id"] == "case-lc"

    ctx = rows_as_dicts(
        server,
        "SELECT position, doc_id, source FROM step_documents "
        "WHERE trace_id = $t AND stage = 'context' ORDER BY position",
        t=trace_id,
    )
    assert [c["doc_id"] for c in ctx] == [d.metadata["source"] for d in expected[:2]]
    assert {c["source"] for c in ctx} == {"derived"}


# ==================================================================================================
# OTel GenAI semantic conventions, hand-built with the OTel SDK


@pytest.fixture
def genai_capture(server: Any) -> Iterator[Capture]:
    capture = Capture(server, "genai-app")
    try:
        yield capture
    finally:
        capture.provider.shutdown()


def _msgs(*pairs: tuple[str, list[dict[str, Any]]]) -> str:
    return json.dumps([{"role": role, "parts": parts} for role, parts in pairs])


def test_genai_semconv_agent_trace(server: Any, genai_capture: Capture) -> None:
    from opentelemetry.trace import SpanKind

    tracer = genai_capture.provider.get_tracer("hand-built-agent")
    question = "How long is the warranty on hardware?"
    docs = [
        {"id": "warranty", "score": 0.93, "content": KB["warranty"]},
        {"id": "refund-policy", "score": 0.41, "content": KB["refund-policy"]},
        {"id": "store-hours", "score": 0.12},  # no content: id and score only, as the spec's minimum
    ]
    final_answer = "Hardware has a two year warranty."
    with tracer.start_as_current_span("invoke_agent support", kind=SpanKind.INTERNAL) as agent:
        agent.set_attributes(
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "support",
                "gen_ai.conversation.id": "conv-1",
                "enduser.id": "bob",
                "ragfault.case_id": "case-genai",
                "ragfault.run_id": "run-7",
                "ragfault.user_scope": ["public", "support"],
                "gen_ai.input.messages": _msgs(("user", [{"type": "text", "content": question}])),
            }
        )
        with tracer.start_as_current_span("retrieval kb") as ret:
            ret.set_attributes(
                {
                    "gen_ai.operation.name": "retrieval",
                    "gen_ai.data_source.id": "kb",
                    "gen_ai.request.top_k": 3,
                    "gen_ai.retrieval.query.text": question,
                    "gen_ai.retrieval.documents": json.dumps(docs),
                }
            )
        with tracer.start_as_current_span("chat gpt-test", kind=SpanKind.CLIENT) as chat1:
            chat1.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": "gpt-test",
                    "gen_ai.response.model": "gpt-test-0601",
                    "gen_ai.usage.input_tokens": 310,
                    "gen_ai.usage.output_tokens": 22,
                    "gen_ai.input.messages": _msgs(("user", [{"type": "text", "content": question}])),
                    "gen_ai.output.messages": json.dumps(
                        [
                            {
                                "role": "assistant",
                                "parts": [
                                    {
                                        "type": "tool_call",
                                        "id": "call-1",
                                        "name": "lookup_sku",
                                        "arguments": {"sku": "HW-1"},
                                    }
                                ],
                                "finish_reason": "tool_call",
                            }
                        ]
                    ),
                }
            )
        with tracer.start_as_current_span("execute_tool lookup_sku") as tool:
            tool.set_attributes(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "lookup_sku",
                    "gen_ai.tool.type": "function",
                    "gen_ai.tool.call.id": "call-1",
                    "gen_ai.tool.call.arguments": json.dumps({"sku": "HW-1"}),
                    "gen_ai.tool.call.result": json.dumps({"sku": "HW-1", "category": "hardware"}),
                }
            )
        with tracer.start_as_current_span("chat gpt-test", kind=SpanKind.CLIENT) as chat2:
            chat2.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": "gpt-test",
                    "gen_ai.usage.input_tokens": 420,
                    "gen_ai.usage.output_tokens": 9,
                    "gen_ai.system_instructions": json.dumps(
                        [{"type": "text", "content": "Use these documents:\n" + KB["warranty"]}]
                    ),
                    "gen_ai.input.messages": _msgs(
                        ("user", [{"type": "text", "content": question}]),
                        (
                            "assistant",
                            [
                                {
                                    "type": "tool_call",
                                    "id": "call-1",
                                    "name": "lookup_sku",
                                    "arguments": {"sku": "HW-1"},
                                }
                            ],
                        ),
                        (
                            "tool",
                            [
                                {
                                    "type": "tool_call_response",
                                    "id": "call-1",
                                    "response": "category: hardware",
                                }
                            ],
                        ),
                    ),
                    "gen_ai.output.messages": json.dumps(
                        [
                            {
                                "role": "assistant",
                                "parts": [{"type": "text", "content": final_answer}],
                                "finish_reason": "stop",
                            }
                        ]
                    ),
                }
            )
        agent.set_attribute(
            "gen_ai.output.messages",
            json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": final_answer}]}]),
        )
    trace_id = genai_capture.wait_stored()

    steps = rows_as_dicts(
        server,
        "SELECT span_id, step_type, convention, model, input_tokens, output_tokens, total_tokens, "
        "query_text, input_text, output_text, tool_name, tool_arguments, tool_result, top_k, case_id, "
        "run_id, session_id, "
        "user_id, user_scope, is_root FROM steps WHERE trace_id = $t ORDER BY start_time",
        t=trace_id,
    )
    assert [s["step_type"] for s in steps] == ["agent", "retrieval", "llm", "tool", "llm"]
    assert {s["convention"] for s in steps} == {"genai"}
    agent_s, ret_s, chat1_s, tool_s, chat2_s = steps
    assert agent_s["is_root"] and (agent_s["case_id"], agent_s["run_id"]) == ("case-genai", "run-7")
    assert (agent_s["session_id"], agent_s["user_id"], agent_s["user_scope"]) == (
        "conv-1",
        "bob",
        ["public", "support"],
    )
    assert (ret_s["query_text"], ret_s["top_k"]) == (question, 3)
    assert (chat1_s["model"], chat1_s["input_tokens"], chat1_s["output_tokens"], chat1_s["total_tokens"]) == (
        "gpt-test-0601",
        310,
        22,
        332,
    )
    assert chat1_s["output_text"] is None  # only a tool call
    assert (tool_s["tool_name"], json.loads(tool_s["tool_arguments"]), json.loads(tool_s["tool_result"])) == (
        "lookup_sku",
        {"sku": "HW-1"},
        {"sku": "HW-1", "category": "hardware"},
    )
    assert (chat2_s["model"], chat2_s["input_tokens"], chat2_s["output_tokens"]) == ("gpt-test", 420, 9)
    assert KB["warranty"] in chat2_s["input_text"] and "category: hardware" in chat2_s["input_text"]
    assert chat2_s["output_text"] == final_answer

    cands = rows_as_dicts(
        server,
        "SELECT position, doc_id, chunk_id, content, score FROM step_documents WHERE trace_id = $t "
        "AND stage = 'candidate' ORDER BY position",
        t=trace_id,
    )
    assert [(c["position"], c["doc_id"], c["score"]) for c in cands] == [
        (0, "warranty", 0.93),
        (1, "refund-policy", 0.41),
        (2, "store-hours", 0.12),
    ]
    assert cands[2]["content"] is None

    tr = rows_as_dicts(
        server,
        "SELECT query_text, answer_text, answer_span_id, case_id, run_id, user_scope "
        "FROM traces WHERE trace_id = $t",
        t=trace_id,
    )[0]
    assert (tr["query_text"], tr["answer_text"], tr["answer_span_id"]) == (
        question,
        final_answer,
        chat2_s["span_id"],
    )
    assert (tr["case_id"], tr["run_id"], tr["user_scope"]) == ("case-genai", "run-7", ["public", "support"])
    ctx = rows_as_dicts(
        server,
        "SELECT doc_id, source FROM step_documents WHERE trace_id = $t AND stage = 'context'",
        t=trace_id,
    )
    assert ctx == [{"doc_id": "warranty", "source": "derived"}]


def test_explicit_context_and_citations_over_otlp(server: Any, genai_capture: Capture) -> None:
    tracer = genai_capture.provider.get_tracer("hand-built-explicit")
    with tracer.start_as_current_span("rag") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        with tracer.start_as_current_span("retrieval") as ret:
            ret.set_attributes(
                {
                    "gen_ai.operation.name": "retrieval",
                    "gen_ai.retrieval.documents": json.dumps(
                        [{"id": k, "score": 1.0, "content": KB[k]} for k in ("warranty", "shipping")]
                    ),
                }
            )
        with tracer.start_as_current_span("chat") as chat:
            chat.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    # the prompt holds both documents, but the app says only one was the context
                    "gen_ai.input.messages": _msgs(
                        (
                            "user",
                            [
                                {
                                    "type": "text",
                                    "content": KB["warranty"] + "\n" + KB["shipping"] + "\nWarranty?",
                                }
                            ],
                        )
                    ),
                    "gen_ai.output.messages": _msgs(
                        ("assistant", [{"type": "text", "content": "Two years [warranty]."}])
                    ),
                    "ragfault.context.documents.0.document.id": "warranty",
                    "ragfault.context.documents.0.document.content": KB["warranty"],
                    "ragfault.answer.citations": ["warranty"],
                }
            )
    trace_id = genai_capture.wait_stored()
    ctx = rows_as_dicts(
        server,
        "SELECT doc_id, source FROM step_documents "
        "WHERE trace_id = $t AND stage = 'context' ORDER BY position",
        t=trace_id,
    )
    assert ctx == [{"doc_id": "warranty", "source": "span"}]
    assert server.scalar(
        "SELECT citations FROM steps WHERE trace_id = $t AND step_type = 'llm'", t=trace_id
    ) == ["warranty"]
    assert (
        server.scalar("SELECT answer_text FROM traces WHERE trace_id = $t", t=trace_id)
        == "Two years [warranty]."
    )
