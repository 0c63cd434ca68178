"""A LlamaIndex query engine (vector index over a bag-of-words embedding, a prompt-budget node
postprocessor, an LLM calling the local chat server) traced by OpenLLMetry's
``opentelemetry-instrumentation-llamaindex``. With the argument ``complete`` the custom LLM is a
completion model (``is_chat_model=False``): the engine calls ``complete(prompt)``, not ``chat``."""

from __future__ import annotations

import math
import os
import re
import sys
import zlib
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import httpx  # noqa: E402
import scenario  # noqa: E402
from llama_index.core import Document, VectorStoreIndex  # noqa: E402
from llama_index.core.base.embeddings.base import BaseEmbedding  # noqa: E402
from llama_index.core.llms import (  # noqa: E402
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback  # noqa: E402
from llama_index.core.postprocessor.types import BaseNodePostprocessor  # noqa: E402
from llama_index.core.schema import NodeWithScore, QueryBundle  # noqa: E402
from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor  # noqa: E402

_WORD = re.compile(r"\w+")
COMPLETE = sys.argv[1:] == ["complete"]


class BagOfWordsEmbedding(BaseEmbedding):
    """Deterministic hashed bag of words (crc32: ``hash()`` is salted per process)."""

    dim: int = 512

    def _vec(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for w in _WORD.findall(text.lower()):
            if len(w) > 2:
                v[zlib.crc32(w.encode()) % self.dim] += 1.0
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / norm for x in v]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vec(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vec(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vec(text)


class LocalChatLLM(CustomLLM):
    """A chat LLM over the local OpenAI-compatible server, written as LlamaIndex documents custom LLMs."""

    base_url: str

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="local-model", is_chat_model=COMPLETE is False)

    def _post(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        r = httpx.post(
            f"{self.base_url}/chat/completions",
            json={"model": "local-model", "messages": messages},
            timeout=30,
        )
        r.raise_for_status()
        return dict(r.json())

    @llm_chat_callback()
    def chat(self, messages: Any, **kwargs: Any) -> ChatResponse:
        body = self._post([{"role": m.role.value, "content": m.content or ""} for m in messages])
        text = body["choices"][0]["message"]["content"]
        return ChatResponse(message=ChatMessage(role="assistant", content=text), raw=body)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        body = self._post([{"role": "user", "content": prompt}])
        return CompletionResponse(text=body["choices"][0]["message"]["content"], raw=body)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        yield self.complete(prompt)


class PromptBudget(BaseNodePostprocessor):
    """Keeps the first ``top_n`` nodes: what fits the prompt."""

    top_n: int = scenario.BUDGET

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return nodes[: self.top_n]


provider = scenario.http_tracer_provider("llamaindex-openllmetry")
ids = scenario.trace_ids()
provider.add_span_processor(ids)
LlamaIndexInstrumentor().instrument(tracer_provider=provider)

_, chat_url = scenario.settings()
docs = [
    Document(
        text=d["content"],
        doc_id=d["doc_id"],
        metadata={"doc_id": d["doc_id"]},
        excluded_llm_metadata_keys=["doc_id"],
    )
    for d in scenario.KB
]
index = VectorStoreIndex.from_documents(docs, embed_model=BagOfWordsEmbedding())
engine = index.as_query_engine(
    llm=LocalChatLLM(base_url=chat_url), similarity_top_k=scenario.TOP_K, node_postprocessors=[PromptBudget()]
)
for key, question in scenario.QUESTIONS.items():
    ids.current = key
    engine.query(question)
    ids.current = None
provider.force_flush()
provider.shutdown()
scenario.report(ids.ids)
