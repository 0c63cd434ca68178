"""The demo loop: start a collector, load the knowledge base and gold set, run the sample app with a
real OpenTelemetry exporter, wait until every trace is evaluated, report."""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from collector.config import ServerSettings
from collector.store import verdicts
from collector.store.reader import cursor_query
from ragfault.dbfile import mark_demo, prepare_demo_file
from ragfault.demo.app import HelpdeskApp, ScriptedLLM
from ragfault.demo.scenarios import RUN_ID, SCENARIOS, chunks_for, read_jsonl
from ragfault.server import ServerThread


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class DemoResult:
    db: str
    traces: int
    seconds: float
    server: ServerThread | None = None


def run_app(endpoint: str, service: str = "helpdesk-demo") -> int:
    """Run every scenario through the instrumented sample app, exporting to ``endpoint``."""
    provider = TracerProvider(resource=Resource.create({"service.name": service, "service.version": "1.0"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces")))
    kb = {str(d["doc_id"]): d for d in read_jsonl("kb.jsonl")}
    llm = ScriptedLLM({s.question: s.answer for s in SCENARIOS})
    app = HelpdeskApp(provider.get_tracer("ragfault.demo.helpdesk"), llm)
    for s in SCENARIOS:
        app.answer(
            s.question,
            chunks_for(s, kb),
            user_scope=s.user_scope,
            keep=s.keep,
            search=s.search,
            citations=s.citations,
            case_id=s.case_id,
            run_id=RUN_ID if s.case_id else None,
        )
    provider.force_flush()
    provider.shutdown()
    return len(SCENARIOS)


def run_demo(
    db: str | Path, *, keep_server: bool = False, timeout: float = 60.0, force: bool = False
) -> DemoResult:
    """Fill a new demo database at ``db``. An earlier demo's database there is replaced only with
    ``force``; any other file is refused (``ragfault.dbfile.prepare_demo_file``)."""
    db = Path(db)
    prepare_demo_file(db, force=force)
    mark_demo(db)
    t0 = time.monotonic()
    settings = ServerSettings(
        db=str(db),
        http_port=free_port(),
        grpc_port=free_port(),
        settle_seconds=0.5,
        memory_limit="1GB",
        decode_workers=0,  # a few dozen spans: worker processes would only add startup time
    )
    server = ServerThread(settings).start()
    url = f"http://127.0.0.1:{server.http_port}"
    try:
        import httpx

        from ragfault.demo import scenarios as sc

        with httpx.Client(base_url=url, timeout=60) as http:
            for path, name in (
                ("/api/v1/kb", "kb.jsonl"),
                ("/api/v1/gold?dataset=helpdesk-demo", "gold.jsonl"),
            ):
                body = (Path(sc.__file__).parent / name).read_bytes()
                r = http.post(path, content=body)
                r.raise_for_status()
        n = run_app(url)
        _wait_evaluated(server, n, timeout)
    except BaseException:
        server.stop()
        raise
    if not keep_server:
        server.stop()
        server = None  # type: ignore[assignment]
    return DemoResult(str(db), n, time.monotonic() - t0, server)


def _wait_evaluated(server: ServerThread, n: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    con = server.runtime.store.cursor()
    try:
        while time.monotonic() < deadline:
            row = verdicts.progress(cursor_query(con, row_cap=1))
            svc: Any = getattr(server.runtime, "evaluation", None)
            if row[0] >= n and row[1] >= n and (svc is None or svc.idle()):
                return
            time.sleep(0.1)
    finally:
        con.close()
    raise TimeoutError(f"traces were not all evaluated within {timeout:g} s")
