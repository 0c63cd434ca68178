"""Permission (layer ``permission_violation``; docs/architecture.md, Attribution order): documents outside the caller's scope.

The caller's scopes are ``EvalInput.user_scope`` (the trace's ``ragfault.user_scope``, else the gold
case's ``user_scope``); without any, every metric is not applicable ("no user scope"). A document's
acl is its registry row's ``acl`` (a row without an acl: visible to all), else — no registry row —
the span metadata ``acl`` (a list, a JSON list or a
comma-separated string). A document is visible when its acl shares a scope with the caller's; a
document without an acl is visible to all; an empty acl list shares no scope and is visible to no one.

``permission_violations`` per retrieval step and per trace: forbidden candidates / candidates,
counted distinct by registry id, else id, else normalized content. A forbidden candidate is a
violation even when a reranker cut it or the answer never used it. ``passed``: no forbidden
candidate. The trace row's details also list forbidden documents in the final context.
"""

from __future__ import annotations

from typing import Any

from evaluators.builtin._docs import as_list, distinct, doc_name, judged_once, meta, per_registry
from evaluators.eval_input import EvalInput
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.spec import EvaluatorSpec, NoConfig
from evaluators.trace_view import StepDoc

METRIC = "permission_violations"


def acl_of(inp: EvalInput, doc: StepDoc) -> tuple[list[str] | None, str]:
    """The document's acl and where it came from (registry, metadata, none)."""
    kb_doc = inp.matching.kb_doc(doc)
    if kb_doc is not None:  # the registry row decides, also when it has no acl
        acl = kb_doc.acl
        return per_registry(
            inp,
            ("permission.acl", kb_doc.doc_id),
            lambda: ((list(acl) if acl is not None else None), "registry"),
        )
    acl = as_list(meta(doc, "acl"))
    return acl, ("metadata" if acl is not None else "none")


def forbidden(inp: EvalInput, docs: list[StepDoc], scopes: set[str]) -> list[dict[str, Any]]:
    out = []
    for d in docs:
        acl, source = acl_of(inp, d)
        if acl is not None and not scopes.intersection(acl):
            out.append(
                {
                    "doc_id": doc_name(inp, d),
                    "acl": acl,
                    "acl_source": source,
                    "span_id": d.span_id,
                    "rank": d.position + 1,
                }
            )
    return out


def evaluate(inp: EvalInput, config: NoConfig) -> list[Metric]:
    scope = inp.user_scope
    if scope is None:
        return [not_applicable(METRIC, "no user scope")]
    scopes = set(scope)
    trace = inp.trace
    out: list[Metric] = []
    judged: dict[tuple[int, ...], list[dict[str, Any]]] = {}

    def forbidden_of(docs: list[StepDoc]) -> list[dict[str, Any]]:
        return judged_once(judged, docs, lambda d: forbidden(inp, d, scopes))

    for step, docs in trace.candidates_by_step:
        docs = distinct(inp, docs)
        bad = forbidden_of(docs)
        out.append(
            ratio(
                METRIC,
                len(bad),
                len(docs),
                span_id=step.span_id,
                passed=not bad,
                details={"forbidden": bad, "user_scope": sorted(scopes)},
                na_reason="no candidates",
            )
        )
    ctx = distinct(inp, trace.context_docs)
    bad_ctx = forbidden(inp, ctx, scopes)
    if not trace.candidates_by_step:
        out.append(
            not_applicable(METRIC, "no retrieval step", forbidden_in_context=bad_ctx, context_docs=len(ctx))
        )
        return out
    cands = distinct(inp, trace.candidates)
    bad = forbidden_of(cands)
    out.append(
        ratio(
            METRIC,
            len(bad),
            len(cands),
            passed=not bad,
            details={
                "forbidden": bad,
                "forbidden_in_context": bad_ctx,
                "context_docs": len(ctx),
                "user_scope": sorted(scopes),
            },
            na_reason="no candidates",
        )
    )
    return out


SPEC = EvaluatorSpec(
    name="permission",
    version="1",
    fn=evaluate,
    config=NoConfig,
    applies_to=("retrieval", "trace"),
    tier="cheap",
    needs_case=False,
    description="Candidates outside the caller's access scopes (a violation even if never used).",
)
