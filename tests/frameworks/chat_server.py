"""A small OpenAI-compatible model server for the framework tests: real HTTP on a free port.

It answers ``POST /v1/chat/completions`` (plain and streamed as server-sent events, with usage),
``POST /v1/completions`` and ``POST /v1/embeddings``, deterministically from the prompt: the question
is the last sentence of the prompt that ends with ``?``; the answer is the sentence of the rest of the
prompt that shares the most words with it (ties: the first), or ``"I don't know."`` when none shares
a word. So an app whose prompt holds the evidence answers with it, and one whose prompt lost it
answers with whatever it kept. A tool-calling request whose last message is the user's is answered
with a call of the first tool offered, its argument the question; after the tool's result the model
answers from the whole conversation (a tool result that is a JSON list of documents is read by its texts).
Usage is counted as words.

Run it standalone with ``python tests/frameworks/chat_server.py PORT``; the tests start it in-process.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_WORD = re.compile(r"\w+")
_SENTENCE = re.compile(r"[^.?!\n]+[.?!]?")
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "is",
        "are",
        "was",
        "be",
        "by",
        "with",
        "what",
        "which",
        "who",
        "how",
        "when",
        "where",
        "does",
        "do",
        "can",
        "after",
        "before",
        "within",
        "from",
        "that",
        "this",
        "it",
        "as",
        "at",
    ]
)


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(p.get("text", "") if isinstance(p, dict) else p) for p in content)
    return ""


def _message_text(message: dict[str, Any]) -> str:
    """A message's text; a tool result that is a JSON list of documents gives their texts, a line each."""
    text = _text(message.get("content"))
    if message.get("role") == "tool" and text.lstrip()[:1] == "[":
        try:
            items = json.loads(text)
        except ValueError:
            return text
        if isinstance(items, list):
            return "\n".join(
                str(i.get("content", i.get("text", ""))) if isinstance(i, dict) else str(i) for i in items
            )
    return text


def answer(prompt: str) -> str:
    """The sentence of ``prompt`` that best answers the last question in it."""
    sentences = [s.strip().lstrip("-*• ").strip() for s in _SENTENCE.findall(prompt)]
    sentences = [s for s in sentences if s]
    questions = [i for i, s in enumerate(sentences) if s.endswith("?")]
    if not questions:
        return "I don't know."
    q = words(sentences[questions[-1]])
    best, best_overlap = None, 0
    for i, s in enumerate(sentences):
        if i in questions or s.endswith(":"):
            continue
        overlap = len(q & words(s))
        if overlap > best_overlap:
            best, best_overlap = s, overlap
    return best if best else "I don't know."


def _last_question(prompt: str) -> str:
    found = [s.strip() for s in _SENTENCE.findall(prompt) if s.strip().endswith("?")]
    return found[-1] if found else prompt.strip()


def _embedding(text: str, dim: int = 64) -> list[float]:
    v = [0.0] * dim
    for w in words(text):
        v[zlib.crc32(w.encode()) % dim] += 1.0
    norm = sum(x * x for x in v) ** 0.5 or 1.0
    return [x / norm for x in v]


class ChatServer:
    """The server, serving on a thread; ``requests`` keeps every request body received."""

    def __init__(self, port: int = 0) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length", 0))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    return self._json(400, {"error": {"message": "invalid JSON"}})
                with server._lock:
                    server.requests.append({"path": self.path, **body})
                path = self.path.split("?", 1)[0].removeprefix("/v1")
                if path == "/chat/completions":
                    return self._chat(body)
                if path == "/completions":
                    text = answer(_text(body.get("prompt", "")))
                    return self._json(200, _completion(body, text, _text(body.get("prompt", ""))))
                if path == "/embeddings":
                    inputs = body.get("input", "")
                    items = inputs if isinstance(inputs, list) else [inputs]
                    data = [
                        {"object": "embedding", "index": i, "embedding": _embedding(str(t))}
                        for i, t in enumerate(items)
                    ]
                    n = sum(len(words(str(t))) for t in items)
                    usage = {"prompt_tokens": n, "total_tokens": n}
                    return self._json(200, {"object": "list", "data": data, "model": "bow", "usage": usage})
                return self._json(404, {"error": {"message": f"no route {self.path}"}})

            def _chat(self, body: dict[str, Any]) -> None:
                messages = body.get("messages") or []
                prompt = "\n".join(_message_text(m) for m in messages if isinstance(m, dict))
                last = messages[-1] if messages else {}
                tools = body.get("tools") or []
                call = None
                if tools and last.get("role") == "user":
                    fn = tools[0].get("function", {})
                    params = fn.get("parameters", {}).get("properties", {}) or {"query": {}}
                    arg = next(iter(params))
                    call = {
                        "id": f"call_{zlib.crc32(prompt.encode()):08x}",
                        "type": "function",
                        "function": {
                            "name": fn.get("name"),
                            "arguments": json.dumps({arg: _last_question(prompt)}),
                        },
                    }
                text = None if call else answer(prompt)
                if body.get("stream"):
                    return self._stream(body, text, call, prompt)
                message: dict[str, Any] = {"role": "assistant", "content": text}
                if call:
                    message["tool_calls"] = [call]
                choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}
                return self._json(200, {**_envelope(body, "chat.completion"), "choices": [choice],
                                        "usage": _usage(prompt, text or "")})  # fmt: skip

            def _stream(self, body: dict[str, Any], text: str | None, call: Any, prompt: str) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                base = _envelope(body, "chat.completion.chunk")
                delta: dict[str, Any] = {"role": "assistant", "content": "" if call else None}
                chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}]
                if call:
                    tc = {"index": 0, **call}
                    chunks.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [tc]}}]})
                else:
                    for piece in re.findall(r"\S+\s*", text or ""):
                        chunks.append({**base, "choices": [{"index": 0, "delta": {"content": piece}}]})
                finish = "tool_calls" if call else "stop"
                chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
                if (body.get("stream_options") or {}).get("include_usage"):
                    chunks.append({**base, "choices": [], "usage": _usage(prompt, text or "")})
                for c in chunks:
                    self.wfile.write(b"data: " + json.dumps(c).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> ChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _envelope(body: dict[str, Any], obj: str) -> dict[str, Any]:
    return {"id": "chatcmpl-local", "object": obj, "created": 1767225600, "model": body.get("model", "local")}


def _usage(prompt: str, text: str) -> dict[str, int]:
    p, c = len(_WORD.findall(prompt)), len(_WORD.findall(text))
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def _completion(body: dict[str, Any], text: str, prompt: str) -> dict[str, Any]:
    choice = {"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}
    return {**_envelope(body, "text_completion"), "choices": [choice], "usage": _usage(prompt, text)}


if __name__ == "__main__":
    srv = ChatServer(int(sys.argv[1]) if len(sys.argv) > 1 else 0).start()
    print(srv.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        srv.stop()
