"""A LangChain app instrumented with OpenLLMetry, run in a process of its own: the instrumentor
patches LangChain once per process, and another test in the same process may have patched and
unpatched it already. ``python -m tests.ragfault.doctor_apps URL SERVICE [CASE_ID]`` sends one
trace to the server at URL and prints its trace id and span count."""

from __future__ import annotations

import sys
from typing import Any

from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.collector.test_instrumentors import KeywordRetriever
from tests.otel_helpers import http_provider


def main(url: str, service: str, case_id: str | None) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    provider = http_provider(url, service=service)
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    LangchainInstrumentor().instrument(tracer_provider=provider)

    def join_documents(docs: list[Any]) -> str:
        return "\n\n".join(d.page_content for d in docs)

    prompt = ChatPromptTemplate.from_messages([("system", "Context:\n{context}"), ("human", "{question}")])
    chain = (
        {
            "context": KeywordRetriever() | RunnableLambda(join_documents),
            "question": RunnablePassthrough(),
        }
        | prompt
        | FakeListChatModel(responses=["Gift cards cannot be refunded after delivery."])
        | StrOutputParser()
    )
    config: dict[str, Any] = {"metadata": {"ragfault.case_id": case_id}} if case_id else {}
    chain.invoke("Can gift cards get refunds after delivery?", config=config)  # type: ignore[arg-type]
    provider.force_flush()
    spans = memory.get_finished_spans()
    provider.shutdown()
    ids = {format(s.context.trace_id, "032x") for s in spans}
    assert len(ids) == 1, ids
    print(ids.pop(), len(spans))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
