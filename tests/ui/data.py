"""The data the UI tests and the screenshots share: the demo's traces as a second run, and judge
verdicts of two judge versions on the demo's claims."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

RUN2 = "demo-v2"


def send_second_run(*urls: str) -> int:
    """The demo app once more as run demo-v2: the reranker keeps 4 (the dropped document now reaches
    the context and the model answers from it) and the router stops searching for the retry
    question (a regression). Given several servers, each receives the same spans."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from ragfault.demo.app import HelpdeskApp, ScriptedLLM
    from ragfault.demo.scenarios import SCENARIOS, chunks_for, read_jsonl

    provider = TracerProvider(resource=Resource.create({"service.name": "helpdesk-demo-v2"}))
    for url in urls:
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    kb = {str(d["doc_id"]): d for d in read_jsonl("kb.jsonl")}
    changed: dict[str, dict[str, Any]] = {
        "api-rate-limit": {"keep": 4, "answer": "The API allows 600 requests per minute per project."},
        "retry-wait": {"search": False},
    }
    scenarios = [dataclasses.replace(s, **changed.get(s.case_id or "", {})) for s in SCENARIOS if s.case_id]
    app = HelpdeskApp(
        provider.get_tracer("ragfault.demo.helpdesk"), ScriptedLLM({s.question: s.answer for s in scenarios})
    )
    for s in scenarios:
        app.answer(
            s.question, chunks_for(s, kb), user_scope=s.user_scope, keep=s.keep, search=s.search,
            citations=s.citations, case_id=s.case_id, run_id=RUN2,
        )  # fmt: skip
    provider.force_flush()
    provider.shutdown()
    return len(scenarios)


def add_judge_verdicts(runtime: Any, run_id: str = "demo-v1") -> None:
    """Judge verdicts on the claims of the demo's run ``run_id`` by two judge versions, as the judge
    stores them: v2 changed its label on the first two claims, so those lead the review queue."""
    con = runtime.store.cursor()
    try:
        rows = con.execute(
            "SELECT trace_id, span_id, details FROM evaluations WHERE metric = 'answer_support' AND details IS NOT NULL "
            "AND run_id = $run ORDER BY case_id",
            {"run": run_id},
        ).fetchall()
    finally:
        con.close()
    import orjson

    from ragfault_core.textnorm import normalize

    t0 = datetime(2026, 1, 5, tzinfo=UTC).replace(tzinfo=None)
    verdicts = []
    for trace_id, span_id, details in rows:
        for c in orjson.loads(details).get("claims", []):
            verdicts.append((trace_id, span_id, c["claim"], c["verdict"]))
    assert len(verdicts) >= 6, verdicts
    flip = {"supported": "unsupported", "unsupported": "supported", "contradicted": "supported"}

    def job(con: Any) -> None:
        for i, (tid, sid, claim, label) in enumerate(verdicts):
            v1 = flip.get(label, "supported") if i < 2 else label
            for version, lab, at in (("v1", v1, t0), ("v2", label, t0 + timedelta(days=8))):
                con.execute(
                    "INSERT INTO judge_verdicts VALUES (?, ?, 'judge_answer_support', ?, ?, ?, ?, 'judge-m', ?, 'run', ?)",
                    [tid, sid, claim, normalize(claim), lab, 1.0 if lab == "supported" else 0.0, version, at],
                )
        for version in ("v1", "v2"):
            con.execute(
                "INSERT INTO judge_versions (model, prompt_version, first_seen, trusted) VALUES ('judge-m', ?, ?, ?)",
                [version, t0, version == "v1"],
            )

    runtime.writer.call(job, timeout=60)
