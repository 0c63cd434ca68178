"""A small OpenAI-compatible chat server for the judge tests: real HTTP on a free port, scripted replies.

``script`` is a queue of one-shot behaviours taken in order by the next requests (``malformed``,
``("status", 429, {"Retry-After": "1"})``, ``("sleep", seconds)``, ``("reply", {...})``); when it is
empty a request is answered by the first rule whose text appears in the user message, else by a
neutral default for the task. Usage is reported as characters / 4.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _tokens(text: str) -> int:
    return max(1, (len(text) + 3) // 4)


def default_reply(user: str) -> dict[str, Any]:
    if "atomic claims" in user:
        return {"claims": []}
    if "required FACT" in user:
        ids = [
            line.split(":", 1)[0]
            for line in user.split("FACTS (id first):", 1)[1].split("TEXT", 1)[0].splitlines()
            if ":" in line
        ]
        return {"facts": [{"id": i.strip(), "verdict": "unsupported", "sentence": None} for i in ids]}
    if "citation checker" in user or "cited PASSAGE" in user:
        return {"verdict": "unsupported", "sentence": None}
    return {"label": "answered", "reason": "gives an answer"}


class FakeLLM:
    def __init__(self) -> None:
        self.script: deque[Any] = deque()
        self.rules: list[tuple[str, dict[str, Any]]] = []
        self.responder: Any = None  # optional callable(user message) -> reply dict or None
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.usage: list[tuple[int, int]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                with fake._lock:
                    fake.requests.append(body)
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                    step = fake.script.popleft() if fake.script else None
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": "not found"})
                if isinstance(step, tuple) and step[0] == "status":
                    return self._send(
                        step[1], {"error": {"message": "scripted"}}, step[2] if len(step) > 2 else {}
                    )
                if isinstance(step, tuple) and step[0] == "sleep":
                    time.sleep(step[1])
                    step = None
                user = "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")
                if step == "malformed":
                    content = "Sure! Here are the verdicts: {claims: [oops"
                elif isinstance(step, tuple) and step[0] == "reply":
                    content = json.dumps(step[1], ensure_ascii=False)
                else:
                    reply = next((r for needle, r in fake.rules if needle in user), None)
                    if reply is None and fake.responder is not None:
                        reply = fake.responder(user)
                    reply = reply or default_reply(user)
                    content = json.dumps(reply, ensure_ascii=False)
                prompt = "".join(m["content"] for m in body["messages"])
                usage = (_tokens(prompt), _tokens(content))
                with fake._lock:
                    fake.usage.append(usage)
                self._send(200, {
                    "id": "chatcmpl-test", "object": "chat.completion", "model": body.get("model"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                              "total_tokens": usage[0] + usage[1]},
                })  # fmt: skip

            def _send(
                self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> FakeLLM:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)
