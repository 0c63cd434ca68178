"""What the traces carry that attribution needs, and how to fill each gap (``ragfault doctor``,
``GET /api/v1/coverage``).

The numbers come from the bundled query ``queries/coverage.sql`` (per service and detected
convention, per field: traces that carry it / traces it is counted over). This module adds, for
every field, what needs it and the concrete fix for the convention the traces were read with: the
environment variable, the instrumentor option, the attribute to set, the step that is not traced.

The report (the JSON of ``GET /api/v1/coverage``)::

    {"params": {"service": null, "since": null},
     "groups": [{"service_name": "...", "convention": "openinference", "traces": 20,
                 "gaps": ["case_id", ...],
                 "fields": [{"field": "case_id", "position": 2, "carried": 17, "denominator": 20,
                             "share": 0.85, "status": "gap", "needed_by": "...", "fix": "..."}]}]}

``status`` is ``ok`` (every trace of the denominator carries it), ``gap`` (some do not; ``fix``
says how to fill it) or ``not_applicable`` (the denominator is 0: e.g. no rerank step, so reranker
input is not asked for; ``share`` is then null, never 0 or 1).

A field is counted the way the evaluators read it, so that ``doctor`` never asks for what they do
not need: citations include ``[doc-id]`` markers in the answer, user scope is asked for only where
the service or its gold cases use scopes (or the registry has access lists), and a retrieval that
returned nothing leaves the context empty rather than unknown.

Spans no reader could read (convention ``unknown``) add ``"mappings"``: their keys, what the values
look like, and the ``[[conventions.mapping]]`` entries that would read them (``collector.api.mapping_doctor``).
Fields of recent steps that the structural layer or a mapping read add ``"inferred"``: per span name
and field, the rule and key that read it (``collector.api.inferred_fields``, from ``steps.provenance``).
Where there are gold cases and recent traces joined none, ``"gold_joins"`` says how many per service
recorded no question and how many one no case asks, naming traces whose question holds a case's
inside a longer text (``collector.api.gold_joins``).

When no trace matches, the report also lists the services that have settled traces
(``"services": [{"service_name": ..., "traces": n}]``), so a mistyped ``--service`` is told apart
from an empty store.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from collector.api import gold_joins
from collector.api.inferred_fields import inferred
from collector.api.inferred_fields import render as render_inferred
from collector.api.mapping_doctor import sample, suggest
from collector.api.routes import protected_router
from collector.components import Component, Context
from collector.store import doctor
from collector.store.reader import run_select
from ragfault_core.errors import PermanentError

# without --since, the report reads the day of traffic up to the latest settled trace: a month's store
# (1,000,000 traces) took the coverage query past the SQL API's 30 s limit, and what the traces carry
# now is what an instrumentation change is judged on
DEFAULT_WINDOW = timedelta(days=1)

# what each field is needed for
NEEDED_BY: dict[str, str] = {
    "query": "joining a trace to its gold case by query text; words of the question left out of claim support",
    "case_id": "joining a trace to its gold case exactly (else by normalized query text only)",
    "user_scope": "permission_violation (else the gold case's user_scope; neither: not applicable)",
    "retrieval": "no_retrieval, candidate_miss, recall@k, permission and freshness of candidates",
    "candidate_ids": "matching candidates to evidence by id, registry look-ups, citation validity",
    "candidate_text": "matching evidence quotes, deriving the context stage, identifying documents by content",
    "rerank_input": "telling a rerank cut from a prompt-budget cut (dropped_before_context details)",
    "rerank_output": "telling a rerank cut from a prompt-budget cut (dropped_before_context details)",
    "llm_step": "the answer, the context stage, token counts",
    "answer_llm_input": "the context stage (what the model saw): dropped_before_context, stale_context, over_refusal",
    "context": "context_recall, dropped_before_context, stale_context, answer support against what the model saw",
    "answer": "answered_unanswerable, over_refusal, unsupported_claims, incomplete_answer, invalid_citation",
    "citations": "invalid_citation (citation validity is not applicable without citations)",
    "model": "per-model slices; the judge's cost estimate",
    "tokens": "token counters and outliers (retrieval_decision's total_tokens)",
}

_CASE_ID = "set `ragfault.case_id` on the root span (or any span of the trace), or as OTel baggage; "
_CONTENT_OI = (
    "the instrumentor hides content when `OPENINFERENCE_HIDE_INPUTS`, `OPENINFERENCE_HIDE_INPUT_MESSAGES` "
    "or `OPENINFERENCE_HIDE_INPUT_TEXT` is true (or `TraceConfig(hide_inputs=True)` was passed): unset them"
)
_CONTENT_GENAI = (
    "set `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` in the app's environment "
    "(and `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` for `gen_ai.input.messages` / "
    "`gen_ai.output.messages` as span attributes)"
)
_CONTENT_TRACELOOP = "set `TRACELOOP_TRACE_CONTENT=true` (or `Traceloop.init(trace_content=True)`): prompts and completions are left out otherwise"

# fixes per field: by convention ("*": any other convention)
FIXES: dict[str, dict[str, str]] = {
    "query": {
        "openinference": "set `input.value` on the root span to the user's question (instrumented frameworks do this for their entry call)",
        "genai": "put the user's message in `gen_ai.input.messages` of the root `invoke_agent` span, or set `gen_ai.retrieval.query.text` on the retrieval span",
        "traceloop": "call the `@workflow` with the question as an argument (it becomes `traceloop.entity.input`); "
        + _CONTENT_TRACELOOP,
        "*": "set `input.value` on the root span to the user's question",
    },
    "case_id": {
        "openinference": _CASE_ID
        + "with OpenInference: `using_attributes(metadata={'ragfault.case_id': case_id})`",
        "traceloop": _CASE_ID
        + "with OpenLLMetry: `Traceloop.set_association_properties({'ragfault.case_id': case_id})`, or LangChain `config={'metadata': {'ragfault.case_id': case_id}}`",
        "*": _CASE_ID + "e.g. `span.set_attribute('ragfault.case_id', case_id)`",
    },
    "user_scope": {
        "*": "this service uses access scopes (some of its traces or gold cases carry them, or the registry has access lists), so every request needs one: set `ragfault.user_scope` (a string array of the caller's access scopes) on the root span, or give the gold case a `user_scope`",
    },
    "retrieval": {
        "openinference": "if the app retrieved for these traces, the retrieval step is not traced: instrument the framework (`LlamaIndexInstrumentor().instrument()`, `LangChainInstrumentor().instrument()`), or wrap a hand-made retriever in a span with `openinference.span.kind=RETRIEVER` and `retrieval.documents.{i}.document.{id,content,score}`",
        "genai": "if the app retrieved for these traces, the retrieval step is not traced: add a span with `gen_ai.operation.name=retrieval`, `gen_ai.retrieval.query.text` and `gen_ai.retrieval.documents` (a JSON list of `{id, score, content}`)",
        "traceloop": "if the app retrieved for these traces, the retrieval step is not traced: decorate the retriever with `@task` (returning its documents), or install the vector store's OpenLLMetry instrumentation (e.g. `opentelemetry-instrumentation-chromadb`)",
        "*": "if the app retrieved for these traces, the retrieval step is not traced: add a RETRIEVER span (`openinference.span.kind=RETRIEVER`, `retrieval.documents.{i}.document.*`) or a GenAI `retrieval` span",
    },
    "candidate_ids": {
        "openinference": "set `retrieval.documents.{i}.document.id`, or a `doc_id` / `source` / `file_name` key in `document.metadata` (LlamaIndex: `Document(doc_id=..., metadata={'file_name': ...})`)",
        "traceloop": "LangChain documents carry no id: put it in `Document(metadata={'source': doc_id})` (or `doc_id`); documents a `@task` returns need an `id` (or `metadata.doc_id`)",
        "genai": "give every item of `gen_ai.retrieval.documents` an `id`",
        "*": "give every retrieved document an id (`document.id`, or `doc_id` / `source` in its metadata)",
    },
    "candidate_text": {
        "openinference": "`OPENINFERENCE_HIDE_RETRIEVAL_DOCUMENTS` or `OPENINFERENCE_HIDE_OUTPUTS` hides document content: unset them; or load the documents into the registry (`ragfault load kb`) so their ids resolve to text",
        "genai": "the GenAI spec's documents are `{id, score}`: add `content` to each item of `gen_ai.retrieval.documents`, or load the documents into the registry (`ragfault load kb`) so their ids resolve to text",
        "traceloop": _CONTENT_TRACELOOP + "; or load the documents into the registry (`ragfault load kb`)",
        "*": "send the documents' text (`document.content`), or load them into the registry (`ragfault load kb`) so their ids resolve to text",
    },
    "rerank_input": {
        "openinference": "set `reranker.input_documents.{i}.document.*` on the RERANKER span (LlamaIndex: a custom postprocessor must dispatch `ReRankStartEvent(nodes=...)`)",
        "traceloop": "decorate the reranker (or the prompt-budget step) with `@task`, passing it the documents as an argument and returning the ones it keeps",
        "*": "trace the reranker as an OpenInference RERANKER span with `reranker.input_documents.{i}.document.*` (GenAI has no rerank convention)",
    },
    "rerank_output": {
        "openinference": "set `reranker.output_documents.{i}.document.*` on the RERANKER span (LlamaIndex: dispatch `ReRankEndEvent(nodes=kept)`)",
        "traceloop": "return the documents the reranker keeps from its `@task` (given the documents as an argument)",
        "*": "trace the reranker as an OpenInference RERANKER span with `reranker.output_documents.{i}.document.*`",
    },
    "llm_step": {
        "openinference": "no LLM call traced: install and instrument the client (`openinference-instrumentation-openai`: `OpenAIInstrumentor().instrument()`)",
        "genai": "no LLM call traced: install `opentelemetry-instrumentation-openai-v2` and call `OpenAIInstrumentor().instrument()`",
        "traceloop": "no LLM call traced: install the client's OpenLLMetry instrumentation (`opentelemetry-instrumentation-openai`)",
        "*": "no LLM call traced: instrument the model client",
    },
    "answer_llm_input": {
        "openinference": _CONTENT_OI,
        "genai": _CONTENT_GENAI,
        "traceloop": _CONTENT_TRACELOOP,
        "*": "record the prompt of the answering model call (`llm.input_messages.*` or `gen_ai.input.messages`)",
    },
    "context": {
        "*": "the context stage is derived from the answering LLM's input and the candidates' text (fill those gaps first), or set `ragfault.context.documents.{i}.document.{id,content}` where the app builds the prompt",
    },
    "answer": {
        "openinference": "set `output.value` on the root span, or unset `OPENINFERENCE_HIDE_OUTPUTS` / `OPENINFERENCE_HIDE_OUTPUT_MESSAGES` so the model call's output is kept",
        "genai": _CONTENT_GENAI,
        "traceloop": _CONTENT_TRACELOOP,
        "*": "set `output.value` on the root span to the final answer",
    },
    "citations": {
        "*": "set `ragfault.answer.citations` (a string array of cited document ids) on the answering LLM span, or write `[doc-id]` markers in the answer",
    },
    "model": {
        "openinference": "set `llm.model_name` on the LLM span",
        "*": "set `gen_ai.request.model` (and `gen_ai.response.model`) on the LLM span",
    },
    "tokens": {
        "openinference": "set `llm.token_count.{prompt,completion,total}`; with streaming, ask for usage (`stream_options={'include_usage': True}`)",
        "*": "set `gen_ai.usage.input_tokens` / `gen_ai.usage.output_tokens`; with streaming, ask for usage (`stream_options={'include_usage': True}`)",
    },
}


class CoverageField(BaseModel):
    field: str = Field(
        ..., description="What attribution needs, e.g. `case_id`, `candidate_text`, `answer_llm_input`."
    )
    position: int = Field(..., description="The field's place in the fixed order of `queries/coverage.sql`.")
    carried: int = Field(..., description="Traces of the denominator that carry it.")
    denominator: int = Field(
        ...,
        description="Traces it is counted over (all, or those with candidates / a rerank step / an LLM step).",
    )
    share: float | None = Field(..., description="carried / denominator; null when the denominator is 0.")
    status: Literal["ok", "gap", "not_applicable"]
    needed_by: str | None = Field(None, description="The layers and metrics that need it.")
    fix: str | None = Field(None, description="How to fill the gap for this convention (set only for a gap).")


class CoverageGroup(BaseModel):
    service_name: str
    convention: str = Field(
        ..., description="The conventions the traces' steps were read with, joined by '+'."
    )
    traces: int = Field(..., description="Settled traces of this service and convention.")
    gaps: list[str] = Field(..., description="The fields with status `gap`, in order.")
    fields: list[CoverageField]


class ServiceTraces(BaseModel):
    service_name: str
    traces: int = Field(..., description="Settled traces of this service.")


class CoverageReport(BaseModel):
    params: dict[str, Any]
    groups: list[CoverageGroup]
    services: list[ServiceTraces] | None = Field(
        None, description="Only when no trace matched: the services that have settled traces."
    )


def fix_for(field: str, convention: str) -> str | None:
    """The fix of a field's gap for traces read with ``convention`` (parts joined by '+')."""
    fixes = FIXES.get(field)
    if not fixes:
        return None
    for part in convention.split("+"):
        if part in fixes:
            return fixes[part]
    return fixes.get("*")


