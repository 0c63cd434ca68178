#!/usr/bin/env python
"""Refresh the web UI screenshots in docs/screenshots/: the demo run through a real server, a second run
of the demo app (so two runs compare) and judge verdicts of two versions (so the review queue has
items), each page opened in Debian's chromium at 1,280 px wide. The demo has no production traffic:
the Live and Triage pages are taken on a server of their own that receives the planted root causes
of the attribution tests as live traces, with their registry and a few thumbs-down
(``tests/ui/live_data.py``; offline, the same traces every time).

Run from the project root: ``.venv/bin/python docs/screenshots.py``
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragfault.demo.run import free_port, run_demo  # noqa: E402
from tests.ui.data import RUN2, add_judge_verdicts, send_second_run  # noqa: E402
from tests.ui.live_data import send_feedback, send_live_traffic  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
EVALUATED = "SELECT count(*) FROM traces WHERE evaluated_at IS NOT NULL AND list_contains(?, trace_id)"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


def label_some(url: str) -> None:
    import httpx

    items = httpx.get(f"{url}/api/v1/ui/review?size=8").json()["items"]
    flip = {"supported": "unsupported", "unsupported": "supported", "contradicted": "unsupported"}
    labels = [
        {"trace_id": i["trace_id"], "metric": i["metric"], "claim": i["claim"], "annotator": "docs",
         "label": flip.get(i["label"], "supported") if k % 4 == 0 else i["label"]}
        for k, i in enumerate(items)
    ]  # fmt: skip
    httpx.post(f"{url}/api/v1/labels", json=labels).raise_for_status()


def wait_evaluated(server: Any, ids: list[str], timeout: float = 60) -> None:
    """Until every one of ``ids`` is settled and evaluated."""
    import time

    con = server.runtime.store.cursor()
    try:
        deadline = time.monotonic() + timeout
        while con.execute(EVALUATED, [ids]).fetchall()[0][0] < len(ids):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the live traces were not evaluated in {timeout:.0f} s")
            time.sleep(0.2)
    finally:
        con.close()


def shoot(page: Any, base: str, route: str, ready: str, name: str, full_page: bool = True) -> None:
    page.goto("about:blank")
    page.goto(f"{base}/ui#/{route}")
    page.wait_for_function("(name) => document.body.dataset.ready === name", arg=ready)
    page.screenshot(path=str(OUT / f"{name}.png"), full_page=full_page)
    print("wrote", OUT / f"{name}.png")


def main() -> int:
    import time

    from playwright.sync_api import sync_playwright

    from collector.config import ServerSettings
    from ragfault.server import ServerThread

    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "demo.duckdb"
        run_demo(db)
        empty = ServerThread(
            ServerSettings(db=str(Path(tmp) / "empty.duckdb"), http_port=free_port(), grpc_port=free_port())
        ).start()
        server = ServerThread(
            ServerSettings(db=str(db), http_port=free_port(), grpc_port=free_port(), settle_seconds=0.5)
        ).start()
        live = ServerThread(
            ServerSettings(
                db=str(Path(tmp) / "live.duckdb"),
                http_port=free_port(),
                grpc_port=free_port(),
                settle_seconds=0.5,
            )
        ).start()
        live_url = f"http://127.0.0.1:{live.http_port}"
        url = f"http://127.0.0.1:{server.http_port}"
        try:
            n = send_second_run(url)
            con = server.runtime.store.cursor()
            deadline = time.monotonic() + 60
            while (
                con.execute("SELECT count(*) FROM attribution WHERE run_id = ?", [RUN2]).fetchall()[0][0] < n
            ):
                if time.monotonic() > deadline:
                    raise TimeoutError("the second run was not evaluated in 60 s")
                time.sleep(0.2)
            tid = con.execute(
                "SELECT trace_id FROM attribution WHERE case_id = 'api-rate-limit' AND run_id = 'demo-v1'"
            ).fetchall()[0][0]
            con.close()
            add_judge_verdicts(server.runtime)
            live_ids = send_live_traffic(live_url)
            wait_evaluated(live, list(live_ids.values()))
            send_feedback(live_url, live_ids)
            pages = [
                ("dashboard", "dashboard?run_id=demo-v1", "dashboard"),
                ("dashboard-filtered", "dashboard?run_id=demo-v1&cause=stale_context", "dashboard"),
                ("traces", "traces", "traces"),
                ("trace", f"trace/{tid}", "trace"),
                ("compare", f"compare?base=demo-v1&new={RUN2}", "compare"),
                ("review", "review", "review"),
                ("calibration", "calibration", "calibration"),
                ("coverage", "coverage", "coverage"),
                ("sql", "sql", "sql"),
            ]
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                for name, route, ready in pages:
                    if name == "calibration":  # a few labels first, so the report has pairs
                        label_some(url)
                    shoot(page, url, route, ready, name, full_page=name not in ("trace", "sql"))
                shoot(page, live_url, "live", "live", "live")
                shoot(page, live_url, f"triage/{live_ids['en/dropped_before_context']}", "triage", "triage")
                page.goto(f"http://127.0.0.1:{empty.http_port}/ui")
                page.wait_for_function("(name) => document.body.dataset.ready === name", arg="start")
                page.screenshot(path=str(OUT / "start.png"), full_page=True)
                print("wrote", OUT / "start.png")
                browser.close()
        finally:
            server.stop()
            empty.stop()
            live.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
