"""Hostile loads against one server: SQL result bombs, large concurrent bodies, stalled connections.

For each load it prints the server's peak RSS (the server process and its decode workers together),
what the load got back, and the latency of a small ingest probe that sends one 10-span request every
50 ms meanwhile (p50 / p99 / failures). Run it against two source trees to compare them:

    python bench/hostile.py                       # this tree
    python bench/hostile.py --tree OTHER_CHECKOUT # another checkout of the project
    python bench/hostile.py --loads idle --loads CPU --set duckdb_threads=2 --repeat 3

Every load targets 127.0.0.1 and is bounded in count and time (two to four minutes a tree on two
shared cores). The server runs with its default settings and a file-descriptor limit of 1,024; it
is killed when its RSS passes ``--rss-cap`` (default 3 GiB), which the report then says.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import httpx
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.served import free_ports  # noqa: E402

MB = 1 << 20
PROTOBUF = {"Content-Type": "application/x-protobuf"}


def export_request(n_spans: int, blob: int = 0) -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    kv = rs.resource.attributes.add()
    kv.key, kv.value.string_value = "service.name", "hostile"
    ss = rs.scope_spans.add()
    tid = os.urandom(16)
    now = time.time_ns()
    for i in range(n_spans):
        sp = ss.spans.add()
        sp.trace_id, sp.span_id, sp.name = tid, os.urandom(8), f"op{i}"
        sp.start_time_unix_nano, sp.end_time_unix_nano = now, now + 1000
        if blob:
            a = sp.attributes.add()
            a.key, a.value.string_value = "blob", "x" * blob
    return req


def tree_rss(pid: int) -> dict[int, int]:
    """RSS bytes of ``pid`` and of each of its descendants."""
    out: dict[int, int] = {}
    pids = [pid]
    while pids:
        p = pids.pop()
        try:
            with open(f"/proc/{p}/statm") as fh:
                out[p] = int(fh.read().split()[1]) * resource.getpagesize()
            with open(f"/proc/{p}/task/{p}/children") as fh:
                pids.extend(int(c) for c in fh.read().split())
        except OSError:
            pass
    return out


class Server:
    def __init__(self, tree: Path, rss_cap: int, settings: dict[str, str] | None = None) -> None:
        self.tree, self.rss_cap = tree, rss_cap
        self.dir = Path(tempfile.mkdtemp(prefix="ragfault-hostile-"))
        self.http_port, self.grpc_port = free_ports(2)
        self.url = f"http://127.0.0.1:{self.http_port}"
        env = dict(os.environ, PYTHONPATH=str(tree), RAGFAULT_LOG_LEVEL="warning")
        env.update({f"RAGFAULT_{k.upper()}": v for k, v in (settings or {}).items()})
        args = [sys.executable, "-m", "ragfault.cli", "serve", "--db", str(self.dir / "h.duckdb"),
                "--http-port", str(self.http_port), "--grpc-port", str(self.grpc_port)]  # fmt: skip
        self.proc = subprocess.Popen(
            args,
            cwd=tree,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(self.dir / "server.log", "wb"),  # noqa: SIM115
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024)),
        )
        self.peak = self.own_peak = self.child_peak = 0  # the tree; the server process; one child
        self.killed = False
        self._stop = threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()
        deadline = time.monotonic() + 120
        while not self.healthy():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"server did not start: {(self.dir / 'server.log').read_text()[-2000:]}")
            time.sleep(0.2)

    def _watch(self) -> None:
        while not self._stop.is_set() and self.proc.poll() is None:
            each = tree_rss(self.proc.pid)
            rss = sum(each.values())
            self.peak = max(self.peak, rss)
            self.own_peak = max(self.own_peak, each.get(self.proc.pid, 0))
            others = [v for p, v in each.items() if p != self.proc.pid]
            self.child_peak = max([self.child_peak, *others])
            if rss > self.rss_cap:
                self.killed = True
                subprocess.run(["pkill", "-KILL", "-P", str(self.proc.pid)], check=False)
                self.proc.kill()
                return
            time.sleep(0.05)

    def healthy(self) -> bool:
        try:
            return httpx.get(self.url + "/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def reset_peak(self) -> None:
        each = tree_rss(self.proc.pid)
        self.peak, self.own_peak = sum(each.values()), each.get(self.proc.pid, 0)
        self.child_peak = max([0, *(v for p, v in each.items() if p != self.proc.pid)])

    def peaks(self) -> str:
        return f"server {self.own_peak / MB:.0f} MB, largest worker {self.child_peak / MB:.0f} MB"

    def stop(self) -> None:
        self._stop.set()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Probe:
    """One small export every 50 ms; latencies of those answered 200, and the rest counted."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.lat: list[float] = []
        self.failed = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=30) as client:
            while not self._stop.is_set():
                body = export_request(10).SerializeToString()
                t0 = time.perf_counter()
                try:
                    ok = client.post("/v1/traces", content=body, headers=PROTOBUF).status_code == 200
                except httpx.HTTPError:
                    ok = False
                if ok:
                    self.lat.append(time.perf_counter() - t0)
                else:
                    self.failed += 1
                self._stop.wait(0.05)

    def stop(self) -> str:
        self._stop.set()
        self._t.join(60)
        if not self.lat:
            return f"no request answered ({self.failed} failed)"
        lat = sorted(self.lat)
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
        return f"p50 {statistics.median(lat) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, {self.failed} failed of {len(lat) + self.failed}"


