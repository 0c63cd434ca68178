"""The UI keeps the API token for the tab's session (``sessionStorage``), never in ``localStorage``,
where it stayed on disk for every later script of the origin to read; a token an earlier version
left there is moved into the session and removed."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Server, StartServer
from tests.ui.conftest import Page, strict_csp

TOKEN = "s3cret-token"
KEY = "ragfault-token"


@pytest.fixture
def guarded(start_server: StartServer) -> Server:
    return start_server(api_token=TOKEN)


def stored(page: Any) -> tuple[str | None, str | None]:
    """(sessionStorage, localStorage) values of the token."""
    session, local = page.evaluate(f"[sessionStorage.getItem('{KEY}'), localStorage.getItem('{KEY}')]")
    return session, local


def failed(page: Any) -> bool:
    return "Could not load this page" in page.inner_text("main")


def test_the_token_lives_in_the_tabs_session_only(browser: Any, guarded: Server) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    strict_csp(context, guarded.url)
    try:
        p = Page(context.new_page(), guarded.url)
        p.allow("401")  # the calls made before the token is given
        page = p.open("dashboard", "dashboard")
        assert failed(page)  # no token yet: the API refuses
        p.after(lambda: (page.fill("#token", TOKEN), page.dispatch_event("#token", "change")), "dashboard")
        assert not failed(page)
        assert stored(page) == (TOKEN, None)
        # another tab of the same browser starts without it
        other = Page(context.new_page(), guarded.url)
        other.allow("401")
        assert stored(other.open("dashboard", "dashboard")) == (None, None)
        assert other.page.input_value("#token") == ""
        assert p.unexpected_errors() == [] and other.unexpected_errors() == []
    finally:
        context.close()


def test_a_token_an_earlier_version_stored_is_moved_to_the_session(browser: Any, guarded: Server) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    strict_csp(context, guarded.url)
    try:
        p = Page(context.new_page(), guarded.url)
        p.allow("401")
        page = p.open("dashboard", "dashboard")
        page.evaluate(f"localStorage.setItem('{KEY}', '{TOKEN}')")  # as the earlier version kept it
        page.reload()
        p.wait_ready("dashboard")
        assert not failed(page)
        assert page.input_value("#token") == TOKEN
        assert stored(page) == (TOKEN, None)
        assert p.unexpected_errors() == []
    finally:
        context.close()
