"""A gRPC export's message is held by the server only until it is decoded (by a decode worker, or
in the calling thread without one), as an HTTP body is: while the call waits for its commit,
nothing in the server process refers to the message any more, and the byte budget holds its
decoded batch instead. gRPC logs and metrics take their bytes from the budget too."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

from tests.collector.otlp_build import new_trace_id, request, span
from tests.conftest import Server, make_settings
from tests.waiting import wait_equal

MB = 1 << 20
OPTIONS = [("grpc.max_send_message_length", 64 * MB)]


def frames_holding(size: int) -> list[str]:
    """The functions of this process's threads whose locals hold a ``bytes`` of ``size`` bytes
    (directly or in a list or tuple)."""
    found = []
    for frame in sys._current_frames().values():
        f: Any = frame
        while f is not None:
            for value in list(f.f_locals.values()):
                items = value if isinstance(value, (list, tuple)) else (value,)
                if any(type(v) is bytes and len(v) == size for v in items):
                    found.append(f.f_code.co_name)
            f = f.f_back
    return found


@pytest.mark.parametrize("workers", [0, 1])
def test_a_grpc_message_is_let_go_once_decoded(tmp_path: Path, workers: int) -> None:
    srv = Server(make_settings(tmp_path, decode_workers=workers))
    release, stalled = threading.Event(), threading.Event()

    def stall(_con: object) -> None:  # a writer job: commits wait behind it
        stalled.set()
        release.wait(60)

    try:
        job = srv.runtime.writer.submit_job(stall)
        assert stalled.wait(30)
        message = request([span(new_trace_id(), attrs={"blob": "x" * (4 * MB)})])
        size = message.ByteSize()
        with grpc.insecure_channel(srv.grpc_endpoint, options=OPTIONS) as ch:
            call = trace_service_pb2_grpc.TraceServiceStub(ch).Export.future(message, timeout=60)
            # decoded: the batch waits for the writer, which runs the job
            wait_equal(
                lambda: srv.runtime.writer.queued_spans, 1, what="the decoded batch in the queue", timeout=60
            )
            holders = frames_holding(size)
            release.set()
            call.result()
        job.result(30)
        assert holders == [], f"the message is still held by {holders} while its commit waits"
        assert srv.scalar("SELECT count(*) FROM spans") == 1
    finally:
        release.set()
        srv.stop()


def test_grpc_logs_take_their_bytes_from_the_budget(tmp_path: Path) -> None:
    srv = Server(make_settings(tmp_path, max_inflight_bytes=1 * MB, max_decompressed_bytes=1 * MB,
                               max_body_bytes=1 * MB))  # fmt: skip
    try:
        budget = srv.runtime.pipeline.budget
        budget.take(budget.limit - 1000)  # ingest holds nearly all it may
        req = logs_service_pb2.ExportLogsServiceRequest()
        rec = req.resource_logs.add().scope_logs.add().log_records.add()
        rec.body.string_value = "x" * 10_000
        with grpc.insecure_channel(srv.grpc_endpoint) as ch:
            stub = logs_service_pb2_grpc.LogsServiceStub(ch)
            with pytest.raises(grpc.RpcError) as err:
                stub.Export(req, timeout=30)
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE
            budget.give(budget.limit - 1000)
            stub.Export(req, timeout=30)
        srv.wait_for("SELECT count(*) FROM log_records", 1)
    finally:
        srv.stop()
