"""Emit RAG- and agent-shaped traces with the real OpenTelemetry SDK, in a chosen convention.

Used by tests to produce traces that look like what instrumented apps send: a root chain, a
retriever, an optional reranker, an LLM call whose prompt holds the context, optional tools.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from opentelemetry.trace import Status, StatusCode, Tracer


def _doc_attrs(prefix: str, docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, d in enumerate(docs):
        if d.get("id") is not None:
            out[f"{prefix}.{i}.document.id"] = d["id"]
        if d.get("content") is not None:
            out[f"{prefix}.{i}.document.content"] = d["content"]
        if d.get("score") is not None:
            out[f"{prefix}.{i}.document.score"] = float(d["score"])
        if d.get("metadata") is not None:
            out[f"{prefix}.{i}.document.metadata"] = json.dumps(d["metadata"], ensure_ascii=False)
    return out


def prompt_for(query: str, context: Sequence[dict[str, Any]]) -> str:
    blocks = "\n\n".join(d.get("content") or "" for d in context)
    return f"Answer from the context only.\n\nContext:\n{blocks}\n\nQuestion: {query}"


def rag_trace(
    tracer: Tracer,
    *,
    query: str,
    answer: str,
    candidates: Sequence[dict[str, Any]] = (),
    reranked: Sequence[dict[str, Any]] | None = None,
    context: Sequence[dict[str, Any]] | None = None,
    retrieve: bool = True,
    case_id: str | None = None,
    run_id: str | None = None,
    user_scope: Sequence[str] | None = None,
    citations: Sequence[str] | None = None,
    explicit_context: bool = False,
    convention: str = "openinference",
    tools: Sequence[dict[str, Any]] = (),
    error: bool = False,
    attributes: dict[str, Any] | None = None,
) -> str:
    """Emit one trace; returns its trace id (hex). ``context`` defaults to reranked, else candidates;
    ``attributes`` are added to the root span."""
    if context is None:
        context = list(reranked) if reranked is not None else list(candidates)
    if not retrieve:
        context = []
    root_attrs: dict[str, Any] = {}
    if convention == "openinference":
        root_attrs = {"openinference.span.kind": "CHAIN", "input.value": query, "output.value": answer}
    else:
        root_attrs = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": query}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
            ),
        }
    if case_id:
        root_attrs["ragfault.case_id"] = case_id
    if run_id:
        root_attrs["ragfault.run_id"] = run_id
    if user_scope is not None:
        root_attrs["ragfault.user_scope"] = list(user_scope)
    if explicit_context:
        root_attrs.update(_doc_attrs("ragfault.context.documents", context))
    root_attrs.update(attributes or {})
    with tracer.start_as_current_span("rag.request", attributes=root_attrs) as root:
        trace_id = format(root.get_span_context().trace_id, "032x")
        if retrieve:
            if convention == "openinference":
                attrs: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": query}
                attrs.update(_doc_attrs("retrieval.documents", candidates))
                if not candidates:  # a retrieval that returned nothing records its empty result
                    attrs["output.value"] = "[]"
            else:
                attrs = {
                    "gen_ai.operation.name": "retrieval",
                    "gen_ai.retrieval.query.text": query,
                    "gen_ai.retrieval.documents": json.dumps(list(candidates), ensure_ascii=False),
                }
            with tracer.start_as_current_span("retrieve", attributes=attrs):
                pass
            if reranked is not None:
                attrs = {
                    "openinference.span.kind": "RERANKER",
                    "reranker.query": query,
                    "reranker.top_k": len(reranked),
                }
                attrs.update(_doc_attrs("reranker.input_documents", candidates))
                attrs.update(_doc_attrs("reranker.output_documents", reranked))
                with tracer.start_as_current_span("rerank", attributes=attrs):
                    pass
        for tool in tools:
            attrs = _tool_attrs(
                convention, tool["name"], tool.get("arguments", {}), str(tool.get("result", ""))
            )
            with tracer.start_as_current_span(f"tool {tool['name']}", attributes=attrs) as span:
                if tool.get("error"):
                    span.set_status(Status(StatusCode.ERROR, "tool failed"))
        attrs = _llm_attrs(convention, prompt_for(query, context), answer)
        if citations is not None:
            attrs["ragfault.answer.citations"] = list(citations)
        with tracer.start_as_current_span("llm", attributes=attrs):
            pass
        if error:
            root.set_status(Status(StatusCode.ERROR, "request failed"))
    return trace_id


def _llm_attrs(convention: str, prompt: str, output: str) -> dict[str, Any]:
    if convention == "openinference":
        return {
            "openinference.span.kind": "LLM",
            "llm.model_name": "mock-model",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": prompt,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": output,
            "llm.token_count.prompt": len(prompt) // 4,
            "llm.token_count.completion": len(output) // 4,
            "llm.token_count.total": len(prompt) // 4 + len(output) // 4,
        }
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "mock-model",
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": prompt}]}], ensure_ascii=False
        ),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": output}]}], ensure_ascii=False
        ),
        "gen_ai.usage.input_tokens": len(prompt) // 4,
        "gen_ai.usage.output_tokens": len(output) // 4,
    }


def _tool_attrs(convention: str, name: str, arguments: dict[str, Any], result: str) -> dict[str, Any]:
    if convention == "openinference":
        return {
            "openinference.span.kind": "TOOL",
            "tool.name": name,
            "input.value": json.dumps(arguments, ensure_ascii=False),
            "output.value": result,
        }
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.arguments": json.dumps(arguments, ensure_ascii=False),
        "gen_ai.tool.call.result": result,
    }


def agent_trace(
    tracer: Tracer,
    *,
    query: str,
    answer: str,
    candidates: Sequence[dict[str, Any]] = (),
    reranked: Sequence[dict[str, Any]] | None = None,
    context: Sequence[dict[str, Any]] | None = None,
    retrieve: bool = True,
    retrieval: str = "tool",
    case_id: str | None = None,
    run_id: str | None = None,
    user_scope: Sequence[str] | None = None,
    citations: Sequence[str] | None = None,
    convention: str = "openinference",
) -> str:
    """Emit an agent-shaped trace; returns its trace id (hex).

    An agent root; a planning LLM call that decides to search; the search as a tool call whose
    result is the documents as JSON (``retrieval="tool"``), or a tool call wrapping a retriever span
    (``retrieval="retriever"``); an optional reranker; an unrelated tool call (a clock); and the
    answering LLM call, whose prompt holds the context. ``retrieve=False``: the agent answers
    without searching.
    """
    if context is None:
        context = list(reranked) if reranked is not None else list(candidates)
    if not retrieve:
        context = []
    if convention == "openinference":
        root_attrs: dict[str, Any] = {
            "openinference.span.kind": "AGENT",
            "input.value": query,
            "output.value": answer,
        }
    else:
        root_attrs = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "helpdesk",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": query}]}], ensure_ascii=False
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}], ensure_ascii=False
            ),
        }
    if case_id:
        root_attrs["ragfault.case_id"] = case_id
    if run_id:
        root_attrs["ragfault.run_id"] = run_id
    if user_scope is not None:
        root_attrs["ragfault.user_scope"] = list(user_scope)
    with tracer.start_as_current_span("agent.run", attributes=root_attrs) as root:
        trace_id = format(root.get_span_context().trace_id, "032x")
        plan = "call search_kb" if retrieve else "answer directly"
        with tracer.start_as_current_span("llm plan", attributes=_llm_attrs(convention, query, plan)):
            pass
        with tracer.start_as_current_span(
            "tool clock", attributes=_tool_attrs(convention, "clock", {}, "2026-09-01T10:00:00Z")
        ):
            pass
        if retrieve:
            docs_json = json.dumps(list(candidates), ensure_ascii=False)
            result = docs_json if retrieval == "tool" else f"{len(candidates)} documents"
            with tracer.start_as_current_span(
                "tool search_kb", attributes=_tool_attrs(convention, "search_kb", {"query": query}, result)
            ):
                if retrieval == "retriever":
                    if convention == "openinference":
                        attrs: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": query}
                        attrs.update(_doc_attrs("retrieval.documents", candidates))
                    else:
                        attrs = {
                            "gen_ai.operation.name": "retrieval",
                            "gen_ai.retrieval.query.text": query,
                            "gen_ai.retrieval.documents": docs_json,
                        }
                    with tracer.start_as_current_span("retrieve", attributes=attrs):
                        pass
            if reranked is not None:
                attrs = {
                    "openinference.span.kind": "RERANKER",
                    "reranker.query": query,
                    "reranker.top_k": len(reranked),
                }
                attrs.update(_doc_attrs("reranker.input_documents", candidates))
                attrs.update(_doc_attrs("reranker.output_documents", reranked))
                with tracer.start_as_current_span("rerank", attributes=attrs):
                    pass
        attrs = _llm_attrs(convention, prompt_for(query, context), answer)
        if citations is not None:
            attrs["ragfault.answer.citations"] = list(citations)
        with tracer.start_as_current_span("llm answer", attributes=attrs):
            pass
    return trace_id


def search_agent_trace(
    tracer: Tracer,
    *,
    query: str,
    answer: str,
    results: Sequence[dict[str, Any]],
    opened: Sequence[tuple[str, str]],
    case_id: str | None = None,
    convention: str = "openinference",
    open_by: str = "url",
) -> str:
    """Emit a deep-search agent's trace; returns its trace id (hex).

    An agent root; a planning LLM call; a ``web_search`` tool whose result lists ``results`` (each
    ``{id, url, title, snippet}``, no text); for each ``(name, text)`` of ``opened`` a ``fetch``
    tool call whose argument is that result's url (``open_by="url"``) or id (``"id"``) and whose
    result is the document's text; and the answering LLM call, whose prompt holds the opened texts.
    """
    if convention == "openinference":
        root_attrs: dict[str, Any] = {
            "openinference.span.kind": "AGENT",
            "input.value": query,
            "output.value": answer,
        }
    else:
        root_attrs = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": query}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
            ),
        }
    if case_id:
        root_attrs["ragfault.case_id"] = case_id
    with tracer.start_as_current_span("agent.run", attributes=root_attrs) as root:
        trace_id = format(root.get_span_context().trace_id, "032x")
        with tracer.start_as_current_span(
            "llm plan", attributes=_llm_attrs(convention, query, "call web_search")
        ):
            pass
        listed = json.dumps({"results": list(results)}, ensure_ascii=False)
        with tracer.start_as_current_span(
            "tool web_search", attributes=_tool_attrs(convention, "web_search", {"query": query}, listed)
        ):
            pass
        texts = []
        for name, text in opened:
            texts.append({"content": text})
            with tracer.start_as_current_span(
                "tool fetch", attributes=_tool_attrs(convention, "fetch", {open_by: name}, text)
            ):
                pass
        with tracer.start_as_current_span(
            "llm answer", attributes=_llm_attrs(convention, prompt_for(query, texts), answer)
        ):
            pass
    return trace_id
