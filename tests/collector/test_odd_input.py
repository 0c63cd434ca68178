"""Input that is valid but odd: stored as sent, evaluated without errors, refused cleanly."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

from tests.collector.otlp_build import request, span
from tests.conftest import Server, StartServer
from tests.otel_helpers import http_provider
from tests.tracegen import prompt_for

BIG = 2**31  # one past INTEGER
CASE: dict[str, Any] = {
    "case_id": "big", "query": "How long is the refund window?", "answerable": True,
    "evidence": [{"doc_id": "policy", "quote": "30 days"}],
}  # fmt: skip
DOC = {"id": "policy", "content": "Refunds are accepted within 30 days of purchase."}


def test_a_document_index_past_int32_is_kept_and_evaluated(server: Server) -> None:
    assert server.http.post("/api/v1/gold", json=CASE).status_code == 200
    provider = http_provider(server.url)
    tracer = provider.get_tracer("t")
    root: dict[str, Any] = {
        "openinference.span.kind": "CHAIN",
        "input.value": CASE["query"],
        "ragfault.case_id": "big",
    }
    with tracer.start_as_current_span("rag.request", attributes=root) as r:
        trace_id = format(r.get_span_context().trace_id, "032x")
        docs: dict[str, Any] = {
            "openinference.span.kind": "RETRIEVER", "input.value": CASE["query"],
            f"retrieval.documents.{BIG}.document.id": DOC["id"],
            f"retrieval.documents.{BIG}.document.content": DOC["content"],
            f"retrieval.documents.{BIG + 7}.document.id": "other",
            f"retrieval.documents.{BIG + 7}.document.content": "Shipping takes a week.",
        }  # fmt: skip
        with tracer.start_as_current_span("retrieve", attributes=docs):
            pass
        llm: dict[str, Any] = {
            "openinference.span.kind": "LLM",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": prompt_for(CASE["query"], [DOC]),
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "Within 30 days.",
        }
        with tracer.start_as_current_span("llm", attributes=llm):
            pass
    provider.force_flush()
    server.wait_for("SELECT count(*) FROM spans", 3)
    server.settle()
    positions = server.sql(
        "SELECT position FROM step_documents WHERE trace_id = $t AND stage = 'candidate' ORDER BY position",
        t=trace_id,
    )
    assert positions == [[BIG], [BIG + 7]]
    server.wait_rows("SELECT 1 FROM attribution WHERE trace_id = $t", t=trace_id)
    errors = server.sql(
        "SELECT evaluator, metric, reason FROM evaluations WHERE trace_id = $t AND status = 'error'",
        t=trace_id,
    )
    assert errors == []
    recall = server.sql(
        "SELECT value FROM evaluations WHERE trace_id = $t AND metric = 'candidate_recall'",
        t=trace_id,
    )
    assert recall and recall[0][0] == 1.0


def test_non_finite_doubles_are_stored_exactly(server: Server) -> None:
    provider = http_provider(server.url)
    attrs: dict[str, Any] = {
        "x.nan": math.nan,
        "x.inf": math.inf,
        "x.ninf": -math.inf,
        "x.list": [1.5, math.nan, -math.inf],
    }
    with provider.get_tracer("t").start_as_current_span("odd", attributes=attrs):
        pass
    provider.force_flush()
    server.wait_for("SELECT count(*) FROM spans", 1)
    row = server.sql(
        """SELECT isnan((attributes->'$."x.nan"')::DOUBLE), (attributes->'$."x.inf"')::DOUBLE = 'inf'::DOUBLE,
                  (attributes->'$."x.ninf"')::DOUBLE = '-inf'::DOUBLE, json_type(attributes->'$."x.nan"'),
                  (attributes->'$."x.list"[0]')::DOUBLE, isnan((attributes->'$."x.list"[1]')::DOUBLE),
                  attributes::VARCHAR
           FROM spans"""
    )[0]
    assert row[:6] == [True, True, True, "DOUBLE", 1.5, True]
    # the stored text reads back with the values it was given
    from ragfault_core.jsonvalue import loads

    back = loads(row[6])
    assert math.isnan(back["x.nan"]) and back["x.inf"] == math.inf and back["x.ninf"] == -math.inf
    assert back["x.list"][0] == 1.5 and math.isnan(back["x.list"][1]) and back["x.list"][2] == -math.inf


def test_a_nul_byte_in_an_export_path_is_a_400(tmp_path: Path, start_server: StartServer) -> None:
    cfg = tmp_path / "ragfault.toml"
    cfg.write_text(f"[retention]\nexport_dir = '{tmp_path / 'exports'}'\n", encoding="utf-8")
    srv = start_server(config_file=str(cfg))
    r = srv.http.post("/api/v1/export", json={"out_dir": "a\x00b"})
    assert r.status_code == 400, r.text
    assert "NUL" in r.json()["detail"]


@pytest.mark.server_settings(ingest_token="in-secret")
def test_every_authorization_entry_of_a_grpc_call_is_checked(server: Server) -> None:
    good, bad = ("authorization", "Bearer in-secret"), ("authorization", "Bearer wrong")
    with grpc.insecure_channel(server.grpc_endpoint) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        for metadata in ([good, bad], [bad, good], [good, ("authorization", "in-secret")]):
            with pytest.raises(grpc.RpcError) as info:
                stub.Export(request([span(bytes.fromhex("ab" * 16))]), timeout=10, metadata=metadata)
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED, metadata
        stub.Export(request([span(bytes.fromhex("cd" * 16))]), timeout=10, metadata=[good, good])
    assert server.scalar("SELECT count(*) FROM spans") == 1
    assert server.sql("SELECT DISTINCT trace_id FROM spans") == [["cd" * 16]]
