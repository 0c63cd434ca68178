"""The web surface (collector/api/web.py): what a page in the user's browser can and cannot do to a
server on 127.0.0.1, and the headers every answer carries."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import httpx
import pytest

from tests.conftest import Server, StartServer

CASE = {"case_id": "c1", "query": "How long is the refund window?", "answerable": True}
DOC = {"doc_id": "d1", "content": "Refunds within 30 days."}


def gold_cases(srv: Server) -> int:
    return int(srv.scalar("SELECT count(*) FROM gold_cases"))


def test_a_cross_site_form_cannot_load_data_or_trust_a_judge(server: Server) -> None:
    # what an HTML form (enctype text/plain) or a no-cors fetch on any page can send
    for path, body in (("/api/v1/gold", json.dumps(CASE)), ("/api/v1/kb", json.dumps(DOC))):
        for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
            r = server.http.post(path, content=body, headers={"Content-Type": ctype})
            assert r.status_code == 415, (path, ctype, r.text)
            assert "application/json" in r.json()["detail"]
    r = server.http.post("/v1/traces", content=b"{}", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    assert gold_cases(server) == 0
    assert server.scalar("SELECT count(*) FROM kb_documents") == 0

    # the judge version is trusted with a JSON body only, never with query parameters
    q = {"model": "m", "prompt_version": "v1"}
    for headers in ({}, {"Content-Type": "text/plain"}, {"Content-Type": "application/json"}):
        r = server.http.post("/api/v1/judge/accept", params=q, headers=headers)
        assert r.status_code in (415, 422), r.text
    assert server.scalar("SELECT count(*) FROM judge_versions WHERE trusted") == 0
    r = server.http.post("/api/v1/judge/accept", json=q)
    assert r.status_code == 200, r.text
    assert server.scalar("SELECT count(*) FROM judge_versions WHERE trusted") == 1

    # JSON and JSONL bodies load as documented
    for ctype in ("application/json", "application/x-ndjson", "application/jsonl; charset=utf-8"):
        r = server.http.post("/api/v1/gold", content=json.dumps(CASE), headers={"Content-Type": ctype})
        assert r.status_code == 200, r.text
    assert gold_cases(server) == 1


def test_state_changes_from_another_origin_are_refused(server: Server) -> None:
    own = server.url
    body = {"sql": "SELECT 1"}
    for headers in (
        {"Origin": "http://evil.example"},
        {"Origin": "http://127.0.0.1:1"},  # another port is another origin
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ):
        r = server.http.post("/api/v1/sql", json=body, headers=headers)
        assert r.status_code == 403, (headers, r.text)
        r = server.http.post(
            "/api/v1/gold", content=json.dumps(CASE), headers={**headers, "Content-Type": "application/json"}
        )
        assert r.status_code == 403
    assert gold_cases(server) == 0
    # a browser without Content-Type is not taken for a script
    r = server.http.post("/api/v1/gold", content=json.dumps(CASE), headers={"Origin": own})
    assert r.status_code == 415
    # the page itself (same origin), and clients that are not browsers
    r = server.http.post("/api/v1/sql", json=body, headers={"Origin": own, "Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 200 and r.json()["rows"] == [[1]]
    assert server.http.post("/api/v1/gold", content=json.dumps(CASE)).status_code == 200
    # reads are not state changes: a GET with a foreign Origin answers (CORS keeps it from the page)
    assert server.http.get("/healthz", headers={"Origin": "http://evil.example"}).status_code == 200


def test_cross_site_reads_of_the_api_are_refused_while_same_origin_reads_answer(server: Server) -> None:
    """A page elsewhere cannot read the answers, but without this it had the work done (a compare
    costs a third of a second); another port of localhost is the same site, not the same origin."""
    reads = (
        "/api/v1/compare?run=a&baseline=b",
        "/api/v1/ui/overview",
        "/api/v1/traces/" + "0" * 32,
        "/metrics",
    )
    foreign = (
        {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"},
        {"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors", "Origin": "http://localhost:1"},
        {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"},
        {"Origin": "http://evil.example"},  # a CORS read from a browser without fetch metadata
    )
    for path in reads:
        for headers in foreign:
            r = server.http.get(path, headers=headers)
            assert r.status_code == 403, (path, headers, r.text)
            assert "may not read" in r.json()["detail"]
        assert server.http.head(path, headers=foreign[0]).status_code == 403
        # the UI's own calls, an address typed into the browser, and clients that are not browsers
        for headers in (
            {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"},
            {"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"},
            {"Origin": server.url},
            {},
        ):
            r = server.http.get(path, headers=headers)
            assert r.status_code != 403, (path, headers, r.text)
    overview = server.http.get("/api/v1/ui/overview", headers={"Sec-Fetch-Site": "same-origin"})
    assert overview.status_code == 200 and "traces" in overview.json()
    r = server.http.options(
        "/api/v1/sql", headers={"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}
    )
    assert r.status_code == 403  # no preflight answered either
    # a link to the UI from elsewhere still opens it; its scripts are not for other sites to load
    nav = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
    assert server.http.get("/ui", headers=nav).status_code == 200
    script = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"}
    assert server.http.get("/ui/static/app.js", headers=script).status_code == 403
    assert server.http.get("/ui/static/app.js", headers={"Sec-Fetch-Site": "same-origin"}).status_code == 200
    # probes are no browser's business either way
    assert server.http.get("/healthz", headers=foreign[0]).status_code == 200


def test_a_foreign_host_name_is_refused_on_the_api_and_pages(server: Server) -> None:
    """DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1 reads the API
    as same-origin; its requests carry Host: evil.example."""
    port = server.settings.http_port
    for path in ("/api/v1/traces/" + "0" * 32, "/ui", "/docs", "/openapi.json"):
        r = server.http.get(path, headers={"Host": f"evil.example:{port}"})
        assert r.status_code == 400, (path, r.text)
        assert "trusted_hosts" in r.json()["detail"]
    r = server.http.post("/api/v1/sql", json={"sql": "SELECT 1"}, headers={"Host": "evil.example"})
    assert r.status_code == 400
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "LOCALHOST"):
        assert server.http.get("/openapi.json", headers={"Host": host}).status_code == 200, host
    # probes, scrapers and exporters reach the server by whatever address they were given
    assert server.http.get("/healthz", headers={"Host": "10.0.0.7:4318"}).status_code == 200
    assert server.http.get("/metrics", headers={"Host": "10.0.0.7:4318"}).status_code == 200


@pytest.fixture
def named(start_server: StartServer) -> Server:
    return start_server(trusted_hosts=("ragfault.internal", "*.corp.example"))


def test_trusted_hosts_setting(named: Server) -> None:
    get = named.http.get
    assert get("/openapi.json", headers={"Host": "ragfault.internal:4318"}).status_code == 200
    assert get("/openapi.json", headers={"Host": "eval.corp.example"}).status_code == 200
    assert get("/openapi.json", headers={"Host": "corp.example.evil"}).status_code == 400
    # the list replaces the default
    assert get("/openapi.json", headers={"Host": "localhost"}).status_code == 400


def test_security_headers_and_a_csp_that_runs_only_the_pages_own_script(server: Server) -> None:
    page = server.http.get("/ui")
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    script_src = re.search(r"script-src ([^;]*)", csp)
    assert script_src is not None and "unsafe-inline" not in script_src.group(1)
    assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
    assert "'self'" in script_src.group(1)
    # the page's scripts are files of this server; an inline block would run only by its hash
    sources = re.findall(r"<script[^>]*\bsrc=\"([^\"]+)\"", page.text)
    assert sources and all(src.startswith("/ui/static/") for src in sources)
    for src in sources:
        script = server.http.get(src)
        assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    for code in re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", page.text, re.S):
        digest = base64.b64encode(hashlib.sha256(code.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in script_src.group(1)
    for r in (page, server.http.get("/openapi.json"), server.http.post("/api/v1/sql", json={"sql": "SELECT 1"}),
              server.http.get("/api/v1/traces/" + "0" * 32), server.http.get("/metrics")):  # fmt: skip
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "no-referrer"
        assert r.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
    refused = server.http.post("/api/v1/sql", content=b"{}", headers={"Content-Type": "text/plain"})
    assert refused.headers["x-content-type-options"] == "nosniff"


def test_the_docs_page_loads_nothing_from_elsewhere(server: Server) -> None:
    r = server.http.get("/docs")
    assert r.status_code == 200
    assert "<script" not in r.text.lower() and "cdn" not in r.text.lower()
    assert "/api/v1/sql" in r.text and "/v1/traces" in r.text and "SqlRequest" in r.text
    assert server.http.get("/redoc").status_code == 404
    assert server.http.get("/openapi.json").json()["paths"]["/api/v1/sql"]


@pytest.fixture
def guarded(start_server: StartServer) -> Server:
    return start_server("guarded", api_token="s3cret", protect_ui=True, protect_metrics=True)


def test_with_a_token_the_ui_and_metrics_can_be_protected(guarded: Server, server: Server) -> None:
    bearer = {"Authorization": "Bearer s3cret"}
    basic = {"Authorization": "Basic " + base64.b64encode(b"anyone:s3cret").decode()}
    for path in ("/ui", "/docs", "/openapi.json", "/metrics", "/api/v1/traces/" + "0" * 32):
        r = guarded.http.get(path)
        assert r.status_code == 401, path
        assert "Basic" in r.headers["www-authenticate"]
        wrong = guarded.http.get(
            path, headers={"Authorization": "Basic " + base64.b64encode(b"u:nope").decode()}
        )
        assert wrong.status_code == 401
        assert guarded.http.get(path, headers=bearer).status_code in (200, 404), path
        assert guarded.http.get(path, headers=basic).status_code in (200, 404), path
    assert guarded.http.get("/healthz").status_code == 200
    # without the settings (and without a token) the pages stay open
    assert server.http.get("/ui").status_code == 200 and server.http.get("/metrics").status_code == 200


def test_several_authorization_headers_are_all_checked(start_server: StartServer) -> None:
    srv = start_server(api_token="s3cret")
    good = ("authorization", "Bearer s3cret")
    for extra in (("authorization", "Bearer wrong"), ("authorization", "Basic !!")):
        with httpx.Client(base_url=srv.url) as c:
            r = c.post("/api/v1/sql", json={"sql": "SELECT 1"}, headers=[good, extra])
        assert r.status_code == 401
    with httpx.Client(base_url=srv.url) as c:
        assert c.post("/api/v1/sql", json={"sql": "SELECT 1"}, headers=[good, good]).status_code == 200
