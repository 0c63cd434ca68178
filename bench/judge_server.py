"""A local OpenAI-compatible chat endpoint with added latency, for the soak and the live tests.

``POST /v1/chat/completions`` answers after ``latency`` seconds (plus up to ``jitter`` seconds) with
well-formed JSON for the real judge's tasks (``evaluators/prompts/*_v1.txt``) and a ``usage`` block
(characters / 4), so a client sees a slow judge that costs tokens:

- claims: one claim per answer sentence, ``supported`` by the context sentence sharing the most
  words (at least half of the claim's words), else ``unsupported``;
- facts: one entry per fact id, judged the same way against the numbered text;
- citation: the same test of the sentence against the passage;
- refusal: ``refused`` when the reply says it does not know, else ``answered``.

A request that is none of these (e.g. ``bench.minimal_judge``) gets a fixed claims verdict. The
answers are deterministic and cheap to compute; the soak measures scheduling, lag and memory, not
judge quality. Run it alone with ``python -m bench.judge_server --port 8765 --latency 1.0``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_WORD = re.compile(r"\w+", re.UNICODE)
_SENT = re.compile(r"(?<=[。！？；!?;.])\s*|\n+")
_TASKS = {"claims": "claims", "facts": "facts", "verdict": "citation", "label": "refusal"}
_REFUSAL = ("don't know", "do not know", "not available", "no information", "资料里没有", "请咨询人工客服")


def _section(text: str, start: str, end: str | None) -> str:
    """The text between the line ``start`` and the next ``end`` marker (or the end)."""
    i = text.find(start)
    if i < 0:
        return ""
    body = text[i + len(start) :]
    if end is not None:
        j = body.find(end)
        if j >= 0:
            body = body[:j]
    return body.strip()


def _numbered(block: str) -> list[tuple[str, str]]:
    """``S3: text`` lines as (``S3``, text)."""
    out = []
    for line in block.splitlines():
        sid, sep, text = line.partition(":")
        if sep and sid.strip().startswith("S") and sid.strip()[1:].isdigit():
            out.append((sid.strip(), text.strip()))
    return out


def _words(text: str) -> set[str]:
    words = {w.lower() for w in _WORD.findall(text)}
    if any("\u4e00" <= ch <= "\u9fff" for ch in text):  # CJK: characters as words
        words |= {ch for ch in text if "\u4e00" <= ch <= "\u9fff"}
    return words


def _best(claim: str, sentences: list[tuple[str, str]]) -> tuple[str, str | None]:
    """(verdict, sentence id) of a claim against numbered sentences, by word overlap."""
    cw = _words(claim)
    if not cw or not sentences:
        return "unsupported", None
    sid, overlap = max(((s, len(cw & _words(t))) for s, t in sentences), key=lambda x: x[1])
    return ("supported", sid) if overlap * 2 >= len(cw) else ("unsupported", None)


def answer_task(user: str) -> dict[str, Any]:
    """A well-formed answer of the judge task this user message asks for."""
    if "atomic claims" in user:
        answer = _section(user, "ANSWER:", "Reply with JSON")
        context = _numbered(_section(user, "CONTEXT (one sentence per line, id first):", "\nANSWER:"))
        if any(r in answer for r in _REFUSAL):
            return {"claims": []}
        claims = []
        for sent in (s.strip() for s in _SENT.split(answer)):
            if sent:
                verdict, sid = _best(sent, context)
                claims.append({"text": sent, "verdict": verdict, "sentence": sid})
        return {"claims": claims}
    if "required FACT" in user:
        facts = _section(user, "FACTS (id first):", "TEXT (one sentence")
        text = _numbered(_section(user, "TEXT (one sentence per line, id first):", "Reply with JSON"))
        out = []
        for line in facts.splitlines():
            fid, sep, ftext = line.partition(":")
            if sep:
                verdict, sid = _best(ftext, text)
                out.append({"id": fid.strip(), "verdict": verdict, "sentence": sid})
        return {"facts": out}
    if "cited PASSAGE" in user:
        sentence = _section(user, "SENTENCE:", "PASSAGE (")
        passage = _numbered(_section(user, "PASSAGE (one sentence per line, id first):", "Reply with JSON"))
        verdict, sid = _best(sentence, passage)
        return {"verdict": verdict, "sentence": sid}
    if "REPLY:" in user:
        reply = _section(user, "REPLY:", "Reply with JSON")
        if any(r in reply for r in _REFUSAL):
            return {"label": "refused", "reason": "says the information is not available"}
        return {"label": "answered", "reason": "gives a substantive answer"}
    return {"claims": [{"text": "the answer", "verdict": "supported", "sentence": "S1"}]}


class JudgeServer:
    def __init__(
        self, latency: float = 1.0, host: str = "127.0.0.1", port: int = 0, jitter: float = 0.0, seed: int = 7
    ) -> None:
        self.latency = latency
        self.jitter = jitter
        self.requests = 0
        self.tasks: dict[str, int] = {}
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send_error(404)
                    return
                with owner._lock:
                    delay = owner.latency + (owner._rng.uniform(0, owner.jitter) if owner.jitter else 0.0)
                time.sleep(delay)
                messages = body.get("messages", [])
                user = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
                verdict = answer_task(user)
                task = _TASKS.get(next(iter(verdict)), "other")
                with owner._lock:
                    owner.requests += 1
                    owner.tasks[task] = owner.tasks.get(task, 0) + 1
                    rid = owner.requests
                content = json.dumps(verdict, ensure_ascii=False)
                prompt_tokens = max(1, sum(len(str(m.get("content", ""))) for m in messages) // 4)
                completion_tokens = max(1, len(content) // 4)
                out = {
                    "id": f"chatcmpl-{rid}",
                    "object": "chat.completion",
                    "model": body.get("model", "bench-judge"),
                    "choices": [
                        {"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}
                    ],
                    "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                              "total_tokens": prompt_tokens + completion_tokens},
                }  # fmt: skip
                data = json.dumps(out).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://{host}:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="bench-judge", daemon=True)

    def __enter__(self) -> JudgeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--latency", type=float, default=1.0, help="seconds before each answer")
    ap.add_argument("--jitter", type=float, default=0.0, help="up to this many seconds more, uniformly")
    args = ap.parse_args()
    with JudgeServer(args.latency, port=args.port, jitter=args.jitter) as srv:
        print(f"judge at {srv.url} (latency {args.latency}s + up to {args.jitter}s)", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
