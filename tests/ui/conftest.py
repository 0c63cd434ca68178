"""Browser tests of the web UI: Debian's chromium driven by Playwright against a real server.

One browser for the whole session; one server on a copy of the demo database plus a second run of the
demo app (so two runs compare) and judge verdicts of two judge versions (so the review queue has items
whose label changed). Each test gets a fresh page whose console errors fail the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server, make_settings
from tests.demo_db import demo_db  # noqa: F401 (fixture)
from tests.needs import missing
from tests.ui.data import RUN2, add_judge_verdicts, send_second_run

CHROMIUM = os.environ.get("RAGFAULT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def cjk_font() -> bool:
    """Whether fontconfig knows a font with Chinese glyphs (the dashboard's CJK test draws them)."""
    try:
        found = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        return False
    return found.returncode == 0 and bool(found.stdout.strip())


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        missing("chromium", f"no chromium at {CHROMIUM}")
    if not cjk_font():
        missing("chromium", "no font with CJK glyphs (fc-list :lang=zh finds none)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="session")
def ui_server(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:  # noqa: F811
    tmp = tmp_path_factory.mktemp("ui")
    shutil.copy(demo_db, tmp / "ragfault.duckdb")
    server = Server(make_settings(tmp))
    try:
        before = server.scalar("SELECT count(*) FROM traces")
        n = send_second_run(server.url)
        server.wait_for("SELECT count(*) FROM traces", before + n, timeout=30)
        server.settle()
        server.wait_for("SELECT count(*) FROM attribution WHERE run_id = $r", n, timeout=60, r=RUN2)
        add_judge_verdicts(server.runtime)
        yield server
    finally:
        server.stop()


class Page:
    """A browser page on the UI with its console errors collected."""

    def __init__(self, page: Any, base: str) -> None:
        self.page = page
        self.base = base
        self.errors: list[str] = []
        self.allowed: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, route: str, ready: str) -> Any:
        self.page.goto(f"{self.base}/ui#/{route}")
        self.wait_ready(ready)
        return self.page

    def allow(self, text: str) -> None:
        """A console error the test provokes on purpose (a refused request the browser logs)."""
        self.allowed.append(text)

    def unexpected_errors(self) -> list[str]:
        return [e for e in self.errors if not any(a in e for a in self.allowed)]

    def wait_ready(self, page_name: str) -> None:
        self.page.wait_for_function("(name) => document.body.dataset.ready === name", arg=page_name)

    def after(self, action: Any, page_name: str) -> Any:
        """Run ``action`` (a click, a key) and wait until the page it leads to has rendered."""
        n = int(self.page.evaluate("+(document.body.dataset.renders || 0)"))
        action()
        self.page.wait_for_function(
            "([n, name]) => +(document.body.dataset.renders || 0) > n && document.body.dataset.ready === name",
            arg=[n, page_name],
        )
        return self.page

    def overflow(self) -> int:
        """How far the page is wider than the window (0 when nothing scrolls sideways)."""
        return int(self.page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))


# the strictest policy the page is written for: no inline script or style, nothing from elsewhere
CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'"


def strict_csp(context: Any, base: str) -> None:
    """Serve the page with ``CSP`` (a violation is a console error, which fails the test)."""

    def handle(route: Any) -> None:
        response = route.fetch()
        route.fulfill(response=response, headers={**response.headers, "content-security-policy": CSP})

    context.route(f"{base}/ui", handle)


@pytest.fixture
def ui(browser: Any, ui_server: Server) -> Iterator[Page]:
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, locale="en-GB", timezone_id="Asia/Tokyo"
    )
    strict_csp(context, ui_server.url)
    p = Page(context.new_page(), ui_server.url)
    try:
        yield p
        assert p.unexpected_errors() == [], p.errors
    finally:
        context.close()
