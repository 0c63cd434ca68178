"""``ragfault doctor`` counts a field the way the evaluators read it, so it never asks for a fix the
evaluators do not need: ``[doc-id]`` markers in an answer are citations (as ``citation_validity``
reads them), user scope is asked for only where the service or its gold cases use scopes (as
``permission_violations`` applies), and a retrieval that returned nothing is an empty context, not a
missing one (``context_recall`` applies to it). The same traces, sent by the instrumented sample
app through the real exporter, are read by both and compared."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ragfault.demo.app import Chunk, HelpdeskApp, ScriptedLLM
from tests.conftest import Server
from tests.otel_helpers import http_provider

ROOT = Path(__file__).resolve().parents[2]

KB = [
    {"doc_id": "refunds", "content": "Refunds are paid within 30 days of the request."},
    {"doc_id": "plans", "content": "The Team plan costs 10 dollars a seat each month."},
    {"doc_id": "sso", "content": "Single sign-on supports SAML 2.0 and OpenID Connect."},
]

# (service, case, question, documents retrieved (None: no search), answer, explicit citations, scope)
REQUESTS: list[tuple[str, str | None, str, list[str] | None, str, tuple[str, ...], tuple[str, ...]]] = [
    (
        "plain-app",
        "c-refund",
        "How fast are refunds paid?",
        ["refunds", "plans"],
        "Refunds are paid within 30 days [refunds].",
        (),
        (),
    ),
    (
        "plain-app",
        "c-plan",
        "What does the Team plan cost?",
        ["plans"],
        "The Team plan costs 10 dollars a seat [plans, refunds].",
        (),
        (),
    ),
    (
        "plain-app",
        "c-sso",
        "Which protocols does single sign-on support?",
        [],  # nothing found
        "I could not find that in the documents.",
        (),
        (),
    ),
    (
        "plain-app",
        None,
        "Is the plan billed monthly?",
        ["plans"],
        "Yes, the plan is billed [sic] each month.",
        (),
        (),
    ),  # a bracket naming no document
    ("plain-app", None, "Do refunds take long?", ["refunds"], "About 30 days.", ("refunds",), ()),
    ("scoped-app", None, "Refund time?", ["refunds"], "30 days.", (), ("staff",)),
    ("scoped-app", "c-scoped", "What does a seat cost?", ["plans"], "10 dollars.", (), ()),
    ("scoped-app", None, "SSO protocols?", ["sso"], "SAML and OpenID Connect.", (), ()),
]

GOLD = [
    {"case_id": "c-refund", "query": "How fast are refunds paid?",
     "evidence": [{"doc_id": "refunds", "quote": "within 30 days"}]},
    {"case_id": "c-plan", "query": "What does the Team plan cost?",
     "evidence": [{"doc_id": "plans", "quote": "10 dollars a seat"}]},
    {"case_id": "c-sso", "query": "Which protocols does single sign-on support?",
     "evidence": [{"doc_id": "sso", "quote": "SAML 2.0 and OpenID Connect"}]},
    {"case_id": "c-scoped", "query": "What does a seat cost?", "user_scope": ["staff"],
     "evidence": [{"doc_id": "plans", "quote": "10 dollars a seat"}]},
]  # fmt: skip


def ndjson(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def send(server: Server) -> None:
    """Every request of ``REQUESTS`` through the sample app, one tracer provider a service."""
    kb = {d["doc_id"]: d for d in KB}
    for service in sorted({r[0] for r in REQUESTS}):
        provider = http_provider(server.url, service=service)
        mine = [r for r in REQUESTS if r[0] == service]
        app = HelpdeskApp(provider.get_tracer("doctor-agrees"), ScriptedLLM({r[2]: r[4] for r in mine}))
        for _, case, question, docs, _, cited, scope in mine:
            app.answer(
                question,
                [Chunk(d, kb[d]["content"]) for d in docs or []],
                user_scope=scope,
                search=docs is not None,
                citations=cited or None,
                case_id=case,
            )
        provider.force_flush()
        provider.shutdown()


def doctor_cli(server: Server) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "ragfault.cli", "doctor", "--server", server.url, "--format", "json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def field(rep: dict[str, Any], service: str, name: str) -> dict[str, Any]:
    (group,) = [g for g in rep["groups"] if g["service_name"] == service]
    return next(f for f in group["fields"] if f["field"] == name)


def verdict_traces(server: Server, service: str, metric: str, where: str) -> int:
    """Traces of ``service`` with a ``metric`` verdict matching ``where``."""
    return int(
        server.scalar(
            "SELECT count(DISTINCT e.trace_id) FROM evaluations e JOIN traces t USING (trace_id) "
            f"WHERE t.service_name = $service AND e.metric = $metric AND ({where})",
            service=service,
            metric=metric,
        )
    )


def test_doctor_counts_what_the_evaluators_read(server: Server) -> None:
    assert server.http.post("/api/v1/kb", content=ndjson(KB)).status_code == 200
    r = server.http.post("/api/v1/gold", params={"dataset": "agrees.jsonl"}, content=ndjson(GOLD))
    assert r.status_code == 200, r.text
    send(server)
    # the root, the router and the model call, and the retriever and the reranker when it searched
    server.wait_for("SELECT count(*) FROM spans", sum(3 + 2 * (r[3] is not None) for r in REQUESTS))
    server.settle()
    server.wait_for("SELECT count(*) FROM traces WHERE evaluated_at IS NOT NULL", len(REQUESTS), timeout=60)
    rep = doctor_cli(server)
    assert rep == server.http.get("/api/v1/coverage").json()  # the command and the API agree

    for service in ("plain-app", "scoped-app"):
        # citations: the traces the citations evaluator found a citation in (attribute or marker)
        cites = field(rep, service, "citations")
        assert cites["carried"] == verdict_traces(server, service, "citation_validity", "e.status = 'ok'")
        # user scope: carried where the permission evaluator applies
        scope = field(rep, service, "user_scope")
        applies = verdict_traces(
            server, service, "permission_violations", "coalesce(e.reason, '') <> 'no user scope'"
        )
        assert scope["carried"] == applies
        # context: no trace whose context the evaluators could not read, none that doctor calls missing
        unread = verdict_traces(server, service, "context_recall", "e.reason LIKE '%no context stage%'")
        context = field(rep, service, "context")
        assert context["denominator"] - context["carried"] == unread == 0

    # what that means for each service, spelled out
    cites = field(rep, "plain-app", "citations")
    assert (cites["carried"], cites["denominator"]) == (3, 5)  # two by markers, one by the attribute
    assert field(rep, "plain-app", "user_scope")["status"] == "not_applicable"  # no scopes anywhere
    assert "user_scope" not in next(g for g in rep["groups"] if g["service_name"] == "plain-app")["gaps"]
    scope = field(rep, "scoped-app", "user_scope")
    assert (scope["carried"], scope["denominator"], scope["status"]) == (2, 3, "gap")  # one by its gold case
    assert field(rep, "plain-app", "context")["status"] == "ok"
    # the empty retrieval's context was read: context recall applies there, and found nothing
    recall = server.sql(
        "SELECT e.status, e.value FROM evaluations e JOIN traces t USING (trace_id) "
        "WHERE t.case_id = 'c-sso' AND e.metric = 'context_recall'"
    )
    assert recall == [["ok", 0.0]]
