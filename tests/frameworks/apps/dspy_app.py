"""A DSPy program traced by ``openinference-instrumentation-dspy``, the model the local chat server
(``dspy.LM`` through LiteLLM, caching off). The program is three modules: ``Search`` returns the
``TOP_K`` best documents as objects, ``FitBudget`` keeps the first ``BUDGET``, and a ``dspy.Predict``
answers from them. The chat server answers in plain text, not in DSPy's field markers, so the
adapter reads a reply without markers as the one output field (as one would for such a model)."""

from __future__ import annotations

import os
import sys
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download of the price list
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dspy  # noqa: E402
import scenario  # noqa: E402
from openinference.instrumentation.dspy import DSPyInstrumentor  # noqa: E402

provider = scenario.http_tracer_provider("dspy")
ids = scenario.trace_ids()
provider.add_span_processor(ids)
DSPyInstrumentor().instrument(tracer_provider=provider)
_, chat_url = scenario.settings()


class PlainAdapter(dspy.ChatAdapter):
    """DSPy's chat format; a reply that does not follow it is the value of the one output field."""

    def parse(self, signature: Any, completion: str) -> dict[str, Any]:
        try:
            return super().parse(signature, completion)
        except Exception:
            (name,) = signature.output_fields
            return {name: completion.strip()}


dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
dspy.configure(
    lm=dspy.LM("openai/local-model", api_base=chat_url, api_key="local", cache=False),
    adapter=PlainAdapter(),
)


class Search(dspy.Module):
    def forward(self, question: str) -> dspy.Prediction:
        found = scenario.keyword_search(question)
        return dspy.Prediction(passages=found)


class FitBudget(dspy.Module):
    def forward(self, passages: list[dict[str, Any]]) -> dspy.Prediction:
        return dspy.Prediction(passages=passages[: scenario.BUDGET])


class RAG(dspy.Module):
    def __init__(self) -> None:
        super().__init__()
        self.search = Search()
        self.fit = FitBudget()
        self.respond = dspy.Predict("context: str, question: str -> answer: str")

    def forward(self, question: str) -> dspy.Prediction:
        kept = self.fit(passages=self.search(question=question).passages).passages
        context = "\n".join(f"- {p['content']}" for p in kept)
        return self.respond(context=context, question=question)


rag = RAG()
for key, question in scenario.QUESTIONS.items():
    ids.current = key
    rag(question=question)
    ids.current = None
provider.force_flush()
provider.shutdown()
scenario.report(ids.ids)
