"""Batches for the contract tests: a small RAG trace's spans, log records and metric points, with the
times they were sent and received chosen by the test (no clock is read)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from collector.ingest.batch import ArrowBatch
from collector.ingest.span_rows import flatten
from collector.normalize import DEFAULT_SOURCE_KEYS
from collector.receivers.log_records import flatten_logs
from collector.receivers.metric_points import flatten_metrics
from collector.store.schema import batch_to_arrow
from tests.collector.otlp_build import kv, new_span_id, rag_spans, request, span


def ns(at: datetime) -> int:
    return int(at.replace(tzinfo=UTC).timestamp() * 1e9)


def spans_batch(
    trace_id: bytes, started: datetime, received: datetime, *, service: str = "shop"
) -> ArrowBatch:
    """The spans of ``otlp_build.rag_spans`` (a CHAIN root answering "Refunds take 30 days." from one
    retrieved document) and the LLM call whose prompt holds that document, started at ``started`` and
    received at ``received``."""
    spans = rag_spans(trace_id)
    llm = {
        "openinference.span.kind": "LLM",
        "input.value": "Answer from: Refunds take 30 days. Question: refund?",
        "output.value": "Refunds take 30 days.",
    }
    spans.append(span(trace_id, span_id=new_span_id(), parent=spans[0].span_id, name="llm", attrs=llm))
    for s in spans:
        s.start_time_unix_nano, s.end_time_unix_nano = ns(started), ns(started) + 1_000_000
    return batch_to_arrow(
        flatten(request(spans, service), source_keys=DEFAULT_SOURCE_KEYS, received_at=received)
    )


def logs_batch(at: datetime, received: datetime, *, body: str = "hello", service: str = "shop") -> ArrowBatch:
    """One log record without a trace, of time ``at``."""
    req = ExportLogsServiceRequest()
    rl = req.resource_logs.add()
    rl.resource.attributes.append(kv("service.name", service))
    rec = rl.scope_logs.add().log_records.add()
    rec.time_unix_nano = ns(at)
    rec.body.string_value = body
    return flatten_logs(req, received)


def content_event_batch(
    trace_id: str, span_id: str, at: datetime, received: datetime, *, answer: str, service: str = "shop"
) -> ArrowBatch:
    """A GenAI content event (``gen_ai.client.inference.operation.details``) of span ``span_id``: the
    model call's output messages, one assistant message saying ``answer``."""
    req = ExportLogsServiceRequest()
    rl = req.resource_logs.add()
    rl.resource.attributes.append(kv("service.name", service))
    rec = rl.scope_logs.add().log_records.add()
    rec.time_unix_nano = ns(at)
    rec.trace_id, rec.span_id = bytes.fromhex(trace_id), bytes.fromhex(span_id)
    rec.event_name = "gen_ai.client.inference.operation.details"
    output = [{"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}]
    rec.attributes.append(kv("gen_ai.output.messages", json.dumps(output)))
    return flatten_logs(req, received)


def points_batch(
    at: datetime, received: datetime, *, value: float = 1.0, service: str = "shop"
) -> ArrowBatch:
    """One gauge point of ``queue.depth`` at ``at``."""
    req = ExportMetricsServiceRequest()
    rm = req.resource_metrics.add()
    rm.resource.attributes.append(kv("service.name", service))
    metric = rm.scope_metrics.add().metrics.add()
    metric.name = "queue.depth"
    p = metric.gauge.data_points.add()
    p.time_unix_nano = ns(at)
    p.as_double = value
    return flatten_metrics(req, received)
