"""Every API route that reads a body bounds it (``[server] api_body_bytes``): a 300 MB body is refused
with 413 naming the limit, announced or chunked, and the server's memory stays where it was; a load
up to its limit still works; a body that lies about its length gets no more than it announced.

The server is a child process (``ragfault serve``, decoding in-process), so its peak resident set is
its own: the kernel's high-water mark (``VmHWM``), reset before each request (``clear_refs``)."""

from __future__ import annotations

import json
import select
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from collector.config import ServerSettings, build_settings
from collector.receivers.bodies import ApiBodyLimits
from ragfault_core.errors import ConfigError
from tests.served import Collector

MiB = 1 << 20
HUGE = 300 * MiB
KB_LIMIT = 8 * MiB  # the server's kb and gold limits here, so a load up to the limit stays quick
TRACE_ID = "ab" * 16

# every route of the API that reads a body, and the limit that applies to it on this server
ROUTES = [
    ("POST", "/api/v1/feedback", 64 << 10),
    ("POST", "/api/v1/kb", KB_LIMIT),
    ("POST", "/api/v1/gold", KB_LIMIT),
    ("POST", "/api/v1/labels", 16 * MiB),
    ("POST", "/api/v1/evaluate", 16 * MiB),
    ("POST", "/api/v1/sql", MiB),
    ("POST", "/api/v1/export", MiB),
    ("POST", "/api/v1/judge/accept", MiB),
    ("POST", "/api/v1/judge/anchors/rescore", MiB),
    ("PUT", "/api/v1/runs/r1", MiB),
    ("POST", "/api/v1/ui/demo", MiB),
]
# what the server may hold beyond its resident set before the request: the largest limit read
# whole (16 MiB) and the allocator's slack; without the limits a 300 MB body took 2.28 GB
GROWTH_BOUND = 40 * MiB


def status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {key} in /proc/{pid}/status")


def reset_peak(pid: int) -> None:
    """Start the process's high-water mark again from its resident set (Linux 4.0+)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        pytest.skip("cannot reset the server's peak resident set (/proc/PID/clear_refs)")


class Growth:
    """How far the server's peak resident set rose above its resident set at the start."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def __enter__(self) -> Growth:
        reset_peak(self.pid)
        self.start = status_kib(self.pid, "VmRSS")
        return self

    def __exit__(self, *exc: object) -> None:
        self.bytes = status_kib(self.pid, "VmHWM") - self.start


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Collector]:
    tmp = tmp_path_factory.mktemp("bodies")
    env = {
        "RAGFAULT_DECODE_WORKERS": "0",
        "RAGFAULT_MEMORY_LIMIT": "512MB",
        "RAGFAULT_BODY_TIMEOUT_SECONDS": "1",
        "RAGFAULT_API_BODY_BYTES": json.dumps({"kb": KB_LIMIT, "gold": KB_LIMIT}),
    }
    with Collector(["--db", str(tmp / "bodies.duckdb")], tmp / "serve.log", env=env) as c:
        c.wait_ready()
        # every route once, so what they import and build at first use is in the resident set
        with httpx.Client(base_url=c.url, timeout=60) as http:
            for method, path, _ in ROUTES:
                if path != "/api/v1/ui/demo":
                    http.request(method, path, content=b"{}", headers={"Content-Type": "application/json"})
        yield c