def counts(results: list[Any]) -> str:
    out: dict[str, int] = {}
    for r in results:
        out[str(r)] = out.get(str(r), 0) + 1
    return ", ".join(f"{k} x{v}" for k, v in sorted(out.items()))


def idle_load(srv: Server) -> str:
    time.sleep(20)
    return "-"


def sql_call(sql: str) -> Callable[[Server], str]:
    """A load: one SQL API call of ``sql``; its answer and how long it took."""

    def load(srv: Server) -> str:
        t0 = time.perf_counter()
        try:
            r = httpx.post(srv.url + "/api/v1/sql", json={"sql": sql}, timeout=120)
            return f"{r.status_code} in {time.perf_counter() - t0:.0f} s"
        except httpx.HTTPError as exc:
            return f"{type(exc).__name__} after {time.perf_counter() - t0:.0f} s"

    return load


def sql_heavy(srv: Server) -> str:
    """Four CPU-bound queries at once (``sql_max_concurrent``), each until its time limit
    (``sql_timeout_seconds``, 30 s)."""
    sql = "SELECT sum(hash(a.range * b.range)) FROM range(100000000) a, range(1000) b"

    def one(_: int) -> str:
        try:
            return str(httpx.post(srv.url + "/api/v1/sql", json={"sql": sql}, timeout=120).status_code)
        except httpx.HTTPError as exc:
            return type(exc).__name__

    with ThreadPoolExecutor(4) as pool:
        return counts(list(pool.map(one, range(4))))


def http_bodies(srv: Server) -> str:
    body = export_request(1, blob=25 * MB).SerializeToString()

    def one(_: int) -> str:
        try:
            return str(
                httpx.post(srv.url + "/v1/traces", content=body, headers=PROTOBUF, timeout=120).status_code
            )
        except httpx.HTTPError as exc:
            return type(exc).__name__

    with ThreadPoolExecutor(24) as pool:
        return counts(list(pool.map(one, range(24))))


def gzip_bodies(srv: Server) -> str:
    """Six gzip bodies of 120 KB at once, each inflating to a 120 MB request."""
    import gzip

    body = gzip.compress(export_request(1, blob=120 * MB).SerializeToString())
    headers = {**PROTOBUF, "Content-Encoding": "gzip"}

    def one(_: int) -> str:
        try:
            return str(
                httpx.post(srv.url + "/v1/traces", content=body, headers=headers, timeout=120).status_code
            )
        except httpx.HTTPError as exc:
            return type(exc).__name__

    with ThreadPoolExecutor(6) as pool:
        return counts(list(pool.map(one, range(6))))


def grpc_messages(srv: Server) -> str:
    req = export_request(1, blob=60 * MB)
    opts = [("grpc.max_send_message_length", 128 * MB)]

    def one(_: int) -> str:
        with grpc.insecure_channel(f"127.0.0.1:{srv.grpc_port}", options=opts) as ch:
            try:
                trace_service_pb2_grpc.TraceServiceStub(ch).Export(req, timeout=120)
                return "OK"
            except grpc.RpcError as exc:
                return exc.code().name

    with ThreadPoolExecutor(12) as pool:
        return counts(list(pool.map(one, range(12))))


