"""Ingest memory is bounded by bytes (``max_inflight_bytes``), stalled bodies time out, and
connections that stall or pile up are closed so ingest and /healthz keep working."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

from tests.collector.otlp_build import new_trace_id, request, span
from tests.conftest import Server, StartServer, free_ports, make_settings
from tests.waiting import wait_equal, wait_until

MB = 1 << 20
PROTOBUF = {"Content-Type": "application/x-protobuf"}


def body_of(size: int) -> bytes:
    """An export request of about ``size`` bytes: one span with a large attribute."""
    return request([span(new_trace_id(), attrs={"blob": "x" * size})]).SerializeToString()


def stalled_upload(
    port: int,
    length: int,
    sent: bytes = b"x" * 1000,
    path: str = "/v1/traces",
    content_type: str = "application/x-protobuf",
) -> socket.socket:
    """A request that announces ``length`` body bytes and sends only ``sent``."""
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {length}\r\n\r\n"
    )
    s.sendall(head.encode() + sent)
    return s


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    settings = make_settings(
        tmp_path_factory.mktemp("inflight"),
        max_body_bytes=4 * MB,
        max_decompressed_bytes=4 * MB,
        max_inflight_bytes=4 * MB,
    )
    srv = Server(settings)
    try:
        yield srv
    finally:
        srv.stop()


def test_http_and_grpc_get_503_and_unavailable_while_the_byte_budget_is_held(small: Server) -> None:
    budget = small.runtime.pipeline.budget
    blocker = stalled_upload(small.settings.http_port, 3 * MB)  # holds 3 of the 4 MiB while it uploads
    try:
        wait_until(
            lambda: budget.used, lambda used: used >= 3 * MB, what="the stalled upload to take its bytes"
        )
        r = small.http.post("/v1/traces", content=body_of(2 * MB), headers=PROTOBUF)
        assert r.status_code == 503, r.status_code
        assert r.headers["Retry-After"] == "1"
        with grpc.insecure_channel(
            small.grpc_endpoint, options=[("grpc.max_send_message_length", 8 * MB)]
        ) as channel:
            stub = trace_service_pb2_grpc.TraceServiceStub(channel)
            with pytest.raises(grpc.RpcError) as err:
                stub.Export(request([span(new_trace_id(), attrs={"blob": "x" * (2 * MB)})]), timeout=30)
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE
            assert "max_inflight_bytes" in (err.value.details() or "")
            # a small request still fits beside the upload
            stub.Export(request([span(new_trace_id(), name="small-grpc")]), timeout=30)
        r = small.http.post("/v1/traces", content=body_of(1000), headers=PROTOBUF)
        assert r.status_code == 200
    finally:
        blocker.close()
    wait_equal(lambda: budget.used, 0, what="the budget in use")
    # once the upload is gone, the large request is accepted and stored
    r = small.http.post("/v1/traces", content=body_of(2 * MB), headers=PROTOBUF)
    assert r.status_code == 200
    assert small.scalar("SELECT count(*) FROM spans WHERE length(attributes) > 2000000") == 1
    assert small.scalar("SELECT count(*) FROM spans WHERE name = 'small-grpc'") == 1
    # (the SQL calls' own bodies are held in the budget too, and given back just after their answer)
    wait_equal(lambda: budget.used, 0, what="the budget in use after the SQL calls")


def test_an_api_upload_holds_its_bytes_in_the_same_budget(small: Server) -> None:
    """A knowledge-base upload and OTLP ingest share one bound: while 3 of the 4 MiB are held by an
    API body, a 2 MB export is refused with 503, and the bytes come back when the upload ends."""
    budget = small.runtime.pipeline.budget
    blocker = stalled_upload(
        small.settings.http_port,
        3 * MB,
        b'{"doc_id": "a"',
        path="/api/v1/kb",
        content_type="application/x-ndjson",
    )
    try:
        wait_until(
            lambda: budget.used, lambda used: used >= 3 * MB, what="the stalled API upload to take its bytes"
        )
        r = small.http.post("/v1/traces", content=body_of(2 * MB), headers=PROTOBUF)
        assert r.status_code == 503, r.status_code
    finally:
        blocker.close()
    wait_equal(lambda: budget.used, 0, what="the budget in use")
    assert small.http.post("/v1/traces", content=body_of(2 * MB), headers=PROTOBUF).status_code == 200


def test_a_stalled_body_ends_with_408_and_gives_its_bytes_back(tmp_path: Path) -> None:
    srv = Server(make_settings(tmp_path, body_timeout_seconds=0.5))
    s = stalled_upload(srv.settings.http_port, 2 * MB)
    try:
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = s.recv(65536)
            if not chunk:
                break
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
        s.settimeout(60)
        while chunk := s.recv(65536):
            reply += chunk
        assert b"body_timeout_seconds" in reply
        wait_equal(lambda: srv.runtime.pipeline.budget.used, 0, what="the budget in use")
    finally:
        s.close()
        srv.stop()


def _serve_limited(tmp_path: Path, http_port: int, grpc_port: int, **env: str) -> subprocess.Popen[bytes]:
    """``ragfault serve`` in a process whose file-descriptor limit is 1,024."""
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))\n"
        "from ragfault.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    environ = dict(os.environ, RAGFAULT_DECODE_WORKERS="0", RAGFAULT_MEMORY_LIMIT="512MB", **env)
    args = [sys.executable, "-c", code, "serve", "--db", str(tmp_path / "fd.duckdb"), "--http-port", str(http_port),
            "--grpc-port", str(grpc_port)]  # fmt: skip
    return subprocess.Popen(args, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_1100_stalled_connections_under_a_1024_descriptor_limit_do_not_stop_ingest(tmp_path: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 1300:
        pytest.skip("this test needs 1,300 file descriptors of its own")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1300), hard))
    port, grpc_port = free_ports(2)
    proc = _serve_limited(tmp_path, port, grpc_port)
    url = f"http://127.0.0.1:{port}"
    idle: list[socket.socket] = []
    try:
        wait_until(lambda: _healthy(url), what="the server to start", timeout=60)
        for _ in range(1100):  # request heads that never finish
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            idle.append(s)
        with httpx.Client(base_url=url, timeout=30) as client:
            assert client.get("/healthz").status_code == 200
            r = client.post("/v1/traces", content=body_of(100), headers=PROTOBUF)
            assert r.status_code == 200
        open_fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
        assert open_fds < 1024 // 4 + 200, open_fds  # max_connections (256) and the server's own files
        assert proc.poll() is None
    finally:
        for s in idle:
            s.close()
        proc.terminate()
        proc.wait(60)


def test_a_request_head_that_never_finishes_is_closed(start_server: StartServer) -> None:
    srv = start_server(header_timeout_seconds=0.5)
    s = socket.create_connection(("127.0.0.1", srv.settings.http_port), timeout=60)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    assert s.recv(1024) == b""  # closed by the server, nothing answered
    s.close()
    assert srv.http.get("/healthz").status_code == 200


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url + "/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_a_gzip_body_is_held_at_its_inflated_size(small: Server) -> None:
    import gzip

    budget = small.runtime.pipeline.budget
    raw = body_of(3 * MB)
    packed = gzip.compress(raw)
    assert len(packed) < 100_000  # 3 MiB of one letter
    gz = {**PROTOBUF, "Content-Encoding": "gzip"}
    blocker = stalled_upload(small.settings.http_port, 2 * MB)  # 2 of the 4 MiB
    try:
        wait_until(
            lambda: budget.used, lambda used: used >= 2 * MB, what="the stalled upload to take its bytes"
        )
        # 30 KB on the wire, 3 MiB once inflated: it does not fit beside the upload
        r = small.http.post("/v1/traces", content=packed, headers=gz)
        assert r.status_code == 503, r.status_code
        assert r.headers["Retry-After"] == "1"
    finally:
        blocker.close()
    wait_equal(lambda: budget.used, 0, what="the budget in use")
    r = small.http.post("/v1/traces", content=packed, headers=gz)
    assert r.status_code == 200, r.text
    # a trailer that declares less than the body inflates to is refused at the declared size
    liar = packed[:-4] + (1000).to_bytes(4, "little")
    r = small.http.post("/v1/traces", content=liar, headers=gz)
    assert r.status_code == 413 and "1000 bytes" in r.text, (r.status_code, r.text[:200])
    assert budget.used == 0