def chunks(total: int, size: int = MiB) -> Iterator[bytes]:
    """``total`` bytes, ``size`` at a time: the test never holds more than one chunk."""
    block = b"x" * size
    for _ in range(total // size):
        yield block


@pytest.mark.parametrize("announced", [True, False], ids=["content-length", "chunked"])
@pytest.mark.parametrize(("method", "path", "limit"), ROUTES, ids=[p for _, p, _ in ROUTES])
def test_a_300_mb_body_is_refused_with_413_naming_the_limit(
    served: Collector, method: str, path: str, limit: int, announced: bool
) -> None:
    headers = {"Content-Type": "application/json"}
    if announced:
        headers["Content-Length"] = str(HUGE)  # httpx then sends the generator as that length
    with Growth(served.proc.pid) as growth, httpx.Client(timeout=120) as http:
        r = http.request(method, served.url + path, content=chunks(HUGE), headers=headers)
    assert r.status_code == 413, r.text
    detail = r.json()["detail"]
    assert str(limit) in detail and "api_body_bytes" in detail, detail
    assert r.headers["connection"] == "close"
    assert growth.bytes < GROWTH_BOUND, f"the server's resident set rose {growth.bytes / MiB:.0f} MiB"
    assert growth.bytes < limit + 24 * MiB  # never more than the route's own limit held


def kb_lines(n: int, size: int) -> bytes:
    """``n`` knowledge-base documents of about ``size`` bytes each, as JSONL."""
    pad = "lorem ipsum " * (size // 12)
    return b"".join(
        json.dumps({"doc_id": f"bulk-{i}", "content": f"document {i} {pad}"}).encode() + b"\n"
        for i in range(n)
    )


def test_a_load_up_to_its_limit_is_stored_and_one_past_it_stores_nothing(served: Collector) -> None:
    body = kb_lines(7000, 1100)
    assert KB_LIMIT - MiB < len(body) <= KB_LIMIT
    jsonl = {"Content-Type": "application/x-ndjson"}
    r = httpx.post(f"{served.url}/api/v1/kb", content=body, headers=jsonl, timeout=300)
    assert r.status_code == 200, r.text
    assert r.json()["loaded"] == 7000
    assert served.sql("SELECT count(*) FROM kb_documents WHERE doc_id LIKE 'bulk-%'") == [[7000]]
    # the same documents and one more line past the limit: 413, and not one of them changes
    more = (
        body.replace(b"document ", b"changed ") + json.dumps({"doc_id": "x", "content": "y" * MiB}).encode()
    )
    r = httpx.post(f"{served.url}/api/v1/kb", content=chunks_of(more), headers=jsonl, timeout=300)
    assert r.status_code == 413, r.text
    assert served.sql("SELECT count(*) FROM kb_documents WHERE content LIKE 'changed %'") == [[0]]
    assert served.sql("SELECT count(*) FROM kb_documents WHERE doc_id = 'x'") == [[0]]


def chunks_of(data: bytes, size: int = 256 << 10) -> Iterator[bytes]:
    """``data`` streamed without a Content-Length (chunked)."""
    for i in range(0, len(data), size):
        yield data[i : i + size]


def raw_request(port: int, head: str) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    s.sendall(head.encode())
    return s


def send_until_answered(s: socket.socket, total: int) -> bytes:
    """Send up to ``total`` bytes of junk while nothing comes back; then read what the server said
    until it closes the connection."""
    block = b"y" * MiB
    sent = 0
    s.setblocking(False)
    try:
        while sent < total:
            readable, writable, _ = select.select([s], [s], [], 60)
            if readable:
                break
            if writable:
                try:
                    sent += s.send(block)
                except (BlockingIOError, InterruptedError):
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    break
    finally:
        s.setblocking(True)
    s.settimeout(60)
    reply = b""
    try:
        while chunk := s.recv(65536):
            reply += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return reply


def test_a_body_longer_than_announced_is_cut_at_the_announced_length(served: Collector) -> None:
    """Content-Length says a small feedback event, then 300 MB follow: the route gets the event
    exactly, the rest is never part of it, and the server holds none of it."""
    event = json.dumps({"trace_id": TRACE_ID, "kind": "comment", "comment": "short"}).encode()
    head = (
        f"POST /api/v1/feedback HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(event)}\r\n\r\n"
    )
    with Growth(served.proc.pid) as growth:
        s = raw_request(served.port, head)
        try:
            s.sendall(event)
            reply = send_until_answered(s, HUGE)
        finally:
            s.close()
    assert reply.startswith(b"HTTP/1.1 200"), reply[:300]
    rows = served.sql(
        "SELECT length(comment) FROM feedback WHERE trace_id = $t AND comment IS NOT NULL", t=TRACE_ID
    )
    assert rows == [[5]]
    assert growth.bytes < GROWTH_BOUND, f"the server's resident set rose {growth.bytes / MiB:.0f} MiB"


def test_a_body_shorter_than_announced_ends_with_408_and_stores_nothing(served: Collector) -> None:
    head = (
        f"POST /api/v1/feedback HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {60 << 10}\r\n\r\n"
    )
    s = raw_request(served.port, head)
    try:
        s.sendall(b'{"trace_id": "' + b"cd" * 16 + b'", "kind": "comment", "comment": "')
        reply = b""
        while chunk := s.recv(65536):  # the server's body timeout (1 s here) ends it
            reply += chunk
    finally:
        s.close()
    assert reply.startswith(b"HTTP/1.1 408"), reply[:300]
    assert b"body_timeout_seconds" in reply
    assert served.sql("SELECT count(*) FROM feedback WHERE trace_id = $t", t="cd" * 16) == [[0]]


def test_refusals_are_counted(served: Collector) -> None:
    r = httpx.post(
        f"{served.url}/api/v1/feedback",
        content=b"x" * (65 << 10),
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 413
    text = httpx.get(f"{served.url}/metrics").text
    line = next(
        x
        for x in text.splitlines()
        if x.startswith('ragfault_api_bodies_refused_total{route="feedback",status="413"}')
    )
    assert float(line.rsplit(" ", 1)[1]) >= 1


def test_the_limits_are_per_route_with_documented_defaults() -> None:
    limits = ServerSettings().api_body_bytes
    assert limits.of("/api/v1/kb") == ("kb", 64 * MiB)
    assert limits.of("/api/v1/gold/") == ("gold", 64 * MiB)
    assert limits.of("/api/v1/feedback") == ("feedback", 64 << 10)
    assert limits.of("/api/v1/judge/accept") == ("default", MiB)
    assert limits.of("/api/v1/something-added-later") == ("default", MiB)
    assert limits.of("/ui") == ("default", MiB)
    with pytest.raises(ValueError, match="kbb"):
        ApiBodyLimits(kbb=1)  # type: ignore[call-arg]
    for name, field in ApiBodyLimits.model_fields.items():
        assert field.description, name


def test_the_limits_are_set_in_the_config_file_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tmp_path / "ragfault.toml"
    cfg.write_text("[server.api_body_bytes]\nkb = 1000\n", encoding="utf-8")
    limits = build_settings(cfg).api_body_bytes
    assert limits.kb == 1000 and limits.gold == 64 * MiB  # the others keep their defaults
    cfg.write_text("[server.api_body_bytes]\nkbb = 1000\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"api_body_bytes\.kbb: unknown setting"):
        build_settings(cfg)
    monkeypatch.setenv("RAGFAULT_API_BODY_BYTES", '{"feedback": 2048}')
    assert build_settings().api_body_bytes.feedback == 2048
    monkeypatch.setenv("RAGFAULT_API_BODY_BYTES", "feedback=2048")
    with pytest.raises(ConfigError, match="RAGFAULT_API_BODY_BYTES must be a JSON object"):
        build_settings()
