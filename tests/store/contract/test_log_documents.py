"""Documents a log record gives a retrieval at settle, on every backend: written with the derived
rows of the trace's assembly, shown once in ``step_documents`` (also after the trace settles again),
the step's provenance naming the record; a record from another service gives none."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from collector.ingest.batch import ArrowBatch
from collector.ingest.span_rows import flatten
from collector.receivers.log_records import flatten_logs
from collector.settling.settle import Settler
from collector.store.schema import batch_to_arrow
from tests.collector.otlp_build import kv, new_span_id, request, span
from tests.store.contract.build import ns
from tests.store.contract.conftest import requires

T0 = datetime(2026, 3, 2, 12, 0, 0)
SETTLE = timedelta(seconds=2)
HITS = [{"id": "refund-policy", "text": "Refunds take 30 days.", "score": 0.9}]
CANDIDATES = "SELECT span_id, doc_id, content, score, source FROM step_documents WHERE trace_id = ? AND stage = 'candidate'"


def record(trace_id: str, span_id: str, at: datetime, service: str) -> ArrowBatch:
    """A log record of span ``span_id`` whose body holds the retrieval's results."""
    req = ExportLogsServiceRequest()
    rl = req.resource_logs.add()
    rl.resource.attributes.append(kv("service.name", service))
    rec = rl.scope_logs.add().log_records.add()
    rec.time_unix_nano = ns(at)
    rec.trace_id, rec.span_id = bytes.fromhex(trace_id), bytes.fromhex(span_id)
    rec.event_name = "kb.results"
    rec.body.string_value = json.dumps({"results": HITS})
    return flatten_logs(req, at)


def test_a_log_record_s_documents_are_the_retrieval_s(backend: Any) -> None:
    requires(backend, "settling")
    requires(backend, "write_signals")
    con = backend.cursor()
    settler = Settler(
        backend.cursor(), lambda job: job(con), settle_seconds=SETTLE.total_seconds(), max_wait_seconds=60
    )
    for trace_id, service in (("0e" * 16, "shop"), ("0f" * 16, "someone-else")):
        root = span(bytes.fromhex(trace_id), name="request", attrs={"input": "How long do refunds take?"})
        search = span(
            bytes.fromhex(trace_id), span_id=new_span_id(), parent=root.span_id, name="retrieval kb",
            attrs={"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": "refund?"},
        )  # fmt: skip
        for s in (root, search):
            s.start_time_unix_nano, s.end_time_unix_nano = ns(T0), ns(T0) + 1_000_000
        backend.write_spans(con, batch_to_arrow(flatten(request([root, search], "shop"), received_at=T0)))
        backend.write_signals(con, record(trace_id, search.span_id.hex(), T0, service))
        assert settler.run_once(now=T0 + SETTLE) == 1
        sid = search.span_id.hex()
        docs = con.execute(CANDIDATES, [trace_id]).fetchall()
        provenance = con.execute(
            "SELECT provenance->>'docs' FROM steps WHERE trace_id = ? AND span_id = ?", [trace_id, sid]
        ).fetchall()
        if service != "shop":  # another service's record: nothing
            assert docs == [] and provenance == [(None,)]
            continue
        assert docs == [(sid, "refund-policy", "Refunds take 30 days.", 0.9, "derived")]
        assert provenance == [("shape:documents@log[kb.results].body",)]

        # a late span re-opens the trace: its documents are written again, not added twice
        late = span(bytes.fromhex(trace_id), span_id=new_span_id(), parent=root.span_id, name="late")
        at = T0 + timedelta(seconds=30)
        late.start_time_unix_nano, late.end_time_unix_nano = ns(at), ns(at) + 1
        backend.write_spans(con, batch_to_arrow(flatten(request([late], "shop"), received_at=at)))
        assert settler.run_once(now=at + SETTLE) == 1
        assert con.execute(CANDIDATES, [trace_id]).fetchall() == docs


def test_a_span_that_recorded_nothing_is_the_retrieval_its_log_record_shows(backend: Any) -> None:
    """A span of no convention with no content (a step of type ``other``) whose log record lists the
    documents it returned: the settle keeps the documents and the step becomes a retrieval, on both
    backends, with where the type came from in its provenance (the lake keeps it in ``step_fills``)."""
    requires(backend, "settling")
    requires(backend, "write_signals")
    con = backend.cursor()
    settler = Settler(
        backend.cursor(), lambda job: job(con), settle_seconds=SETTLE.total_seconds(), max_wait_seconds=60
    )
    trace_id = "1a" * 16
    root = span(bytes.fromhex(trace_id), name="request", attrs={"input": "How long do refunds take?"})
    search = span(bytes.fromhex(trace_id), span_id=new_span_id(), parent=root.span_id, name="kb lookup")
    for s in (root, search):
        s.start_time_unix_nano, s.end_time_unix_nano = ns(T0), ns(T0) + 1_000_000
    backend.write_spans(con, batch_to_arrow(flatten(request([root, search], "shop"), received_at=T0)))
    sid = search.span_id.hex()
    step = "SELECT step_type, provenance->>'step_type' FROM steps WHERE trace_id = ? AND span_id = ?"
    backend.write_signals(con, record(trace_id, sid, T0, "shop"))
    assert settler.run_once(now=T0 + SETTLE) == 1
    assert con.execute(step, [trace_id, sid]).fetchall() == [
        ("retrieval", "shape:documents@log[kb.results].body")
    ]
    assert con.execute(CANDIDATES, [trace_id]).fetchall() == [
        (sid, "refund-policy", "Refunds take 30 days.", 0.9, "derived")
    ]
