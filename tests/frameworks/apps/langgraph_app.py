"""LangGraph, the model ``langchain-openai``'s ``ChatOpenAI`` on the local chat server, traced by one of
LangChain's instrumentations: ``openllmetry`` (``opentelemetry-instrumentation-langchain``, as
``Traceloop.init`` sets it up, without the SDK), ``openinference``
(``openinference-instrumentation-langchain``) or ``openlit`` (``openlit.init``, which instruments
LangGraph, LangChain and the openai SDK). Usage: ``langgraph_app.py INSTRUMENTATION MODE``.

- ``graph``: three nodes pass a state along: ``retrieve`` puts the ``TOP_K`` best documents
  (LangChain ``Document`` objects, the source id in their metadata) in it, ``fit_budget`` keeps the
  first ``BUDGET``, ``generate`` asks the model with them in the prompt;
- ``agent``: LangGraph's prebuilt ReAct agent with a search tool whose response is content and
  artifact: the model is given the first ``BUDGET`` documents as text (the content), the ``TOP_K``
  it retrieved are the artifact (the application's, not sent to the model)."""

from __future__ import annotations

import os
import sys
from typing import TypedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402

instrumentation, mode = sys.argv[1], sys.argv[2]
provider = scenario.http_tracer_provider(f"langgraph-{instrumentation}-{mode}")
ids = scenario.trace_ids()
provider.add_span_processor(ids)
if instrumentation == "openllmetry":
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    LangchainInstrumentor().instrument(tracer_provider=provider)
elif instrumentation == "openinference":
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=provider)
else:  # OpenLIT, which finds the global tracer provider and instruments what is installed
    import openlit
    from opentelemetry import trace

    trace.set_tracer_provider(provider)
    openlit.init(application_name="langgraph", disable_metrics=True, disable_batch=True)
_, chat_url = scenario.settings()
llm = ChatOpenAI(model="local-model", base_url=chat_url, api_key="local")  # type: ignore[arg-type]


class State(TypedDict, total=False):
    question: str
    documents: list[Document]
    answer: str


def keyword_rank(query: str) -> list[Document]:
    return [
        Document(page_content=r["content"], metadata={"doc_id": r["id"], "score": r["score"]})
        for r in scenario.keyword_search(query)
    ]


def retrieve(state: State) -> State:
    return {"documents": keyword_rank(state["question"])}


def fit_budget(state: State) -> State:
    return {"documents": state["documents"][: scenario.BUDGET]}


def generate(state: State) -> State:
    prompt = scenario.prompt([d.page_content for d in state["documents"]], state["question"])
    return {"answer": str(llm.invoke(prompt).content)}


graph = StateGraph(State)
graph.add_node("retrieve", retrieve)
graph.add_node("fit_budget", fit_budget)
graph.add_node("generate", generate)
graph.add_edge(START, "retrieve")
graph.add_edge("retrieve", "fit_budget")
graph.add_edge("fit_budget", "generate")
graph.add_edge("generate", END)
app = graph.compile()


@tool(response_format="content_and_artifact")
def search_kb(query: str) -> tuple[str, list[Document]]:
    """Search the knowledge base."""
    found = keyword_rank(query)
    return "\n".join(f"- {d.page_content}" for d in found[: scenario.BUDGET]), found


if mode == "agent":  # made before the questions: OpenLLMetry traces the making too, as a trace of its own
    from langgraph.prebuilt import create_react_agent

    app = create_react_agent(llm, [search_kb], prompt="Answer from the search results only.")


def ask(question: str) -> None:
    if mode == "graph":
        app.invoke({"question": question})
    else:
        app.invoke({"messages": [("user", question)]})


tracer = provider.get_tracer("eval-harness")
for key, question in scenario.QUESTIONS.items():
    ids.current = key
    if instrumentation == "openlit":
        # OpenLIT records no graph node's input or output (the question is only inside the prompt):
        # the harness names the gold case on a span around the run
        with tracer.start_as_current_span("case", attributes={"ragfault.case_id": scenario.CASE_OF[key]}):
            ask(question)
    else:
        ask(question)
    ids.current = None
provider.force_flush()
provider.shutdown()
scenario.report(ids.ids)
