"""The web UI page and the trace view API it draws from."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import Server
from tests.otel_helpers import http_provider
from tests.tracegen import rag_trace

KB: list[dict[str, Any]] = [
    {"doc_id": "limits", "content": "The API allows 600 requests per minute per project."},
    {"doc_id": "sso", "content": "Single sign-on supports SAML 2.0.", "acl": ["admin"]},
    {"doc_id": "reset", "content": "Reset links expire after 24 hours."},
]
CASE: dict[str, Any] = {
    "case_id": "rate", "query": "How many API requests per minute?", "answerable": True,
    "evidence": [{"doc_id": "limits", "quote": "600 requests per minute"}], "user_scope": ["public"],
}  # fmt: skip


def test_ui_page_and_trace_view(server: Server) -> None:
    page = server.http.get("/ui")
    assert page.status_code == 200 and "<title>ragfault</title>" in page.text
    assert server.http.get("/", follow_redirects=False).headers["location"] == "/ui"

    server.http.post("/api/v1/kb", content="\n".join(json.dumps(d) for d in KB)).raise_for_status()
    server.http.post("/api/v1/gold", content=json.dumps(CASE)).raise_for_status()
    provider = http_provider(server.url)
    docs = [{"id": d["doc_id"], "content": d["content"]} for d in KB]
    trace_id = rag_trace(
        provider.get_tracer("t"), query=CASE["query"], answer="The API allows 1000 requests per minute.",
        candidates=[docs[1], docs[2], docs[0]], reranked=[docs[1], docs[2]], case_id="rate",
    )  # fmt: skip
    provider.force_flush()
    server.wait_for("SELECT count(*) FROM spans", 4)
    server.settle()
    server.wait_rows("SELECT 1 FROM attribution", timeout=20)

    view = server.http.get(f"/api/v1/traces/{trace_id}/view")
    assert view.status_code == 200, view.text
    v = view.json()
    assert v["attribution"]["root_cause"] == "permission_violation"
    assert "dropped_before_context" in v["attribution"]["failing_layers"]
    assert v["evidence"] == [
        {"label": "limits", "quotes": ["600 requests per minute"], "in_candidates": True, "in_context": False}
    ]
    cand = {d["doc_id"]: d for d in v["documents"] if d["stage"] == "candidate"}
    assert cand["limits"]["evidence"] == ["limits"] and cand["reset"]["evidence"] == []
    assert cand["sso"]["forbidden"] and not cand["limits"]["forbidden"]
    assert {d["doc_id"] for d in v["documents"] if d["stage"] == "context"} == {"sso", "reset"}
    answer = [s for s in v["steps"] if s["is_answer"]]
    assert len(answer) == 1 and answer[0]["step_type"] == "llm"
    assert any(r["metric"] == "context_retention" for r in v["verdicts"])
    # every verdict of the trace (the page reads them since the trace's verdicts_since)
    stored = server.sql(f"SELECT count(*) FROM evaluations WHERE trace_id = '{trace_id}'")[0][0]
    assert len(v["verdicts"]) == stored > 0
    assert server.http.get("/api/v1/traces/" + "0" * 32 + "/view").status_code == 404