def api_bodies(srv: Server) -> str:
    """300 MB bodies to the API routes that load data, eight at once: four streamed without a
    Content-Length (chunked), four announcing their length."""
    routes = ("/api/v1/feedback", "/api/v1/kb", "/api/v1/gold", "/api/v1/labels")

    def chunks() -> Iterator[bytes]:
        block = b"x" * MB
        for _ in range(300):
            yield block

    def one(i: int) -> str:
        headers = {"Content-Type": "application/json"}
        if i >= len(routes):
            headers["Content-Length"] = str(300 * MB)
        try:
            url = srv.url + routes[i % len(routes)]
            return str(httpx.post(url, content=chunks(), headers=headers, timeout=120).status_code)
        except httpx.HTTPError as exc:
            return type(exc).__name__

    with ThreadPoolExecutor(8) as pool:
        return counts(list(pool.map(one, range(8))))


def _amplified() -> dict[str, tuple[str, Any]]:
    """(signal, request) of each amplified request: a few KB that copy 1 MB into thousands of rows."""
    sys.path.insert(0, str(ROOT))
    from tests.collector.test_amplification import AMPLIFIED

    return {name: (signal, build()) for name, (signal, build) in AMPLIFIED.items()}


def amplified_http(srv: Server) -> str:
    """The three amplified requests (a 1 MB resource attribute for 6,000 log records, a 1 MB
    description for 3,000 points, a 1 MB resource for 6,000 spans), gzip, each sent twice at once."""
    import gzip

    headers = {**PROTOBUF, "Content-Encoding": "gzip"}
    bodies = [(sig, gzip.compress(req.SerializeToString(), 9)) for sig, req in _amplified().values()]

    def one(i: int) -> str:
        sig, body = bodies[i % len(bodies)]
        t0 = time.perf_counter()
        try:
            r = httpx.post(f"{srv.url}/v1/{sig}", content=body, headers=headers, timeout=120)
            return f"{sig} {r.status_code} ({len(body) // 1024} KB, {time.perf_counter() - t0:.1f} s)"
        except httpx.HTTPError as exc:
            return type(exc).__name__

    with ThreadPoolExecutor(6) as pool:
        return counts(list(pool.map(one, range(6))))


def amplified_grpc(srv: Server) -> str:
    """The same three requests over gRPC, gzip."""
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2_grpc
    from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc

    stubs = {
        "traces": trace_service_pb2_grpc.TraceServiceStub,
        "logs": logs_service_pb2_grpc.LogsServiceStub,
        "metrics": metrics_service_pb2_grpc.MetricsServiceStub,
    }
    out = []
    opts = [("grpc.max_send_message_length", 64 * MB)]
    with grpc.insecure_channel(f"127.0.0.1:{srv.grpc_port}", options=opts) as ch:
        for sig, req in _amplified().values():
            try:
                stubs[sig](ch).Export(req, timeout=120, compression=grpc.Compression.Gzip)
                out.append(f"{sig} OK")
            except grpc.RpcError as exc:
                out.append(f"{sig} {exc.code().name}")
    return counts(out)


def million_rows(signal: str) -> Callable[[Server], str]:
    """One request of 1,000,000 log records or gauge points (16-20 MB of protobuf, gzip)."""

    def load(srv: Server) -> str:
        import gzip

        sys.path.insert(0, str(ROOT))
        from tests.collector.test_amplification import logs_request, metrics_request

        req = logs_request(1_000_000) if signal == "logs" else metrics_request(1_000_000)
        body = gzip.compress(req.SerializeToString(), 1)
        del req
        t0 = time.perf_counter()
        try:
            r = httpx.post(
                f"{srv.url}/v1/{signal}",
                content=body,
                headers={**PROTOBUF, "Content-Encoding": "gzip"},
                timeout=300,
            )
            return f"{r.status_code} in {time.perf_counter() - t0:.0f} s"
        except httpx.HTTPError as exc:
            return f"{type(exc).__name__} after {time.perf_counter() - t0:.0f} s"

    return load


