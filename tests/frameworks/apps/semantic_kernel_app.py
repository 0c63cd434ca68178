"""Semantic Kernel (``semantic-kernel``) with its own OpenTelemetry instrumentation: a
``ChatCompletionAgent`` whose ``search_kb`` plugin function runs the knowledge base's search function
(``InMemoryCollection.create_search_function`` over a bag-of-words embedding, ``TOP_K`` results) and
gives the model the first ``BUDGET`` documents as text; the model calls the local chat server.

Semantic Kernel traces the agent, the model calls and each kernel function (``execute_tool``) as
spans; the content (messages, tool arguments and results) only with
``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE=true``, and the messages as log
records through Python's logging, exported here to ``/v1/logs`` beside the spans. The test sets the
variables (``..._ENABLE_OTEL_DIAGNOSTICS=true`` alone: spans without content). With the argument
``named`` each question runs under a span of the app's own that names its gold case
(``ragfault.case_id``), as an app does whose traces may not record the question.
"""

# no ``from __future__ import annotations`` here: Semantic Kernel reads the record model's and the
# plugin function's ``Annotated`` hints at run time, and string annotations hide them from it
import asyncio
import json
import logging
import math
import os
import re
import sys
import zlib
from dataclasses import dataclass
from typing import Annotated, Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import scenario  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry._logs import set_logger_provider  # noqa: E402
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler  # noqa: E402
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402

# the providers are set before Semantic Kernel is imported: it takes its tracers at import
ENDPOINT, CHAT_URL = scenario.settings()
provider = scenario.http_tracer_provider("semantic-kernel")
ids = scenario.trace_ids()
provider.add_span_processor(ids)
trace.set_tracer_provider(provider)
logs = LoggerProvider(resource=Resource.create({"service.name": "semantic-kernel"}))
logs.add_log_record_processor(
    SimpleLogRecordProcessor(OTLPLogExporter(endpoint=ENDPOINT.replace("/v1/traces", "/v1/logs")))
)
set_logger_provider(logs)
handler = LoggingHandler(logger_provider=logs)
handler.addFilter(logging.Filter("semantic_kernel"))  # Semantic Kernel's records only, as its docs do
logging.getLogger().addHandler(handler)
logging.getLogger().setLevel(logging.INFO)

from semantic_kernel.agents import ChatCompletionAgent  # noqa: E402
from semantic_kernel.connectors.ai.embedding_generator_base import EmbeddingGeneratorBase  # noqa: E402
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion  # noqa: E402
from semantic_kernel.connectors.in_memory import InMemoryCollection  # noqa: E402
from semantic_kernel.data.vector import VectorStoreField, vectorstoremodel  # noqa: E402
from semantic_kernel.functions import KernelFunction, kernel_function  # noqa: E402
from semantic_kernel.kernel import Kernel  # noqa: E402

_WORD = re.compile(r"\w+")
DIM = 512
NAMED = sys.argv[1:] == ["named"]


class BagOfWords(EmbeddingGeneratorBase):
    """Deterministic hashed bag of words (crc32: ``hash()`` is salted per process), no model."""

    async def generate_embeddings(self, texts: list[str], settings: Any = None, **kwargs: Any) -> Any:
        out = []
        for text in texts:
            v = [0.0] * DIM
            for w in _WORD.findall(text.lower()):
                if len(w) > 2:
                    v[zlib.crc32(w.encode()) % DIM] += 1.0
            norm = math.sqrt(sum(x * x for x in v)) or 1.0
            out.append([x / norm for x in v])
        return np.array(out)


@vectorstoremodel(collection_name="kb")
@dataclass
class Entry:
    doc_id: Annotated[str, VectorStoreField("key")]
    content: Annotated[str, VectorStoreField("data")]
    embedding: Annotated[str | list[float] | None, VectorStoreField("vector", dimensions=DIM)] = None

    def __post_init__(self) -> None:
        if self.embedding is None:
            self.embedding = self.content  # embedded by the collection's generator on upsert


class KnowledgeBase:
    """The agent's plugin: ``search_kb`` runs the collection's search function, keeps the budget."""

    def __init__(self, kernel: Kernel, retrieve: KernelFunction) -> None:
        self.kernel = kernel
        self.retrieve = retrieve

    @kernel_function(name="search_kb", description="Search the knowledge base.")
    async def search_kb(self, query: Annotated[str, "the question"]) -> str:
        result = await self.retrieve.invoke(self.kernel, query=query)
        found = [json.loads(r) for r in (result.value if result else [])]
        return "\n".join(f"- {r['record']['content']}" for r in found[: scenario.BUDGET])


async def main() -> None:
    collection = InMemoryCollection(record_type=Entry, embedding_generator=BagOfWords(ai_model_id="bow"))
    async with collection:
        await collection.ensure_collection_exists()
        await collection.upsert([Entry(doc_id=d["doc_id"], content=d["content"]) for d in scenario.KB])
        retrieve = collection.create_search_function(
            "retrieve", "Retrieve knowledge-base passages.", top=scenario.TOP_K
        )
        kernel = Kernel()
        service = OpenAIChatCompletion(
            ai_model_id="local-model", async_client=AsyncOpenAI(base_url=CHAT_URL, api_key="local")
        )
        agent = ChatCompletionAgent(
            kernel=kernel,
            service=service,
            name="support",
            instructions="Answer from the context only.",
            plugins=[KnowledgeBase(kernel, retrieve)],
        )
        tracer = trace.get_tracer("semantic-kernel-app")
        for key, question in scenario.QUESTIONS.items():
            ids.current = key
            if NAMED:  # the app's own span names the gold case: the question may not be recorded
                with tracer.start_as_current_span(
                    "answer", attributes={"ragfault.case_id": scenario.CASE_OF[key]}
                ):
                    await agent.get_response(messages=question)
            else:
                await agent.get_response(messages=question)
            ids.current = None
    provider.force_flush()
    logs.force_flush()
    scenario.report(ids.ids)


if __name__ == "__main__":
    asyncio.run(main())
