"""Triage and promotion on a lake collector (``--store ducklake``): a thumbs-down trace is in the
queue, promoting it writes the case and its record to the lake's plain tables, and the trace is
attributed with the case at once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.attribution.conftest import wait_evaluated
from tests.conftest import Server, make_settings
from tests.live.conftest import DOCS
from tests.otel_helpers import http_provider
from tests.store.conftest import Lake
from tests.tracegen import rag_trace


@pytest.fixture
def srv(lake: Lake, tmp_path: Path) -> Iterator[Server]:
    cfg = tmp_path / "ragfault.toml"
    cfg.write_text("[evaluation]\nworkers = 0\n", encoding="utf-8")
    s = Server(
        make_settings(
            tmp_path,
            store="ducklake",
            catalog=lake.catalog,
            data_path=str(lake.data_path),
            extension_repository=False,
            config_file=str(cfg),
        )
    )
    try:
        yield s
    finally:
        s.stop()


def test_triage_and_promotion_on_a_lake(srv: Server) -> None:
    provider = http_provider(srv.url, service="lake-shop")
    try:
        t = rag_trace(
            provider.get_tracer("lake"), query="Are refunds accepted after 60 days?", answer="Always.",
            candidates=DOCS,
        )  # fmt: skip
    finally:
        provider.shutdown()
    wait_evaluated(srv, [t])
    r = srv.http.post("/api/v1/feedback", json={"trace_id": t, "kind": "thumbs", "value": "down"})
    assert r.status_code == 200, r.text
    queue = srv.http.get("/api/v1/triage", params={"service": "lake-shop"}).json()["items"]
    assert [i["trace_id"] for i in queue] == [t] and "negative_feedback" in queue[0]["reasons"]
    r = srv.http.post(
        "/api/v1/gold/promote",
        json={
            "trace_id": t,
            "cause": "unsupported_claims",
            "evidence": [{"doc_id": "policy", "quote": "within 30 days"}],
            "user": "lake-reviewer",
        },
    )
    assert r.status_code == 200, r.text
    case_id = r.json()["case_id"]
    assert srv.sql("SELECT case_id FROM attribution WHERE trace_id = $t", t=t) == [[case_id]]
    assert srv.sql("SELECT dataset FROM gold_cases WHERE case_id = $c", c=case_id) == [["production"]]
    assert srv.sql("SELECT trace_id, promoted_by FROM gold_promotions") == [[t, "lake-reviewer"]]
    assert srv.http.get("/api/v1/triage").json()["items"] == []
