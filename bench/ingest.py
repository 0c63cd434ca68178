#!/usr/bin/env python
"""Ingest benchmark: persisted spans per second and peak memory, ragfault against Arize Phoenix.

Every trace is RAG-shaped, in OpenInference attributes: a CHAIN root, a RETRIEVER returning 20
documents (``retrieval.documents.{i}.document.{id,content,score,metadata}``), a RERANKER keeping 5
(``reranker.input_documents`` / ``reranker.output_documents``) and an LLM call whose prompt
(``llm.input_messages``) is about 3 KB. The export requests are built and protobuf-encoded before the
clock starts; client threads then POST them to ``/v1/traces`` (OTLP/HTTP protobuf) as fast as the
server takes them, honouring 503 + Retry-After by waiting and re-sending.

The figure is **persisted** spans per second: spans sent / time from the first request until a count
of the stored spans reaches the total (polled through each system's own store), not until the
last acknowledgement. Peak RSS is the high-water mark (VmHWM) of the server process tree.

Run from the project root:

    .venv/bin/python bench/ingest.py                      # ragfault + Phoenix + overload check
    .venv/bin/python bench/ingest.py --skip-phoenix --traces 20000 --concurrency 4

Phoenix is installed into its own venv (``--phoenix-venv``, created with ``pip install arize-phoenix``
when missing) and run as ``phoenix serve`` with a temporary working directory. Results are printed and
written to bench/results/.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Self

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(ROOT))

from tests.served import free_ports, stop_process, wait_http  # noqa: E402

# --------------------------------------------------------------------------------------------------
# trace generation

_WORDS = [
    "refund",
    "policy",
    "within",
    "days",
    "of",
    "purchase",
    "customers",
    "may",
    "return",
    "items",
    "original",
    "packaging",
    "receipt",
    "warranty",
    "covers",
    "defects",
    "manufacturing",
    "shipping",
    "fees",
    "are",
    "non",
    "refundable",
    "store",
    "credit",
    "exchange",
    "international",
    "orders",
    "customs",
    "duties",
    "processing",
    "time",
    "business",
    "days",
    "approval",
    "email",
    "notification",
    "subscription",
    "cancel",
    "renewal",
    "billing",
    "cycle",
    "prorated",
    "account",
    "settings",
    "support",
    "ticket",
    "escalation",
]


def _text(rng: random.Random, n_chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < n_chars:
        w = rng.choice(_WORDS)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)[:n_chars]


def _kv(key: str, value: object) -> KeyValue:
    if isinstance(value, bool):
        return KeyValue(key=key, value=AnyValue(bool_value=value))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=str(value)))


def _docs(prefix: str, docs: list[tuple[str, str, float, str]]) -> list[KeyValue]:
    out = []
    for i, (doc_id, content, score, meta) in enumerate(docs):
        base = f"{prefix}.{i}.document."
        out += [
            _kv(base + "id", doc_id),
            _kv(base + "content", content),
            _kv(base + "score", score),
            _kv(base + "metadata", meta),
        ]
    return out


def rag_trace(rng: random.Random, t0_ns: int) -> list[Span]:
    """Four spans of one RAG request (about 4 KB a span on the wire)."""
    trace_id = rng.randbytes(16)
    ids = [rng.randbytes(8) for _ in range(4)]
    query = "How many days do I have to return an item bought with store credit? " + _text(rng, 40)
    answer = "You have 30 days from purchase to return an item. " + _text(rng, 120)
    candidates = []
    for i in range(20):
        doc = f"kb-{rng.randrange(10_000):05d}"
        meta = json.dumps({"doc_id": doc, "source": f"policies/{doc}.md", "version": rng.randrange(1, 5)})
        candidates.append((f"{doc}#c{i}", _text(rng, 130), round(1.0 - i * 0.03, 4), meta))
    kept = sorted(candidates[:10], key=lambda d: -d[2])[:5]
    system = "You are a support assistant. Answer only from the context below. " + _text(rng, 1900)
    context = "\n\n".join(d[1] for d in kept)
    prompt = f"Context:\n{context}\n\nQuestion: {query}"
    step = 50_000_000  # 50 ms
    common = [_kv("session.id", f"sess-{rng.randrange(1000)}"), _kv("user.id", f"user-{rng.randrange(100)}")]

    def span(i: int, parent: bytes, name: str, attrs: list[KeyValue], start: int, end: int) -> Span:
        return Span(
            trace_id=trace_id, span_id=ids[i], parent_span_id=parent, name=name, kind=Span.SPAN_KIND_INTERNAL,
            start_time_unix_nano=start, end_time_unix_nano=end, attributes=common + attrs,
            status=Status(code=Status.STATUS_CODE_OK),
        )  # fmt: skip

    root = span(0, b"", "rag.query", [
        _kv("openinference.span.kind", "CHAIN"), _kv("input.value", query), _kv("output.value", answer),
    ], t0_ns, t0_ns + 4 * step)  # fmt: skip
    retriever = span(1, ids[0], "retrieve", [
        _kv("openinference.span.kind", "RETRIEVER"), _kv("input.value", query),
        *_docs("retrieval.documents", candidates),
    ], t0_ns + 1, t0_ns + step)  # fmt: skip
    reranker = span(2, ids[0], "rerank", [
        _kv("openinference.span.kind", "RERANKER"), _kv("reranker.query", query), _kv("reranker.top_k", 5),
        _kv("reranker.model_name", "bench-cross-encoder"),
        *_docs("reranker.input_documents", [(d[0], d[1], d[2], "{}") for d in candidates[:10]]),
        *_docs("reranker.output_documents", [(d[0], "", d[2], "{}") for d in kept]),
    ], t0_ns + step, t0_ns + 2 * step)  # fmt: skip
    llm = span(3, ids[0], "llm", llm_attrs(system, prompt, answer), t0_ns + 2 * step, t0_ns + 4 * step)
    return [root, retriever, reranker, llm]


def llm_attrs(system: str, prompt: str, answer: str) -> list[KeyValue]:
    """The OpenInference attributes of the benchmark's LLM call (a system and a user message)."""
    return [
        _kv("openinference.span.kind", "LLM"), _kv("llm.model_name", "bench-llm"),
        _kv("llm.input_messages.0.message.role", "system"), _kv("llm.input_messages.0.message.content", system),
        _kv("llm.input_messages.1.message.role", "user"), _kv("llm.input_messages.1.message.content", prompt),
        _kv("llm.output_messages.0.message.role", "assistant"),
        _kv("llm.output_messages.0.message.content", answer),
        _kv("llm.token_count.prompt", 800), _kv("llm.token_count.completion", 60),
        _kv("llm.token_count.total", 860),
    ]  # fmt: skip


