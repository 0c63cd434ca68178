"""A Haystack RAG pipeline (in-memory BM25 retriever -> chat prompt builder -> OpenAI chat generator)
traced by the instrumentation named on the command line:

- ``openinference``: ``openinference-instrumentation-haystack``;
- ``openllmetry``: OpenLLMetry's ``opentelemetry-instrumentation-haystack`` and its OpenAI one (what
  ``Traceloop.init`` enables for a Haystack app); ``openllmetry-haystack``: the Haystack one alone;
- ``native``: Haystack's own OpenTelemetry tracer with content tracing on;
- ``native-openllmetry``: Haystack's own tracer with content tracing off (its default), beside
  OpenLLMetry's Haystack and OpenAI instrumentations (what ``Traceloop.init`` adds): the retrieval
  step is traced, the documents it returned are not.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402

mode = sys.argv[1]
if mode == "native":
    os.environ["HAYSTACK_CONTENT_TRACING_ENABLED"] = "true"

from haystack import Document, Pipeline  # noqa: E402
from haystack.components.builders import ChatPromptBuilder  # noqa: E402
from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: E402
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.document_stores.in_memory import InMemoryDocumentStore  # noqa: E402
from haystack.utils import Secret  # noqa: E402
from opentelemetry import trace  # noqa: E402

provider = scenario.http_tracer_provider(f"haystack-{mode}")
ids = scenario.trace_ids()
provider.add_span_processor(ids)
if mode == "openinference":
    from openinference.instrumentation.haystack import HaystackInstrumentor

    HaystackInstrumentor().instrument(tracer_provider=provider)
elif mode in ("openllmetry", "openllmetry-haystack"):
    from opentelemetry.instrumentation.haystack import HaystackInstrumentor as OllHaystack

    OllHaystack().instrument(tracer_provider=provider)
    if mode == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=provider)
elif mode in ("native", "native-openllmetry"):
    import haystack.tracing
    from haystack.tracing.opentelemetry import OpenTelemetryTracer

    trace.set_tracer_provider(provider)
    haystack.tracing.enable_tracing(OpenTelemetryTracer(provider.get_tracer("haystack")))
    if mode == "native-openllmetry":
        from opentelemetry.instrumentation.haystack import HaystackInstrumentor as OllHaystack
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        OllHaystack().instrument(tracer_provider=provider)
        OpenAIInstrumentor().instrument(tracer_provider=provider)
else:
    raise SystemExit(f"unknown mode {mode!r}")

_, chat_url = scenario.settings()
store = InMemoryDocumentStore()
store.write_documents(
    [Document(id=d["doc_id"], content=d["content"], meta={"doc_id": d["doc_id"]}) for d in scenario.KB]
)
template = [
    ChatMessage.from_user(
        "Answer from the context only.\nContext:\n"
        "{% for d in documents[:" + str(scenario.BUDGET) + "] %}- {{ d.content }}\n{% endfor %}"
        "Question: {{ question }}"
    )
]
pipe = Pipeline()
pipe.add_component("retriever", InMemoryBM25Retriever(document_store=store, top_k=scenario.TOP_K))
pipe.add_component("prompt_builder", ChatPromptBuilder(template=template, required_variables=["question"]))
pipe.add_component(
    "llm", OpenAIChatGenerator(api_key=Secret.from_token("local"), api_base_url=chat_url, model="local-model")
)
pipe.connect("retriever.documents", "prompt_builder.documents")
pipe.connect("prompt_builder.prompt", "llm.messages")

for key, question in scenario.QUESTIONS.items():
    ids.current = key
    result = pipe.run({"retriever": {"query": question}, "prompt_builder": {"question": question}})
    ids.current = None
provider.force_flush()
provider.shutdown()
scenario.report(ids.ids)
