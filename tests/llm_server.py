"""A small OpenAI-compatible chat server for framework tests: real HTTP on a free port, offline.

``POST /v1/chat/completions`` answers with ``reply(messages)`` (a callable given at construction,
by default the first sentence of the last user message), with usage counted as characters / 4 and a
response id numbered per request; ``"stream": true`` is answered as server-sent events in two
chunks plus a usage chunk when ``stream_options.include_usage`` is set. ``POST /v1/embeddings``
answers a deterministic vector per input. Every request body is kept in ``requests``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[list[dict[str, Any]]], str]


def tokens(text: str) -> int:
    return max(1, (len(text) + 3) // 4)


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def first_sentence_reply(messages: list[dict[str, Any]]) -> str:
    users = [message_text(m) for m in messages if m.get("role") == "user"]
    text = users[-1] if users else ""
    return text.split(". ")[0].strip() or "ok"


class LLMServer:
    """``with LLMServer(reply) as llm:`` serves on ``llm.base_url`` (``http://127.0.0.1:PORT/v1``)."""

    def __init__(self, reply: Reply = first_sentence_reply, model: str = "test-model") -> None:
        self.reply = reply
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                except json.JSONDecodeError:
                    return self._send(400, {"error": {"message": "invalid JSON"}})
                with owner._lock:
                    owner.requests.append(body)
                    n = next(owner._ids)
                path = self.path.split("?", 1)[0]
                if path.endswith("/chat/completions"):
                    return owner._chat(self, body, n)
                if path.endswith("/embeddings"):
                    return self._send(200, owner._embeddings(body))
                return self._send(404, {"error": {"message": f"no route {self.path}"}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._handler = Handler
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.httpd.server_address[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="llm-server", daemon=True)

    def __enter__(self) -> LLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(10)

    def _chat(self, handler: Any, body: dict[str, Any], n: int) -> None:
        messages = body.get("messages") or []
        text = self.reply(messages)
        prompt = sum(tokens(message_text(m)) for m in messages)
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": tokens(text),
            "total_tokens": prompt + tokens(text),
        }
        model = body.get("model") or self.model
        base = {
            "id": f"chatcmpl-{n}",
            "created": 1_700_000_000 + n,
            "model": model,
            "system_fingerprint": "fp_test",
        }
        if not body.get("stream"):
            choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            return handler._send(
                200, {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
            )
        half = len(text) // 2
        chunks = [
            {"index": 0, "delta": {"role": "assistant", "content": text[:half]}, "finish_reason": None},
            {"index": 0, "delta": {"content": text[half:]}, "finish_reason": "stop"},
        ]
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()
        events = [{**base, "object": "chat.completion.chunk", "choices": [c]} for c in chunks]
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        for event in events:
            handler.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        handler.wfile.write(b"data: [DONE]\n\n")

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        inputs = body.get("input")
        items = inputs if isinstance(inputs, list) else [inputs]
        data = []
        for i, item in enumerate(items):
            digest = hashlib.sha256(str(item).encode()).digest()
            data.append({"object": "embedding", "index": i, "embedding": [b / 255 for b in digest[:16]]})
        used = sum(tokens(str(x)) for x in items)
        return {"object": "list", "data": data, "model": body.get("model") or self.model,
                "usage": {"prompt_tokens": used, "total_tokens": used}}  # fmt: skip