def stalled_connections(srv: Server) -> str:
    socks = []
    for _ in range(1100):
        try:
            s = socket.create_connection(("127.0.0.1", srv.http_port), timeout=5)
            s.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            socks.append(s)
        except OSError:
            break
    t0 = time.perf_counter()
    try:
        health = f"/healthz {httpx.get(srv.url + '/healthz', timeout=30).status_code} in {time.perf_counter() - t0:.1f} s"
    except httpx.HTTPError as exc:
        health = f"/healthz {type(exc).__name__} after {time.perf_counter() - t0:.1f} s"
    time.sleep(5)
    for s in socks:
        s.close()
    return f"{len(socks)} opened; {health}"


LOADS: list[tuple[str, Callable[[Server], str]]] = [
    ("idle (20 s)", idle_load),
    ("SQL: repeat('x', 1e6) FROM range(2500)", sql_call("SELECT repeat('x', 1000000) AS s FROM range(2500)")),
    (
        "SQL: a distinct 1 MB value a row, 2,500 rows",
        sql_call("SELECT repeat('x', 1000000 + (range % 2)::INT) AS s FROM range(2500)"),
    ),
    (
        "SQL: one value doubled 30 times (s || s)",
        sql_call(
            "WITH RECURSIVE t(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM t WHERE n < 30) "
            "SELECT length(s) AS l FROM t"
        ),
    ),
    ("SQL: 4 CPU-bound queries until their time limit", sql_heavy),
    ("HTTP: 24 x 25 MB bodies at once", http_bodies),
    ("HTTP: 6 gzip bodies of 120 KB (120 MB inflated)", gzip_bodies),
    ("gRPC: 12 x 60 MB messages at once", grpc_messages),
    ("1,100 stalled request heads, fd limit 1,024", stalled_connections),
    ("API: 8 x 300 MB bodies (feedback, kb, gold, labels)", api_bodies),
    ("amplified: 1 MB copied to 3-6k rows, HTTP x6", amplified_http),
    ("amplified: 1 MB copied to 3-6k rows, gRPC x3", amplified_grpc),
    ("1,000,000 log records in one request", million_rows("logs")),
    ("1,000,000 metric points in one request", million_rows("metrics")),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--tree", type=Path, default=ROOT, help="source tree of the server to run (default this one)"
    )
    ap.add_argument("--rss-cap", type=int, default=3 << 30, help="kill the server past this RSS (bytes)")
    ap.add_argument(
        "--loads",
        action="append",
        help="run only the loads whose name contains this text (e.g. SQL); may be given more than once",
    )
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a server setting for every load (its RAGFAULT_NAME variable), e.g. duckdb_threads=2",
    )
    ap.add_argument("--repeat", type=int, default=1, help="run each load this many times (default 1)")
    args = ap.parse_args()
    settings = dict(kv.split("=", 1) for kv in args.set)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    print(f"server tree: {args.tree}" + "".join(f", {k} = {v}" for k, v in settings.items()))
    print(f"{'load':48} {'peak RSS':>10}  {'probe (ingest latency)':44} {'load avg':>9}  result")
    chosen = [(n, f) for n, f in LOADS if not args.loads or any(w in n for w in args.loads)]
    for name, load in [c for c in chosen for _ in range(args.repeat)]:  # a fresh server each time
        srv = Server(args.tree, args.rss_cap, settings)
        try:
            with httpx.Client(base_url=srv.url, timeout=60) as client:  # warm up the decode path
                for _ in range(5):
                    client.post(
                        "/v1/traces", content=export_request(10).SerializeToString(), headers=PROTOBUF
                    )
            srv.reset_peak()
            before = os.getloadavg()[0]
            probe = Probe(srv.url)
            result = load(srv)
            lat = probe.stop()
            gone = " [KILLED past the RSS cap]" if srv.killed else " [server exited]"
            alive = "" if srv.proc.poll() is None else gone
            avg = f"{before:.1f}-{os.getloadavg()[0]:.1f}"  # the 1-minute load average, start-end
            print(
                f"{name:48} {srv.peak / MB:8.0f} MB  {lat:44} {avg:>9}  {result}{alive} ({srv.peaks()})",
                flush=True,
            )
        finally:
            srv.stop()


if __name__ == "__main__":
    main()
