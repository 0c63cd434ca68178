"""Feedback through the API and through annotation spans; negative feedback re-triggers evaluation."""

from __future__ import annotations

from opentelemetry import trace as otel_trace
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, TraceFlags

from tests.live.conftest import DOCS
from tests.tracegen import rag_trace

NO_SAMPLE = "[sampling]\nproduction_rate = 0.0\n"


def test_feedback_api_stores_and_late_negative_feedback_retriggers(live) -> None:
    srv = live(NO_SAMPLE)
    t = rag_trace(srv.tracer(), query="q", answer="a", candidates=DOCS)
    srv.drain()
    assert srv.status(t)[0] == "sampled_out"
    r = srv.http.post(
        "/api/v1/feedback", json={"trace_id": t.upper(), "kind": "score", "value": 0.9, "user": "u1"}
    )
    assert r.status_code == 200 and r.json()["negative"] is False and r.json()["reevaluating"] is False
    r = srv.http.post(
        "/api/v1/feedback", json={"trace_id": t, "kind": "thumbs", "value": "down", "comment": "wrong"}
    )
    body = r.json()
    assert body["negative"] is True and body["trace_known"] is True and body["reevaluating"] is True
    srv.drain()
    decision, reason = srv.status(t)
    assert (decision, reason) == ("filtered", "no judge configured (trigger:negative_feedback)")
    assert srv.scalar("SELECT eval_generation FROM traces WHERE trace_id = $t", t=t) == 2
    assert srv.sql(
        "SELECT feedback_count, negative_count, thumbs_down, comments FROM trace_feedback WHERE trace_id = $t",
        t=t,
    ) == [[2, 1, 1, ["wrong"]]]
    got = srv.http.get("/api/v1/feedback", params={"trace_id": t}).json()
    assert len(got["rows"]) == 2
    assert (
        srv.http.post(
            "/api/v1/feedback", json={"trace_id": "xyz", "kind": "thumbs", "value": "up"}
        ).status_code
        == 422
    )
    assert (
        srv.http.post("/api/v1/feedback", json={"trace_id": t, "kind": "score", "value": "high"}).status_code
        == 400
    )


def test_feedback_from_annotation_attributes_evaluator_spans_and_genai_events(live) -> None:
    srv = live(NO_SAMPLE)
    tr = srv.tracer()
    with tr.start_as_current_span("rag.request", attributes={"openinference.span.kind": "CHAIN"}) as root:
        t = format(root.get_span_context().trace_id, "032x")
        with tr.start_as_current_span("llm", attributes={
            "openinference.span.kind": "LLM",
            "annotations.0.annotation.name": "user_feedback",
            "annotations.0.annotation.label": "thumbs_down",
            "annotations.0.annotation.annotator_kind": "HUMAN",
            "trace.evaluations.0.evaluation.name": "correctness",
            "trace.evaluations.0.evaluation.score": 0.9,
            "trace.evaluations.0.evaluation.annotator_kind": "LLM",
        }) as llm:  # fmt: skip
            llm_id = format(llm.get_span_context().span_id, "016x")
            llm.add_event(
                "gen_ai.evaluation.result",
                {"gen_ai.evaluation.name": "relevance", "gen_ai.evaluation.score.value": 0.2},
            )
        with tr.start_as_current_span("judge", attributes={
            "openinference.span.kind": "EVALUATOR",
            "evaluations.0.evaluation.name": "hallucination",
            "evaluations.0.evaluation.label": "hallucinated",
            "evaluations.0.evaluation.annotator_kind": "LLM",
        }):  # fmt: skip
            pass
    srv.drain()
    root_id = srv.scalar("SELECT root_span_id FROM traces WHERE trace_id = $t", t=t)
    rows = srv.sql(
        "SELECT span_id, kind, name, value, label, annotator_kind, source, negative FROM feedback "
        "WHERE trace_id = $t ORDER BY name", t=t,
    )  # fmt: skip
    assert rows == [
        [None, "score", "correctness", 0.9, None, "LLM", "span_annotation", False],
        [root_id, "label", "hallucination", None, "hallucinated", "LLM", "evaluator_span", True],
        [llm_id, "score", "relevance", 0.2, None, None, "genai_event", True],
        [llm_id, "thumbs", "user_feedback", 0.0, "thumbs_down", "HUMAN", "span_annotation", True],
    ]
    # only the HUMAN thumbs-down triggers (LLM and unattributed results are not user feedback)
    assert "trigger:negative_feedback" in srv.status(t)[1]

    # an EVALUATOR span in another trace, linked to the LLM span, arriving after evaluation
    plain = rag_trace(tr, query="q", answer="a", candidates=DOCS)
    srv.drain()
    assert srv.status(plain)[0] == "sampled_out"
    plain_llm = srv.scalar("SELECT span_id FROM steps WHERE trace_id = $t AND step_type = 'llm'", t=plain)
    target = SpanContext(int(plain, 16), int(plain_llm, 16), is_remote=True, trace_flags=TraceFlags(1))
    with tr.start_as_current_span("human-review", context=otel_trace.set_span_in_context(NonRecordingSpan(
            SpanContext(0, 0, False))), links=[Link(target)], attributes={
        "openinference.span.kind": "EVALUATOR",
        "annotations.0.annotation.name": "user_feedback",
        "annotations.0.annotation.score": 0.0,
        "annotations.0.annotation.annotator_kind": "HUMAN",
    }):  # fmt: skip
        pass
    srv.drain()
    assert srv.sql("SELECT span_id, source, negative FROM feedback WHERE trace_id = $t", t=plain) == [
        [plain_llm, "evaluator_span", True]
    ]
    assert "trigger:negative_feedback" in srv.status(plain)[1]
    assert srv.scalar("SELECT eval_generation FROM traces WHERE trace_id = $t", t=plain) == 2
