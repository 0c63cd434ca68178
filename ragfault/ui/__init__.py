"""The web UI: the attribution dashboard, the trace list and the trace view (steps as a waterfall;
candidates against context with evidence highlighted and drops marked; verdicts failing first), run
comparison, the review queue for human labels and the judge's calibration, a SQL console and a
first-run page.

Static files served by this package (``index.html``, ``static/*.css`` and ES modules ``static/*.js``;
no build step, no third-party script, no inline script or style attribute) over the HTTP API, plus
``GET /api/v1/traces/{trace_id}/view`` (a trace joined with its gold case, the registry and its
verdicts, ready to draw) and the routes of ``ragfault.ui.api``.
"""

from __future__ import annotations

import threading
from importlib import resources
from typing import Any

import anyio
from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from collector.api.web import html_page
from collector.components import Component, Context
from collector.receivers.otlp_http import check_bearer
from collector.store.reader import jsonable
from ragfault.ui.api import FactsKeeper
from ragfault.ui.api import router as api_router
from ragfault.ui.live import router as live_router
from ragfault.ui.registry import MAX_HITS, RegistrySearch, registry_search

_TEXT_CAP = 6000
_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}


def _cap(text: str | None) -> str | None:
    if text is None or len(text) <= _TEXT_CAP:
        return text
    return text[:_TEXT_CAP] + f"… [{len(text) - _TEXT_CAP} more characters]"


class _SharedReferences:
    """One copy of the knowledge base for every trace view, re-read only when its table changes; each
    view reads the gold cases of its own trace (``references_for``): reading 100,000 of them made a
    server's first trace view cost half a second."""

    def __init__(self) -> None:
        from evaluators.eval_input import KnowledgeBase

        self.kb = KnowledgeBase()
        self.stamp: tuple[Any, ...] | None = None
        self.lock = threading.Lock()

    def kb_of(self, con: Any) -> Any:
        from collector.store import references
        from evaluators.eval_input import KnowledgeBase
        from evaluators.service.references import kb_documents

        with self.lock:
            stamp = tuple(references.stamp(con)[2:])  # the documents' count and latest load
            if stamp != self.stamp:
                self.kb, self.stamp = KnowledgeBase(kb_documents(con)), stamp
            return self.kb

    def references_for(self, con: Any, view: Any) -> Any:
        """The references a trace view joins: the knowledge base and the gold cases of this trace."""
        from collector.store.sqlfiles import sql
        from evaluators.service.references import References, gold_entries
        from evaluators.text import normalize

        # the store's own statements: no user SQL to guard (run_select's checks cost more than the read)
        if view.case_id:
            rows = con.execute(sql("ui", "trace_gold"), {"c": view.case_id}).fetchall()
        elif view.query_text:
            rows = con.execute(sql("ui", "trace_gold_by_query"), {"q": normalize(view.query_text)}).fetchall()
        else:
            rows = []
        refs = References()
        refs.set_state((None, gold_entries(rows), []))
        refs.kb = self.kb_of(con)
        return refs


def trace_view(ctx: Context, trace_id: str, shared: _SharedReferences | None = None) -> dict[str, Any] | None:
    """Everything the trace page shows, computed with the evaluators' own matching rules."""
    from collector.store import ui as store_ui
    from collector.store.lake import claims as lake_claims
    from evaluators.builtin.freshness import staleness
    from evaluators.builtin.permission import acl_of
    from evaluators.service.runner import load_views

    con = ctx.store.cursor()
    try:
        views, _ = load_views(con, [trace_id])
        if not views:
            return None
        refs = (shared or _SharedReferences()).references_for(con, views[0])
        verdicts = store_ui.trace_verdicts(con, trace_id)
        attribution = store_ui.read(con, "trace_attribution", {"t": trace_id})
        claims = lake_claims.claims_of(con, [trace_id])  # who works on it now (a lake's collectors)
    finally:
        con.close()
    from evaluators.eval_input import EvalInput

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
            "claims": claims,
        }
    )


def router(ctx: Context) -> APIRouter:
    def auth(request: Request) -> None:
        check_bearer(request, ctx.settings.api_token)

    r = APIRouter()
    shared = _SharedReferences()
    search = RegistrySearch()
    ctx.provide(search)
    page = html_page(resources.files("ragfault.ui").joinpath("index.html").read_text(encoding="utf-8"))
    static = {
        entry.name: entry.read_bytes()
        for entry in resources.files("ragfault.ui").joinpath("static").iterdir()
        if entry.name.endswith(tuple(_TYPES))
    }

    @r.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse("/ui")

    @r.get("/ui", include_in_schema=False)
    async def ui() -> HTMLResponse:
        return page()

    @r.get("/ui/static/{name}", include_in_schema=False)
    async def static_file(name: str) -> Response:
        body = static.get(name)
        if body is None:
            raise HTTPException(404, f"no file {name}")
        media = _TYPES[name[name.rindex(".") :]]
        return Response(body, media_type=media, headers={"Cache-Control": "no-cache"})

    @r.get("/api/v1/traces/{trace_id}/view", dependencies=[Depends(auth)], summary="A trace ready to draw")
    async def view(trace_id: str) -> dict[str, Any]:
        out = await anyio.to_thread.run_sync(trace_view, ctx, trace_id.lower(), shared)
        if out is None:
            raise HTTPException(404, f"no trace {trace_id}")
        return out

    @r.get(
        "/api/v1/ui/registry",
        dependencies=[Depends(auth)],
        summary="The knowledge-base documents that best match a text (BM25, English and Chinese)",
    )
    async def registry(q: str, k: int = 8) -> list[dict[str, Any]]:
        if not 1 <= k <= MAX_HITS:
            raise HTTPException(400, f"k must be between 1 and {MAX_HITS}")
        return await anyio.to_thread.run_sync(registry_search, ctx, shared, search, q, k)

    return r


# the pages and their JSON; the service keeps the dashboard's facts (the live gauges are a
# component of their own, ``ragfault.ui.live``)
COMPONENT = Component("ui", service=FactsKeeper, routers=(router, api_router, live_router), order=60)
