"""An app traced with the Traceloop SDK's decorators (``traceloop-sdk``), exporting to ragfault as a user
would: ``Traceloop.init`` with the server as its API endpoint (``TRACELOOP_BASE_URL``), the OpenAI
instrumentation enabled, the model called through the openai SDK (the local chat server).

- ``workflow``: a ``@workflow`` that sets association properties, a ``@task`` retrieving documents
  (a keyword ranking returning ``{id, text, score, metadata}`` objects), a ``@task`` keeping what fits
  the prompt budget, then a chat completion;
- ``agent``: an ``@agent`` whose ``@tool`` searches the knowledge base and returns the documents;
  the agent puts the first ones in the prompt and calls the model. Its association properties also
  name the gold case (``ragfault.case_id``).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402

mode = sys.argv[1]
endpoint, chat_url = scenario.settings()
os.environ["TRACELOOP_BASE_URL"] = endpoint.removesuffix("/v1/traces")
os.environ["TRACELOOP_TELEMETRY"] = "false"

from openai import OpenAI  # noqa: E402
from opentelemetry import trace  # noqa: E402
from traceloop.sdk import Traceloop  # noqa: E402
from traceloop.sdk.decorators import agent, task, tool, workflow  # noqa: E402
from traceloop.sdk.instruments import Instruments  # noqa: E402

Traceloop.init(
    app_name=f"traceloop-{mode}",
    disable_batch=True,
    instruments={Instruments.OPENAI},
    telemetry_enabled=False,
)
client = OpenAI(base_url=chat_url, api_key="local")
trace_ids: dict[str, str] = {}
current = [""]  # the question being asked


@dataclass
class Passage:
    """A retrieved chunk; the SDK's JSON encoder writes a dataclass as an object."""

    id: str
    text: str
    score: float
    metadata: dict[str, str] = field(default_factory=dict)


def keyword_rank(query: str, top_k: int) -> list[Passage]:
    return [
        Passage(f"{r['id']}#0", r["content"], r["score"], {"doc_id": r["id"]})
        for r in scenario.keyword_search(query, top_k)
    ]


def begin(user: str, **more: str) -> None:
    """Record the question's trace id for the test; tag the trace with its session, user and ``more``."""
    trace_ids[current[0]] = format(trace.get_current_span().get_span_context().trace_id, "032x")
    Traceloop.set_association_properties({"session_id": f"session-{current[0]}", "user_id": user, **more})


def ask(prompt: str) -> str:
    completion = client.chat.completions.create(
        model="local-model", messages=[{"role": "user", "content": prompt}]
    )
    return completion.choices[0].message.content or ""


@task(name="retrieve_documents")
def retrieve(question: str, top_k: int = scenario.TOP_K) -> list[Passage]:
    return keyword_rank(question, top_k)


@task(name="fit_budget")
def fit_budget(passages: list[Passage], budget: int) -> list[Passage]:
    return passages[:budget]


@workflow(name="answer_question")
def answer_question(question: str) -> str:
    begin("user-7")
    kept = fit_budget(retrieve(question), budget=scenario.BUDGET)
    return ask(scenario.prompt([p.text for p in kept], question))


@tool(name="search_kb")
def search_kb(query: str) -> list[dict[str, Any]]:
    return [vars(p) for p in keyword_rank(query, scenario.TOP_K)]


@agent(name="support_agent")
def support_agent(question: str) -> str:
    begin("user-8", **{"ragfault.case_id": scenario.CASE_OF[current[0]]})  # the gold case, named
    found = search_kb(query=question)
    return ask(scenario.prompt([d["text"] for d in found], question))


run = {"workflow": answer_question, "agent": support_agent}[mode]
for key, question in scenario.QUESTIONS.items():
    current[0] = key
    run(question)
provider = trace.get_tracer_provider()
getattr(provider, "force_flush", lambda: None)()
scenario.report(trace_ids)