def build_requests(n_traces: int, per_request: int, seed: int) -> tuple[list[bytes], int]:
    """Pre-encoded ExportTraceServiceRequest bodies and the number of spans in them."""
    rng = random.Random(seed)
    t0 = time.time_ns() - 3600 * 10**9
    bodies = []
    spans = 0
    for start in range(0, n_traces, per_request):
        req = ExportTraceServiceRequest()
        rs = req.resource_spans.add()
        rs.resource.attributes.extend(
            [_kv("service.name", "bench-rag"), _kv("deployment.environment", "bench")]
        )
        ss = rs.scope_spans.add()
        ss.scope.name = "openinference.instrumentation.bench"
        ss.scope.version = "1.0"
        for i in range(start, min(start + per_request, n_traces)):
            trace = rag_trace(rng, t0 + i * 1_000_000)
            ss.spans.extend(trace)
            spans += len(trace)
        bodies.append(req.SerializeToString())
    return bodies, spans


# --------------------------------------------------------------------------------------------------
# processes and memory


def _status_kb(pid: int, field_name: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree(pid: int) -> list[int]:
    """pid and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def _cpu_ticks(pid: int) -> int:
    """utime + stime of a process, in clock ticks."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return 0


class Sampler:
    """Calls ``sample`` at ``start``, every 0.2 s on a thread of its own, and at ``stop``."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.sample()

    def start(self) -> Self:
        self.sample()
        self._t.start()
        return self

    def stop(self) -> None:
        self.sample()
        self._stop.set()
        self._t.join()


class MemWatch(Sampler):
    """Samples the process tree: peak RSS (sum of VmHWM of every process seen), current RSS and
    the CPU time the tree used since ``start`` (decode worker processes included)."""

    def __init__(self, pid: int) -> None:
        super().__init__()
        self.pid = pid
        self.hwm: dict[int, int] = {}
        self.cpu_base: dict[int, int] | None = None
        self.cpu_last: dict[int, int] = {}
        self.peak_rss_sum_kb = 0

    def sample(self) -> None:
        total = 0
        tree = _tree(self.pid)
        for p in tree:
            self.cpu_last[p] = max(self.cpu_last.get(p, 0), _cpu_ticks(p))
        if self.cpu_base is None:
            self.cpu_base = dict(self.cpu_last)
        for p in tree:
            hwm = _status_kb(p, "VmHWM")
            if hwm:
                self.hwm[p] = max(self.hwm.get(p, 0), hwm)
            total += _status_kb(p, "VmRSS")
        self.peak_rss_sum_kb = max(self.peak_rss_sum_kb, total)

    @property
    def peak_mb(self) -> float:
        """Peak resident memory of the tree: the larger of summed high-water marks and sampled sums."""
        return max(sum(self.hwm.values()), self.peak_rss_sum_kb) / 1024

    @property
    def server_peak_mb(self) -> float:
        """Peak resident memory of the process watched alone (its high-water mark), no workers."""
        return self.hwm.get(self.pid, 0) / 1024

    @property
    def cpu_seconds(self) -> float:
        base = self.cpu_base or {}
        return sum(v - base.get(p, 0) for p, v in self.cpu_last.items()) / os.sysconf("SC_CLK_TCK")

    @property
    def cpu_main_seconds(self) -> float:
        """CPU time of the server process alone (HTTP, hand-offs, the DuckDB writer), no workers."""
        base = self.cpu_base or {}
        return (self.cpu_last.get(self.pid, 0) - base.get(self.pid, 0)) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        return sum(_status_kb(p, "VmRSS") for p in _tree(self.pid)) / 1024


# --------------------------------------------------------------------------------------------------
# load


@dataclass
class SendStats:
    requests: int = 0
    retries_503: int = 0
    errors: int = 0
    other_status: dict[int, int] = field(default_factory=dict)
    last_ack: float = 0.0


class Exporter:
    """One client connection POSTing export bodies to /v1/traces as an OTLP exporter would: a body
    answered 429 or 503 is sent again after Retry-After, a broken connection is replaced and the
    body sent again. Counts go to ``stats`` (shared by the threads of a load, under ``lock``)."""

    def __init__(self, port: int, stats: SendStats, lock: threading.Lock) -> None:
        self.port, self.stats, self.lock = port, stats, lock
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def post(self, body: bytes, deadline: float = float("inf")) -> int | None:
        """The final status of this body (None: the deadline passed first)."""
        stats, lock = self.stats, self.lock
        while time.monotonic() < deadline:
            try:
                self.conn.request("POST", "/v1/traces", body=body, headers=_PROTOBUF)
                resp = self.conn.getresponse()
                resp.read()
            except (OSError, http.client.HTTPException):
                with lock:
                    stats.errors += 1
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                time.sleep(0.5)
                continue
            if resp.status in (429, 503):
                with lock:
                    stats.retries_503 += 1
                retry = resp.getheader("Retry-After") or "1"
                time.sleep(float(retry) if retry.replace(".", "", 1).isdigit() else 1.0)
                continue
            with lock:
                if resp.status == 200:
                    stats.requests += 1
                    stats.last_ack = time.monotonic()
                else:
                    stats.other_status[resp.status] = stats.other_status.get(resp.status, 0) + 1
            return resp.status
        return None

    def close(self) -> None:
        self.conn.close()


_PROTOBUF = {"Content-Type": "application/x-protobuf"}


def send_all(port: int, bodies: list[bytes], concurrency: int, deadline: float) -> SendStats:
    """POST every body to /v1/traces from ``concurrency`` threads (``Exporter``)."""
    stats = SendStats()
    lock = threading.Lock()
    it = iter(range(len(bodies)))

    def worker() -> None:
        exporter = Exporter(port, stats, lock)
        while True:
            with lock:
                i = next(it, None)
            if i is None:
                break
            exporter.post(bodies[i], deadline)
        exporter.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return stats


@dataclass
class Result:
    system: str
    spans: int
    persisted: int
    seconds: float
    ack_seconds: float
    spans_per_s: float
    peak_rss_mb: float
    idle_rss_mb: float
    retries_503: int
    errors: int
    concurrency: int
    note: str = ""
    cpu_seconds: float = 0.0  # CPU time of the server's process tree during the run
    cpu_main_seconds: float = 0.0  # of which the server process itself (not its decode workers)
    client_cpu_seconds: float = 0.0  # CPU time of this benchmark process (the clients) during the run
    commits: int = 0  # ragfault: transactions the writer committed (coalesced requests)
    write_seconds: float = 0.0  # ragfault: time the writer spent in those commits


def run_load(
    system: str,
    port: int,
    pid: int,
    count_fn,
    bodies: list[bytes],
    total: int,
    concurrency: int,
    timeout: float,
    poll: float = 0.05,
) -> Result:
    mem = MemWatch(pid).start()
    idle = mem.rss_mb()
    client_cpu = time.process_time()
    start = time.monotonic()
    deadline = start + timeout
    stats_box: list[SendStats] = []
    sender = threading.Thread(target=lambda: stats_box.append(send_all(port, bodies, concurrency, deadline)))
    sender.start()
    persisted = 0
    while time.monotonic() < deadline:
        try:
            persisted = count_fn(total)
        except Exception:  # a store busy with writes may refuse a read now and then
            persisted = persisted
        if persisted >= total:
            break
        time.sleep(poll)
    elapsed = time.monotonic() - start
    sender.join(max(0.0, deadline - time.monotonic()) + 5)
    mem.stop()
    client_cpu = time.process_time() - client_cpu
    stats = stats_box[0] if stats_box else SendStats()
    note = "" if persisted >= total else f"timed out: {persisted}/{total} persisted"
    if stats.other_status:
        note += f" other statuses {stats.other_status}"
    return Result(
        system=system, spans=total, persisted=persisted, seconds=elapsed,
        ack_seconds=(stats.last_ack - start) if stats.last_ack else float("nan"),
        spans_per_s=persisted / elapsed if elapsed else 0.0, peak_rss_mb=mem.peak_mb, idle_rss_mb=idle,
        retries_503=stats.retries_503, errors=stats.errors, concurrency=concurrency, note=note.strip(),
        cpu_seconds=mem.cpu_seconds, cpu_main_seconds=mem.cpu_main_seconds, client_cpu_seconds=client_cpu,
    )  # fmt: skip


# --------------------------------------------------------------------------------------------------
# ragfault


def ragfault_bin() -> list[str]:
    exe = Path(sys.executable).parent / "ragfault"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "ragfault.cli"]


def config_toml(config: dict[str, object]) -> str:
    """``config`` as a ragfault.toml: ``section.name`` keys in their section ("evaluation.workers" goes
    to [evaluation]), the rest in [server]."""
    sections: dict[str, list[str]] = {"server": []}
    for key, value in config.items():
        section, _, name = key.rpartition(".")
        sections.setdefault(section or "server", []).append(f"{name} = {json.dumps(value)}")
    return "".join(f"[{name}]\n" + "".join(line + "\n" for line in lines) for name, lines in sections.items())


def start_ragfault(
    workdir: Path, config: dict[str, object], command: list[str] | None = None
) -> tuple[subprocess.Popen, int, Path]:
    port, grpc = free_ports(2)
    cfg = workdir / "ragfault.toml"
    cfg.write_text(config_toml(config))
    log = workdir / "ragfault.log"
    cmd = (command or ragfault_bin()) + [
        "serve", "--db", str(workdir / "bench.duckdb"), "--http-port", str(port), "--grpc-port", str(grpc),
        "--config", str(cfg),
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=workdir)
    wait_http(f"http://127.0.0.1:{port}/healthz", proc, 60, log)
    return proc, port, log


def writer_stats(port: int) -> tuple[int, float]:
    """(commits, seconds spent committing) from the server's ``ragfault_write_seconds`` summary."""
    commits, seconds = 0, 0.0
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            for line in r.read().decode().splitlines():
                if line.startswith("ragfault_write_seconds_count"):
                    commits = int(float(line.split()[-1]))
                elif line.startswith("ragfault_write_seconds_sum"):
                    seconds = float(line.split()[-1])
    except (urllib.error.URLError, OSError, ValueError):
        pass
    return commits, seconds


def ragfault_count(port: int):
    """Spans stored, as a query sees them.

    While the load runs, the cheap ``ragfault_spans_stored_total`` counter of ``/metrics`` is polled
    (the writer adds to it after COMMIT, so those spans are queryable); once it reaches the total,
    ``SELECT count(*) FROM spans`` through the SQL API confirms it. Polling the SQL API itself 20
    times a second cost the server ~5 % of its CPU in this benchmark.
    """
    body = json.dumps({"sql": "SELECT count(*) FROM spans"}).encode()
    seen = 0

    def sql_count() -> int:
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/v1/sql", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            return int(json.load(r)["rows"][0][0])

    def count(total: int) -> int:
        nonlocal seen
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
            for line in r.read().decode().splitlines():
                if line.startswith("ragfault_spans_stored_total"):
                    seen = int(float(line.split()[-1]))
        return sql_count() if seen >= total else seen

    return count


def bench_ragfault(args, bodies: list[bytes], total: int, workdir: Path, profile: bool) -> Result:
    config: dict[str, object] = {"log_level": "warning"}
    if args.decode_workers is not None:
        config["decode_workers"] = args.decode_workers
    config.update(_settings(args.set))
    proc, port, log = start_ragfault(workdir, config)
    spy = None
    try:
        if profile:
            spy = start_pyspy(proc.pid, RESULTS / "ragfault-profile.txt")
        res = run_load(
            "ragfault", port, proc.pid, ragfault_count(port), bodies, total, args.concurrency, args.timeout
        )
        res.commits, res.write_seconds = writer_stats(port)
        return res
    finally:
        if spy is not None:
            spy.send_signal(2)
            try:
                spy.wait(30)
            except subprocess.TimeoutExpired:
                spy.kill()
        stop_process(proc)


def bench_overload(args, bodies: list[bytes], total: int, workdir: Path) -> Result:
    """A queue far smaller than what clients push: memory must stay flat, the excess gets 503."""
    config: dict[str, object] = {
        "log_level": "warning",
        "max_queue_spans": args.overload_queue,
        "max_batch_spans": args.overload_queue,
    }
    if args.decode_workers is not None:
        config["decode_workers"] = args.decode_workers
    config.update(_settings(args.set))
    proc, port, _ = start_ragfault(workdir, config)
    try:
        res = run_load(
            "ragfault (overload)", port, proc.pid, ragfault_count(port), bodies, total,
            args.overload_concurrency, args.timeout,
        )  # fmt: skip
        res.note = (res.note + f" max_queue_spans={args.overload_queue}").strip()
        return res
    finally:
        stop_process(proc)


def _settings(pairs: list[str]) -> dict[str, object]:
    """``--set key=value`` pairs as settings (values parsed as JSON when they are JSON): ``[server]``
    unless the key names its section (``evaluation.workers=0``)."""
    out: dict[str, object] = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        try:
            out[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            out[key.strip()] = raw
    return out


def start_pyspy(pid: int, out: Path) -> subprocess.Popen | None:
    exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(exe).exists() and not shutil.which("py-spy"):
        print("py-spy not found; install it into the venv to profile", file=sys.stderr)
        return None
    cmd = [exe, "record", "--pid", str(pid), "--format", "raw", "--threads", "--rate", "200", "-o", str(out)]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# --------------------------------------------------------------------------------------------------
# Phoenix


def peer_venv(venv: Path, packages: Sequence[str], exe: str) -> Path:
    """``venv/bin/exe`` of a peer's own virtual environment, created with ``pip install packages``
    when missing (a peer's dependencies stay out of the project's)."""
    path = venv / "bin" / exe
    if path.exists():
        return path
    print(f"creating {venv} and installing {' '.join(packages)} (one time) ...", flush=True)
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *packages], check=True)
    return path