def report(rows: list[dict[str, Any]], params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The coverage report from the rows of the ``coverage`` query (see the module doc)."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        key = (r["service_name"], r["convention"])
        g = groups.get(key)
        if g is None:
            g = groups[key] = {
                "service_name": r["service_name"],
                "convention": r["convention"],
                "traces": int(r["traces"]),
                "gaps": [],
                "fields": [],
            }
        carried, denominator = int(r["carried"]), int(r["denominator"])
        if denominator == 0:
            status = "not_applicable"
        elif carried < denominator:
            status = "gap"
            g["gaps"].append(r["field"])
        else:
            status = "ok"
        g["fields"].append(
            {
                "field": r["field"],
                "position": int(r["position"]),
                "carried": carried,
                "denominator": denominator,
                "share": None if denominator == 0 else carried / denominator,
                "status": status,
                "needed_by": NEEDED_BY.get(r["field"]),
                "fix": fix_for(r["field"], r["convention"]) if status == "gap" else None,
            }
        )
    return {"params": dict(params or {}), "groups": list(groups.values())}


def coverage(cursor: Any, service: str | None = None, since: Any = None) -> dict[str, Any]:
    """Run the bundled ``coverage`` query on a cursor and build the report."""
    from queries import load_query

    if isinstance(since, str):
        try:
            since = datetime.fromisoformat(since.replace("Z", "+00:00"))
        except ValueError as exc:
            raise PermanentError(f"since: not an ISO time: {since!r}") from exc
    if isinstance(since, datetime) and since.tzinfo is not None:
        since = since.astimezone(UTC).replace(tzinfo=None)
    window_default = since is None
    if window_default:  # the last day of traffic: what the traces carry now, in time on a month's store
        latest = doctor.latest_start(cursor, service)
        if latest is not None:
            since = datetime.fromisoformat(str(latest)) - DEFAULT_WINDOW
    query = load_query("coverage")
    params = query.bind({"service": service, "since": since})
    result = run_select(cursor, query.sql, params, row_cap=100_000).as_dict()
    rows = [dict(zip(result["columns"], row, strict=True)) for row in result["rows"]]
    rep = report(rows, {"service": service, "since": since.isoformat() if since is not None else None})
    if window_default and since is not None:  # (said only when the window was chosen for the caller)
        rep["params"]["since_default"] = True
    if not rep["groups"]:
        rep["services"] = services(cursor)
    unread = suggest(sample(cursor, service, since))
    if unread["spans"]:  # spans no reader could read: the mapping that would (collector.api.mapping_doctor)
        rep["mappings"] = unread
    found = inferred(cursor, service, since)
    if found:  # fields the structural layer or a mapping read, by rule and key (steps.provenance)
        rep["inferred"] = found
    joins = gold_joins.report(cursor, service, since)
    if joins:  # traces that joined no gold case, and why (collector.api.gold_joins)
        rep["gold_joins"] = joins
    return rep


def services(cursor: Any) -> list[dict[str, Any]]:
    """The services that have settled traces, the most first (at most 50)."""
    return [{"service_name": r[0], "traces": int(r[1])} for r in doctor.services(cursor)]


def render(rep: dict[str, Any]) -> str:
    """The report as text (``ragfault doctor``)."""
    if not rep["groups"]:
        return _nothing_matched(rep) + "\n"
    out: list[str] = []
    params = rep.get("params") or {}
    if params.get("since_default"):
        out += [
            f"(the last day of traffic: traces since {params['since']}; --since to choose another start)",
            "",
        ]
    for g in rep["groups"]:
        out.append(f"== {g['service_name']} · {g['convention']} · {g['traces']} traces ==")
        for f in g["fields"]:
            share = "n/a" if f["status"] == "not_applicable" else f"{f['share']:.0%}"
            mark = {"ok": "ok ", "gap": "GAP", "not_applicable": " - "}[f["status"]]
            out.append(f"  {mark} {f['field']:<17} {f['carried']:>6} / {f['denominator']:<6} {share:>5}")
        if g["gaps"]:
            out.append("  how to fill the gaps:")
            for f in g["fields"]:
                if f["status"] == "gap":
                    out.append(f"  - {f['field']}: {f['fix']}")
        out.append("")
    if rep.get("mappings"):
        out.extend(_render_mappings(rep["mappings"]))
    out.extend(render_inferred(rep.get("inferred") or []))
    out.extend(gold_joins.render(rep.get("gold_joins")))
    return "\n".join(out).rstrip() + "\n"


def _render_mappings(m: dict[str, Any]) -> list[str]:
    """The spans no reader could read, what their keys look like, and the mapping that reads them."""
    out = ["== spans no reader could read =="]
    for s in m["spans"]:
        scope = f" (scope {s['scope']})" if s["scope"] else ""
        out.append(f"  {s['span_name']}{scope}: {s['spans']} spans")
        out.extend(f"    {k['key']}: {k['looks_like']}" for k in s["keys"])
    if m["toml"]:
        out += ["", "  add to the config file (then restart) to read them:", ""]
        out.extend(f"    {line}" if line else "" for line in m["toml"].splitlines())
    else:
        out.append(
            "  no mapping can be suggested: no key holds documents, a prompt, or a question and answer"
        )
    out.append("")
    return out


def _nothing_matched(rep: dict[str, Any]) -> str:
    """Why the report is empty: a service or time that no settled trace has (naming the services
    that have some), or no settled trace at all."""
    params = rep.get("params") or {}
    found = rep.get("services") or []
    if not found:
        return "No settled traces yet: send some (OTLP to /v1/traces) and run `ragfault doctor` again."
    listed = ", ".join(f"{s['service_name']} ({s['traces']})" for s in found)
    if params.get("service"):
        since = f" since {params['since']}" if params.get("since") else ""
        return (
            f"No settled traces of service {params['service']!r}{since}. Services with settled traces: "
            f"{listed}; pass --service one of those."
        )
    return f"No settled traces since {params.get('since')}. Services with settled traces: {listed}."


def router(ctx: Context) -> APIRouter:
    r = protected_router(ctx)

    @r.get(
        "/coverage",
        summary="What the traces carry that attribution needs, per service and convention, with fixes",
    )
    def get_coverage(
        service: str | None = Query(None, description="Only this service."),
        since: str | None = Query(None, description="Only traces that started at or after this time (ISO)."),
    ) -> dict[str, Any]:
        cursor = ctx.store.cursor()
        try:
            return coverage(cursor, service, since)
        finally:
            cursor.close()

    return r


COMPONENT = Component("coverage", routers=(router,), order=20)
