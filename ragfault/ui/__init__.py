"""The web UI: a trace view (steps as a waterfall; candidates against context with evidence
highlighted and drops marked; per-step verdicts), the attribution per run, and a SQL console.

One static page (``index.html``, no build step, no third-party script) over the HTTP API, plus
``GET /api/v1/traces/{trace_id}/view``: a trace joined with its gold case, the registry and its
verdicts, ready to draw.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import anyio
from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from collector.receivers.otlp_http import check_bearer
from collector.store.reader import jsonable, run_select

_TEXT_CAP = 6000


def _cap(text: str | None) -> str | None:
    if text is None or len(text) <= _TEXT_CAP:
        return text
    return text[:_TEXT_CAP] + f"… [{len(text) - _TEXT_CAP} more characters]"


def trace_view(runtime: Any, trace_id: str) -> dict[str, Any] | None:
    """Everything the trace page shows, computed with the evaluators' own matching rules."""
    from evaluators.builtin.freshness import staleness
    from evaluators.builtin.permission import acl_of
    from evaluators.runner import References, load_views, verdicts_since_sql

    con = runtime.store.cursor()
    try:
        views, _ = load_views(con, [trace_id])
        if not views:
            return None
        refs = References()
        refs.refresh(con)
        # its verdicts were all written since verdicts_since (when known): the scan skips older rows
        since = con.execute(
            "SELECT verdicts_since FROM traces WHERE trace_id = $t", {"t": trace_id}
        ).fetchall()
        bound, params = verdicts_since_sql(since[0][0] if since else None)
        verdicts = run_select(
            con,
            "SELECT span_id, evaluator, metric, value, numerator, denominator, status, passed, label, reason, "
            f"details, tier, generation FROM evaluations WHERE trace_id = $t{bound} ORDER BY evaluator, metric, span_id",
            {"t": trace_id, **params},
            row_cap=5000,
        )
        attribution = run_select(
            con,
            "SELECT root_cause, failing_layers, evidence FROM attribution WHERE trace_id = $t",
            {"t": trace_id},
        )
    finally:
        con.close()
    from evaluators.base import EvalInput

    view = views[0]
    case = refs.case_for(view)
    as_of = case.as_of if case is not None and case.as_of else view.start_time
    inp = EvalInput(view, case, refs.kb, as_of)
    scopes = set(inp.user_scope or ())
    t0 = min((s.start_time for s in view.steps if s.start_time), default=None)

    def offset(t: Any) -> float | None:
        return (t - t0).total_seconds() * 1000 if t is not None and t0 is not None else None

    steps = []
    for s in sorted(view.steps, key=lambda s: (s.start_time is None, s.start_time)):
        steps.append(
            {
                "span_id": s.span_id,
                "parent_span_id": s.parent_span_id,
                "step_type": s.step_type,
                "name": s.name,
                "start_ms": offset(s.start_time),
                "duration_ms": s.duration_ms,
                "status_code": s.status_code,
                "model": s.model,
                "total_tokens": s.total_tokens,
                "query_text": _cap(s.query_text),
                "input_text": _cap(s.input_text),
                "output_text": _cap(s.output_text),
                "tool_name": s.tool_name,
                "is_answer": s.span_id
                == (
                    view.answer_span_id or (inp.trace.answer_step.span_id if inp.trace.answer_step else None)
                ),
            }  # fmt: skip
        )
    units = inp.matching.units
    docs = []
    for d in view.documents:
        stale = staleness(inp, d)
        acl, _ = acl_of(inp, d)
        docs.append(
            {
                "span_id": d.span_id,
                "stage": d.stage,
                "position": d.position,
                "doc_id": d.doc_id,
                "chunk_id": d.chunk_id,
                "content": _cap(d.content),
                "score": d.score,
                "source": d.source,
                "kb_doc_id": inp.matching.kb_id(d),
                "evidence": [units[i].label for i in sorted(inp.matching.units_of_doc(d))],
                "stale": stale,
                "forbidden": bool(scopes) and acl is not None and not (set(acl) & scopes),
            }  # fmt: skip
        )
    in_cand, in_ctx = inp.matching.in_candidates, inp.matching.in_context
    return jsonable(
        {
            "trace": {
                "trace_id": view.trace_id,
                "service_name": view.service_name,
                "start_time": view.start_time,
                "case_id": case.case_id if case else view.case_id,
                "run_id": view.run_id,
                "user_scope": list(inp.user_scope or ()),
                "query_text": view.query_text,
                "answer_text": view.answer_text,
                "answer_span_id": view.answer_span_id,
            },  # fmt: skip
            "case": case.model_dump(mode="json") if case else None,
            "evidence": [
                {
                    "label": u.label,
                    "quotes": [e.quote for e in u.items if e.quote],
                    "in_candidates": u.index in in_cand,
                    "in_context": u.index in in_ctx,
                }
                for u in units
            ],  # fmt: skip
            "attribution": dict(zip(attribution.columns, attribution.rows[0], strict=True))
            if attribution.rows
            else None,
            "steps": steps,
            "documents": docs,
            "verdicts": [dict(zip(verdicts.columns, r, strict=True)) for r in verdicts.rows],
        }
    )


def router(runtime: Any) -> APIRouter:
    def auth(request: Request) -> None:
        check_bearer(request, runtime.settings.api_token)

    r = APIRouter()
    page = resources.files("ragfault.ui").joinpath("index.html").read_text(encoding="utf-8")

    @r.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse("/ui")

    @r.get("/ui", include_in_schema=False)
    async def ui() -> HTMLResponse:
        return HTMLResponse(page)

    @r.get("/api/v1/traces/{trace_id}/view", dependencies=[Depends(auth)], summary="A trace ready to draw")
    async def view(trace_id: str) -> dict[str, Any]:
        out = await anyio.to_thread.run_sync(trace_view, runtime, trace_id.lower())
        if out is None:
            raise HTTPException(404, f"no trace {trace_id}")
        return out

    return r


def register(routers: list[Any], extensions: list[Any]) -> None:
    routers.append(router)