def ensure_phoenix(venv: Path) -> Path:
    return peer_venv(venv, ["arize-phoenix"], "phoenix")


def bench_phoenix(args, bodies: list[bytes], total: int, workdir: Path) -> Result:
    exe = ensure_phoenix(Path(args.phoenix_venv))
    port, grpc = free_ports(2)
    env = dict(os.environ)
    env.update(
        PHOENIX_WORKING_DIR=str(workdir), PHOENIX_PORT=str(port), PHOENIX_GRPC_PORT=str(grpc),
        PHOENIX_HOST="127.0.0.1", PHOENIX_TELEMETRY_ENABLED="false",
    )  # fmt: skip
    log = workdir / "phoenix.log"
    proc = subprocess.Popen(
        [str(exe), "serve"], stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, cwd=workdir
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc, 180, log, ready=lambda status: status < 500)
        db = workdir / "phoenix.db"

        def count(total: int) -> int:
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            try:
                return int(con.execute("SELECT count(*) FROM spans").fetchone()[0])
            finally:
                con.close()

        return run_load(
            "phoenix", port, proc.pid, count, bodies, total, args.concurrency, args.timeout, poll=0.5
        )
    finally:
        stop_process(proc)


# --------------------------------------------------------------------------------------------------


def table(results: list[Result]) -> str:
    head = "| system | spans | seconds | persisted spans/s | peak RSS MB | idle RSS MB | 503s | clients |"
    lines = [head, "|" + "---|" * 8]
    for r in results:
        lines.append(
            f"| {r.system} | {r.persisted}/{r.spans} | {r.seconds:.2f} | {r.spans_per_s:,.0f} | "
            f"{r.peak_rss_mb:,.0f} | {r.idle_rss_mb:,.0f} | {r.retries_503} | {r.concurrency} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--traces", type=int, default=10_000, help="traces sent to ragfault (4 spans each)")
    p.add_argument(
        "--phoenix-traces",
        type=int,
        default=1_000,
        help="traces sent to Phoenix (it is ~100x slower; the rate is what is compared)",
    )
    p.add_argument(
        "--traces-per-request",
        type=int,
        default=128,
        help="traces in one export request (128 = 512 spans, the OTel SDK's default export batch)",
    )
    p.add_argument("--concurrency", type=int, default=4, help="client threads sending at once")
    p.add_argument("--repeat", type=int, default=1, help="ragfault runs (the median is reported)")
    p.add_argument("--skip-phoenix", action="store_true")
    p.add_argument("--skip-overload", action="store_true")
    p.add_argument("--phoenix-venv", default=str(HERE / ".phoenix-venv"), help="venv holding arize-phoenix")
    p.add_argument("--overload-queue", type=int, default=1_000, help="max_queue_spans of the overload run")
    p.add_argument("--overload-concurrency", type=int, default=16, help="client threads of the overload run")
    p.add_argument("--timeout", type=float, default=600, help="seconds before a run gives up")
    p.add_argument(
        "--profile", action="store_true", help="record the ragfault server with py-spy (raw stacks)"
    )
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a ragfault setting for the runs, [server] unless SECTION.KEY: --set duckdb_threads=1, --set evaluation.workers=0 (repeatable)",
    )
    p.add_argument(
        "--decode-workers",
        type=int,
        default=None,
        help="ragfault's decode_workers setting (default: the server's own default)",
    )
    args = p.parse_args(argv)

    RESULTS.mkdir(exist_ok=True)
    t = time.monotonic()
    bodies, total = build_requests(args.traces, args.traces_per_request, args.seed)
    wire = sum(map(len, bodies))
    print(f"built {len(bodies)} requests, {total} spans, {wire / total:,.0f} bytes/span "
          f"on the wire, in {time.monotonic() - t:.1f}s", flush=True)  # fmt: skip

    results: list[Result] = []
    runs: list[Result] = []
    for i in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="ragfault-bench-") as d:
            r = bench_ragfault(args, bodies, total, Path(d), args.profile and i == 0)
        print(f"ragfault run {i + 1}: {r.spans_per_s:,.0f} spans/s persisted ({r.seconds:.2f}s), "
              f"peak RSS {r.peak_rss_mb:,.0f} MB, server CPU {r.cpu_seconds:.1f}s "
              f"({r.cpu_seconds / max(1, r.persisted) * 1e6:,.0f} us/span; server process alone "
              f"{r.cpu_main_seconds / max(1, r.persisted) * 1e6:,.0f}; clients "
              f"{r.client_cpu_seconds / max(1, r.persisted) * 1e6:,.0f}); {r.commits} commits of "
              f"{r.persisted / max(1, r.commits):,.0f} spans, writer busy {r.write_seconds:.2f}s {r.note}", flush=True)  # fmt: skip
        runs.append(r)
    med = sorted(runs, key=lambda r: r.spans_per_s)[len(runs) // 2]
    if len(runs) > 1:
        med.note = (
            med.note + f" median of {len(runs)}: " + ", ".join(f"{r.spans_per_s:,.0f}" for r in runs)
        ).strip()
    results.append(med)

    if not args.skip_phoenix:
        pbodies, ptotal = build_requests(args.phoenix_traces, args.traces_per_request, args.seed + 1)
        with tempfile.TemporaryDirectory(prefix="phoenix-bench-") as d:
            try:
                r = bench_phoenix(args, pbodies, ptotal, Path(d))
            except Exception as exc:  # report, do not hide the ragfault figures
                print(f"phoenix run failed: {exc}", file=sys.stderr)
                r = None
        if r is not None:
            print(f"phoenix: {r.spans_per_s:,.0f} spans/s persisted ({r.seconds:.2f}s), "
                  f"peak RSS {r.peak_rss_mb:,.0f} MB {r.note}", flush=True)  # fmt: skip
            results.append(r)

    if not args.skip_overload:
        with tempfile.TemporaryDirectory(prefix="ragfault-overload-") as d:
            r = bench_overload(args, bodies, total, Path(d))
        print(f"overload: peak RSS {r.peak_rss_mb:,.0f} MB, {r.retries_503} x 503, "
              f"{r.persisted}/{r.spans} persisted {r.note}", flush=True)  # fmt: skip
        results.append(r)

    print()
    print(table(results))
    rf = results[0]
    ph = next((r for r in results if r.system == "phoenix"), None)
    if ph is not None and ph.spans_per_s:
        print(f"\nragfault / Phoenix persisted spans/s: {rf.spans_per_s / ph.spans_per_s:,.1f}x; "
              f"peak RSS ragfault {rf.peak_rss_mb:,.0f} MB vs Phoenix {ph.peak_rss_mb:,.0f} MB")  # fmt: skip
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = RESULTS / f"ingest-{stamp}.json"
    out.write_text(json.dumps({
        "args": {k: v for k, v in vars(args).items() if k != "phoenix_venv"},
        "bytes_per_span": wire / total, "cpus": os.cpu_count(),
        "results": [asdict(r) for r in results], "ragfault_runs": [asdict(r) for r in runs],
    }, indent=2))  # fmt: skip
    print(f"\nwritten {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
