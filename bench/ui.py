#!/usr/bin/env python
"""Web UI benchmark: how fast the dashboard, the trace list and a trace view answer and render with
100,000 evaluated traces stored.

The database is bench/evaluate.py's (four-span RAG traces in OpenInference attributes, half English
and half Chinese, every trace with a gold case, a few hundred KB documents), written without the
network path and evaluated with a pool of worker processes; the traces' start times are then spread
over seven days so the trend has buckets. None of that is timed. Then a real server
(``ragfault.server.ServerThread``) opens the file and:

- **API**: each call the page makes (``/api/v1/ui/overview``, ``/dashboard``, ``/cases``, ``/traces``,
  ``/traces/{id}/view``) is timed from this process over HTTP, the first call apart (cold: DuckDB reads
  the file, the dashboard computes its facts) and the median and worst of the next ``--repeat``; the
  trace list before the dashboard (its pages then find their root causes alone); then 400 traces are
  evaluated again (``POST /api/v1/evaluate``) and the dashboard timed once more (its facts follow). A
  call answered 202 (the facts are being computed in the background) is made again until it answers
  with the data, and timed to then;
- **restart**: a new server on the same file, its first dashboard call and trace-list page: the time
  of the first answer and until the data (the facts were saved when the first server stopped);
- **render**: Debian's chromium (Playwright) opens each page and the time from navigation until the page
  has drawn its data (``document.body.dataset.ready``) is taken, first load and median of the next.

Run from the project root:

    .venv/bin/python bench/ui.py                   # 100,000 traces
    .venv/bin/python bench/ui.py --traces 10000 --keep /tmp/ui-bench.duckdb

The goal: every API call under 300 ms and every page drawn under 1 s. Figures and the load average
at start and end are printed and written to bench/results/ui.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # progress shows as it happens

import httpx  # noqa: E402

from bench.evaluate import build_db, trace_ids  # noqa: E402
from collector.config import ServerSettings  # noqa: E402
from collector.normalize import DEFAULT_SOURCE_KEYS  # noqa: E402
from evaluators.service.config import EvaluationSettings, evaluator_configs  # noqa: E402
from evaluators.service.pool import EvalPool  # noqa: E402
from evaluators.service.registry import discover  # noqa: E402
from evaluators.service.runner import Runner, StoreRunner  # noqa: E402
from tests.served import free_ports  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
API_GOAL_MS, RENDER_GOAL_MS = 300, 1000


def build(path: str, n: int, workers: int) -> dict[str, float]:
    t = time.perf_counter()
    local, timings = build_db(path, n, 400, 7)
    try:
        specs = discover()
        runner = StoreRunner(
            local.store.cursor(), local.write, Runner(specs, evaluator_configs(EvaluationSettings(), specs)),
            DEFAULT_SOURCE_KEYS,
        )  # fmt: skip
        runner.refs.refresh(runner.cursor)
        t_eval = time.perf_counter()
        ids = trace_ids(local)
        if workers:
            with EvalPool(workers, runner.runner, DEFAULT_SOURCE_KEYS) as pool:
                pool.start()
                runner.evaluate_many(ids, 500, pool)
        else:
            for i in range(0, len(ids), 500):
                runner.evaluate(ids[i : i + 500])
        timings["evaluate_s"] = time.perf_counter() - t_eval
        # seven days of traffic: each trace moves back by its rank x (7 days / n)
        step_us = int(7 * 86400 * 1e6 / n)
        local.store.con.execute(
            "UPDATE traces SET start_time = start_time - to_microseconds(r.k * $s), end_time = end_time - to_microseconds(r.k * $s) "
            "FROM (SELECT trace_id, row_number() OVER (ORDER BY start_time, trace_id) AS k FROM traces) r "
            "WHERE traces.trace_id = r.trace_id",
            {"s": step_us},
        )
        local.store.con.execute("CHECKPOINT")
    finally:
        local.close()
    timings["total_s"] = time.perf_counter() - t
    return timings


def get_ready(http: httpx.Client, path: str) -> tuple[float, float]:
    """(ms until the first answer, ms until the data): a call answered 202 (the dashboard's facts are
    being computed in the background) is made again until it answers with the data."""
    t = time.perf_counter()
    r = http.get(path)
    first = (time.perf_counter() - t) * 1000
    while r.status_code == 202:
        time.sleep(0.1)
        r = http.get(path)
    r.raise_for_status()
    return first, (time.perf_counter() - t) * 1000


def time_api(http: httpx.Client, path: str, repeat: int) -> dict[str, float]:
    def once() -> float:
        return get_ready(http, path)[1]

    cold = once()
    warm = [once() for _ in range(repeat)]
    return {"cold_ms": cold, "median_ms": statistics.median(warm), "max_ms": max(warm)}


def time_pages(url: str, routes: list[tuple[str, str]], repeat: int) -> dict[str, dict[str, float]]:
    from playwright.sync_api import sync_playwright

    out: dict[str, dict[str, float]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(f"{url}/ui#/start")
        # a function, not a string to evaluate: the UI's CSP forbids string evaluation
        page.wait_for_function("(name) => document.body.dataset.ready === name", arg="start")
        for label, route in routes:
            times = []
            for _ in range(repeat + 1):
                page.goto("about:blank")
                t = time.perf_counter()
                page.goto(f"{url}/ui#/{route}")
                page.wait_for_function(
                    "(name) => document.body.dataset.ready === name",
                    arg=route.split("?")[0].split("/")[0],
                    timeout=60_000,
                )
                times.append((time.perf_counter() - t) * 1000)
            out[label] = {
                "first_ms": times[0],
                "median_ms": statistics.median(times[1:]),
                "max_ms": max(times[1:]),
            }
        browser.close()
        if errors:
            print("console errors:", errors[:5])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=2, help="evaluation worker processes while building")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--keep", help="keep the built database at this path (reused when it exists)")
    ap.add_argument("--out", default=str(RESULTS / "ui.json"))
    args = ap.parse_args()

    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ragfault-bench-ui-") as tmp:
        db = os.path.join(tmp, "ui.duckdb")
        if args.keep and Path(args.keep).exists():
            shutil.copy(args.keep, db)
            built: dict[str, float] = {}
            print(f"reusing {args.keep}")
        else:
            built = build(db, args.traces, args.workers)
            print(
                f"built and evaluated {args.traces:,} traces: "
                + ", ".join(f"{k} {v:.1f}" for k, v in built.items())
            )
            if args.keep:
                shutil.copy(db, args.keep)
        from ragfault.server import ServerThread

        http_port, grpc_port = free_ports(2)

        def serve() -> ServerThread:
            settings = ServerSettings(db=db, http_port=http_port, grpc_port=grpc_port, memory_limit="2GB")
            return ServerThread(settings).start()

        server = serve()
        url = f"http://127.0.0.1:{server.http_port}"
        try:
            with httpx.Client(base_url=url, timeout=120) as http:
                rows = http.post(
                    "/api/v1/sql",
                    json={
                        "sql": "SELECT count(*), count(*) FILTER (WHERE evaluated_at IS NOT NULL) FROM traces"
                    },
                ).json()["rows"][0]
                middle = http.get(f"/api/v1/ui/traces?limit=1&offset={rows[0] // 2}").json()["rows"]
                tid = middle[0]["trace_id"]
                # the trace list first: until the dashboard has computed its facts, a page of the
                # trace list finds its root causes alone
                calls = {
                    "overview": "/api/v1/ui/overview",
                    "traces, first page": "/api/v1/ui/traces?limit=50",
                    "traces, last page": f"/api/v1/ui/traces?limit=50&offset={rows[0] - 50}",
                    "traces, text search": "/api/v1/ui/traces?limit=50&q=refund",
                    "dashboard": "/api/v1/ui/dashboard",
                    "dashboard by hour": "/api/v1/ui/dashboard?bucket=hour",
                    "traces, one root cause": "/api/v1/ui/traces?limit=50&root_cause=unsupported_claims",
                    "cases, first page": "/api/v1/ui/cases?limit=25",
                    "cases, one root cause": "/api/v1/ui/cases?limit=25&root_cause=dropped_before_context",
                    "cases, last page": "/api/v1/ui/cases?limit=25&sort=case_id&offset=" + str(rows[0] - 25),
                    "trace view": f"/api/v1/traces/{tid}/view",
                }
                api = {label: time_api(http, path, args.repeat) for label, path in calls.items()}
                # traces evaluated again, as a server does all day: the next dashboard call follows
                again = [
                    r["trace_id"]
                    for r in http.get(f"/api/v1/ui/traces?limit=200&offset={rows[0] // 100}").json()["rows"]
                ]
                again += [
                    r["trace_id"]
                    for r in http.get(f"/api/v1/ui/traces?limit=200&offset={rows[0] // 2}").json()["rows"]
                ]
                t = time.perf_counter()
                http.post("/api/v1/evaluate", json={"trace_ids": again}).raise_for_status()
                print(f"{len(again)} traces evaluated again in {time.perf_counter() - t:.1f} s")
                api[f"dashboard, {len(again)} traces evaluated again"] = time_api(
                    http, "/api/v1/ui/dashboard", args.repeat
                )
            pages = time_pages(
                url,
                [("dashboard", "dashboard"), ("trace list", "traces"), ("trace view", f"trace/{tid}")],
                args.repeat,
            )
        finally:
            server.stop()
        # the same file opened by a new server: its first calls (the facts saved at stop, if kept)
        server = serve()
        url = f"http://127.0.0.1:{server.http_port}"
        restart: dict[str, dict[str, float]] = {}
        try:
            with httpx.Client(base_url=url, timeout=120) as http:
                for label, path in (
                    ("dashboard", "/api/v1/ui/dashboard"),
                    ("traces, first page", "/api/v1/ui/traces?limit=50"),
                ):
                    first, ready = get_ready(http, path)
                    restart[label] = {"first_answer_ms": first, "data_ms": ready}
        finally:
            server.stop()

    load = {"start": load_start, "end": os.getloadavg()}
    print(f"\n{rows[0]:,} traces ({rows[1]:,} evaluated), {os.cpu_count()} cores")
    print(
        "load average (1, 5, 15 min): "
        + ", ".join(" / ".join(f"{x:.1f}" for x in v) + f" at {k}" for k, v in load.items())
    )
    print(f"{'API call':<40}{'cold ms':>10}{'median ms':>11}{'max ms':>9}")
    for label, r in api.items():
        flag = "" if r["median_ms"] < API_GOAL_MS else f"  over {API_GOAL_MS} ms"
        print(f"{label:<40}{r['cold_ms']:>10.0f}{r['median_ms']:>11.0f}{r['max_ms']:>9.0f}{flag}")
    print(f"\n{'after a restart, first call':<40}{'answer ms':>10}{'data ms':>11}")
    for label, r in restart.items():
        print(f"{label:<40}{r['first_answer_ms']:>10.0f}{r['data_ms']:>11.0f}")
    print(f"\n{'page drawn':<40}{'first ms':>10}{'median ms':>11}{'max ms':>9}")
    for label, r in pages.items():
        flag = "" if r["median_ms"] < RENDER_GOAL_MS else f"  over {RENDER_GOAL_MS} ms"
        print(f"{label:<40}{r['first_ms']:>10.0f}{r['median_ms']:>11.0f}{r['max_ms']:>9.0f}{flag}")
    RESULTS.mkdir(exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {
                "traces": rows[0],
                "evaluated": rows[1],
                "cores": os.cpu_count(),
                "load_average": load,
                "build": built,
                "api": api,
                "restart": restart,
                "pages": pages,
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
