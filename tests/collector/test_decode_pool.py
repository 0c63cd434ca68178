"""Decode worker processes: same results as in-process decoding, errors map to the same status,
a dead worker gives a retryable answer and a fresh pool, and no worker outlives its server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from collector.ingest.build import BuildOptions
from collector.ingest.decode_pool import DecodePool, decode_to_arrow
from ragfault_core.errors import PayloadTooLarge, PermanentError, RetryableError
from tests.collector.otlp_build import new_span_id, new_trace_id, request, span
from tests.conftest import Server, StartServer
from tests.waiting import wait_until

PB = "application/x-protobuf"
LIMIT = 64 << 20
OPTIONS = BuildOptions()  # the default source keys, no mappings, no clamping


def rag_request() -> bytes:
    """A small RAG trace in OpenInference attributes, plus a rejected span."""
    tid, root = new_trace_id(), new_span_id()
    docs: dict[str, str | float] = {}
    for i in range(3):
        docs[f"retrieval.documents.{i}.document.id"] = f"chunk-{i}"
        docs[f"retrieval.documents.{i}.document.content"] = f"refunds within {i + 10} days"
        docs[f"retrieval.documents.{i}.document.score"] = 0.9 - i / 10
        docs[f"retrieval.documents.{i}.document.metadata"] = f'{{"doc_id": "policy-{i}"}}'
    spans = [
        span(tid, span_id=root, name="query", attrs={
            "openinference.span.kind": "CHAIN", "input.value": "refund window?", "ragfault.case_id": "c1"}),
        span(tid, parent=root, name="retrieve", attrs={"openinference.span.kind": "RETRIEVER",
                                                        "input.value": "refund window?", **docs}),
        span(tid, parent=root, name="llm", attrs={
            "openinference.span.kind": "LLM", "llm.model_name": "m", "llm.token_count.prompt": 12,
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "refunds within 10 days. refund window?",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "10 days", "tags": ["a", "b"]}),
        span(b"\x00" * 16, name="zero-trace"),
    ]  # fmt: skip
    return request(spans).SerializeToString()


def _without_received_at(t: pa.Table) -> pa.Table:
    return t.drop_columns(["received_at"]) if "received_at" in t.column_names else t


@pytest.fixture(scope="module")
def pool() -> Iterator[DecodePool]:
    p = DecodePool(1)
    p.start()
    try:
        yield p
    finally:
        p.shutdown()


def test_pool_gives_the_same_tables_as_in_process_decoding(pool: DecodePool) -> None:
    body = rag_request()
    here = decode_to_arrow(body, PB, None, LIMIT, OPTIONS)
    there = pool.submit(body, PB, None, LIMIT, OPTIONS).result(60)
    assert len(there) == len(here) == 3
    assert (there.rejected, there.errors) == (here.rejected, here.errors) == (1, here.errors)
    assert "trace_id" in there.error_message()
    for a, b in ((here.spans, there.spans), (here.steps, there.steps), (here.docs, there.docs)):
        assert a.schema == b.schema
        assert _without_received_at(a).equals(_without_received_at(b))
    assert there.docs.num_rows == 3


def test_a_large_batch_comes_back_through_a_spool_file_that_is_gone_after(pool: DecodePool) -> None:
    """A batch over ``SPOOL_MIN_BYTES`` is written to a file by the worker and mapped by the server,
    the same tables as in-process decoding, and no file is left in the spool directory."""
    from collector.ingest.decode_pool import SPOOL_MIN_BYTES

    tid = new_trace_id()
    body = request([span(tid, attrs={"blob": "x" * (1 << 20)}) for _ in range(20)]).SerializeToString()
    here = decode_to_arrow(body, PB, None, LIMIT, OPTIONS)
    there = pool.submit(body, PB, None, LIMIT, OPTIONS).result(60)
    assert there.spans.nbytes >= SPOOL_MIN_BYTES
    assert _without_received_at(here.spans).equals(_without_received_at(there.spans))
    assert os.listdir(pool.spool_dir) == []


def test_logs_and_metrics_decode_in_the_pool(pool: DecodePool) -> None:
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    req = ExportLogsServiceRequest()
    for i in range(3):
        rec = req.resource_logs.add().scope_logs.add().log_records.add()
        rec.body.string_value = f"record {i}"
    batch = pool.submit(req.SerializeToString(), PB, None, LIMIT, OPTIONS, signal="logs").result(60)
    assert batch.logs is not None and sorted(batch.logs.column("body_text").to_pylist()) == [
        "record 0", "record 1", "record 2"
    ]  # fmt: skip


def test_a_killed_servers_spool_directory_is_removed_by_the_next(tmp_path: Path) -> None:
    import tempfile

    from collector.ingest.decode_pool import SPOOL_PREFIX

    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    orphan = Path(tempfile.gettempdir()) / f"{SPOOL_PREFIX}{gone.stdout.strip()}-test"
    orphan.mkdir()
    (orphan / "left.arrows").write_bytes(b"x")
    p = DecodePool(1)
    try:
        assert not orphan.exists()
        assert Path(p.spool_dir).is_dir()
    finally:
        p.shutdown()
    assert not Path(p.spool_dir).exists()


@pytest.mark.parametrize(
    ("body", "ctype", "cenc", "error"),
    [
        (b"\xff\xff\xff garbage", PB, None, PermanentError),
        (b"{not json", "application/json", None, PermanentError),
        (b"not gzip", PB, "gzip", PermanentError),
    ],
)
def test_a_workers_permanent_error_comes_back_as_itself(
    pool: DecodePool, body: bytes, ctype: str, cenc: str | None, error: type[Exception]
) -> None:
    with pytest.raises(error) as info:
        pool.submit(body, ctype, cenc, LIMIT, OPTIONS).result(60)
    assert type(info.value) is error  # not a subclass: each answers its own HTTP status


def test_a_body_that_inflates_past_the_limit_is_payload_too_large(pool: DecodePool) -> None:
    import gzip

    bomb = gzip.compress(b"\0" * (2 << 20))
    with pytest.raises(PayloadTooLarge):
        pool.submit(bomb, PB, "gzip", 1 << 20, OPTIONS).result(60)


def _wait_gone(pid: int, timeout: float = 30) -> None:
    def there() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    wait_until(there, lambda alive: not alive, what=f"process {pid} to end", timeout=timeout)


def test_a_killed_worker_gives_a_retryable_error_then_a_new_pool() -> None:
    p = DecodePool(1)
    try:
        p.start()
        (pid,) = p.worker_pids()
        os.kill(pid, signal.SIGKILL)
        _wait_gone(pid)
        with pytest.raises(RetryableError):
            p.submit(rag_request(), PB, None, LIMIT, OPTIONS).result(60)
        batch = p.submit(rag_request(), PB, None, LIMIT, OPTIONS).result(60)
        assert len(batch) == 3
        assert p.restarts == 1
        assert p.worker_pids() and p.worker_pids() != [pid]
    finally:
        p.shutdown()


# --- through the server ------------------------------------------------------------------------


@pytest.fixture
def pool_server(start_server: StartServer) -> Server:
    return start_server(decode_workers=1)


def test_server_with_a_pool_maps_errors_and_recovers_from_a_dead_worker(pool_server: Server) -> None:
    srv = pool_server
    pool = srv.runtime.pipeline.pool
    assert pool is not None and pool.workers == 1

    r = srv.http.post("/v1/traces", content=b"\xff\xff\xff garbage", headers={"Content-Type": PB})
    assert r.status_code == 400
    r = srv.http.post("/v1/traces", content=rag_request(), headers={"Content-Type": PB})
    assert r.status_code == 200

    (pid,) = pool.worker_pids()
    os.kill(pid, signal.SIGKILL)
    _wait_gone(pid)
    body = rag_request()
    r = srv.http.post("/v1/traces", content=body, headers={"Content-Type": PB})
    assert r.status_code == 503 and int(r.headers["retry-after"]) >= 1
    r = srv.http.post("/v1/traces", content=body, headers={"Content-Type": PB})  # the exporter's retry
    assert r.status_code == 200
    assert srv.scalar("SELECT count(*) FROM spans") == 6


def test_grpc_uses_the_pool(pool_server: Server) -> None:
    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    req = ExportTraceServiceRequest.FromString(rag_request())
    with grpc.insecure_channel(pool_server.grpc_endpoint) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        resp = stub.Export(req, timeout=30)
        assert resp.partial_success.rejected_spans == 1
        with pytest.raises(grpc.RpcError) as exc:
            channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")(
                b"\xff\xff\xff garbage", timeout=30
            )
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert pool_server.scalar("SELECT count(*) FROM steps WHERE step_type = 'retrieval'") == 1


def test_workers_exit_when_the_server_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "owner.py"
    script.write_text(
        textwrap.dedent("""
        import sys, time
        from collector.ingest.decode_pool import DecodePool
        if __name__ == "__main__":  # the workers import this module again
            p = DecodePool(2)
            p.start()
            print(" ".join(map(str, p.worker_pids())), flush=True)
            time.sleep(600)
    """)
    )
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=os.getcwd())
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        pids = [int(x) for x in line.split()]
        assert len(pids) == 2
    finally:
        proc.kill()
        proc.wait()
    for pid in pids:
        _wait_gone(pid)
