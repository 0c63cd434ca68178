"""Live traffic the screenshots and the UI tests share: the root causes ``tests/attribution`` plants,
sent as production traces (no gold case, no run) of two services, English and Chinese, with the
registry they are planted on and user feedback on a few, so the Live page and a triage screen have
something to show."""

from __future__ import annotations

from typing import Any

SERVICES = {"en": "support-bot", "zh": "member-bot"}
THUMBS_DOWN = ("en/dropped_before_context", "en/unsupported_claims", "zh/over_refusal")
COMMENT = "The answer says nothing about the 30-day refund."


def send_live_traffic(url: str) -> dict[str, str]:
    """Load the registry and send one trace of each planted cause and language (over OTLP/HTTP, the
    SDK's exporter); returns their trace ids by ``lang/cause``. The caller waits until they are
    evaluated, then calls ``send_feedback``."""
    import httpx

    from tests.attribution.data import GOLD, KB, PLANTS, QUERY, docs, jsonl
    from tests.otel_helpers import http_provider
    from tests.tracegen import rag_trace

    httpx.post(f"{url}/api/v1/kb", content=jsonl(KB), timeout=60).raise_for_status()
    scopes = {c["case_id"]: c["user_scope"] for c in GOLD}
    ids: dict[str, str] = {}
    for lang, plants in PLANTS.items():
        provider = http_provider(url, service=SERVICES[lang], batch=True)
        tracer = provider.get_tracer("live-traffic")
        for cause, (case_id, cands, reranked, answer, citations, retrieve) in plants.items():
            kwargs: dict[str, Any] = {
                "query": QUERY[case_id],
                "answer": answer,
                "candidates": docs(cands),
                "reranked": docs(reranked) if reranked is not None else None,
                "retrieve": retrieve,
                "user_scope": scopes[case_id],
                "citations": list(citations) if citations else None,
            }
            ids[f"{lang}/{cause}"] = rag_trace(tracer, **kwargs)
        provider.shutdown()
    return ids


def send_feedback(url: str, ids: dict[str, str]) -> None:
    """A thumbs-down on each of ``THUMBS_DOWN``, a comment on the first."""
    import httpx

    for n, key in enumerate(THUMBS_DOWN):
        body: dict[str, Any] = {"trace_id": ids[key], "kind": "thumbs", "value": "down", "user": "customer"}
        if n == 0:
            body["comment"] = COMMENT
        httpx.post(f"{url}/api/v1/feedback", json=body, timeout=60).raise_for_status()
