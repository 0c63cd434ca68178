"""``GET /docs``: the HTTP API reference as one server-rendered page, without scripts.

FastAPI's own pages (Swagger UI, ReDoc) load their scripts from a CDN: they fail offline, and they
put a third-party script on a page where users paste their token. No package on PyPI that ships
those assets is kept well enough to depend on, so this page renders the OpenAPI document itself
(every operation with its parameters and request body); ``/openapi.json`` is unchanged for tools.
"""

from __future__ import annotations

import html
import json
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.responses import HTMLResponse

from collector.api.web import html_page

_STYLE = """body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1000px;padding:16px;color:#1d232b}
h2{font-size:15px;margin:22px 0 4px}code,pre{font:12px ui-monospace,Menlo,monospace}
.m{display:inline-block;min-width:56px;font-weight:600}.muted{color:#6a7380}
pre{background:#f5f7f9;padding:8px;white-space:pre-wrap;border-radius:6px}
table{border-collapse:collapse}td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top}"""


def _ref(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " | ".join(_ref(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"array of {_ref(schema.get('items', {}))}"
    return str(schema.get("type", "any"))


def render(spec: dict[str, Any]) -> str:
    e = html.escape
    out = [
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>ragfault API</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{e(spec.get('info', {}).get('title', ''))} API</h1>",
        '<p class=muted>The machine-readable document is <a href="/openapi.json">/openapi.json</a>. '
        "Send the API token as <code>Authorization: Bearer &lt;token&gt;</code>; requests that change "
        "state take a JSON body (<code>Content-Type: application/json</code>, JSONL where noted).</p>",
    ]
    for path, ops in spec.get("paths", {}).items():
        for method, op in ops.items():
            out.append(f"<h2><span class=m>{e(method.upper())}</span><code>{e(path)}</code></h2>")
            if op.get("summary"):
                out.append(f"<div>{e(op['summary'])}</div>")
            params = op.get("parameters") or []
            if params:
                out.append("<table><tr><th>parameter</th><th>in</th><th>type</th><th></th></tr>")
                for p in params:
                    req = "required" if p.get("required") else ""
                    out.append(
                        f"<tr><td><code>{e(p['name'])}</code></td><td>{e(p.get('in', ''))}</td>"
                        f"<td>{e(_ref(p.get('schema', {})))}</td><td>{req}</td></tr>"
                    )
                out.append("</table>")
            for media, body in (op.get("requestBody", {}).get("content") or {}).items():
                out.append(f"<div>body: <code>{e(media)}</code> {e(_ref(body.get('schema', {})))}</div>")
    schemas = spec.get("components", {}).get("schemas", {})
    if schemas:
        out.append("<h1>Schemas</h1>")
        for name, schema in schemas.items():
            out.append(
                f"<h2>{e(name)}</h2><pre>{e(json.dumps(schema.get('properties', schema), indent=1))}</pre>"
            )
    out.append("</body></html>")
    return "".join(out)


def docs_router(app: FastAPI) -> APIRouter:
    router = APIRouter()
    page: list[Any] = []

    @router.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        if not page:  # rendered on first use, when every router is in
            page.append(html_page(render(app.openapi())))
        response: HTMLResponse = page[0]()
        return response

    return router
