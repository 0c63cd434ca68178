"""A local OpenAI-compatible chat endpoint with added latency, for the soak and the live tests.

``POST /v1/chat/completions`` answers after ``latency`` seconds with a fixed JSON verdict and a
``usage`` block, so a client sees a slow judge that costs tokens. Run it alone with
``python -m bench.judge_server --port 8765 --latency 1.0``.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class JudgeServer:
    def __init__(self, latency: float = 1.0, host: str = "127.0.0.1", port: int = 0) -> None:
        self.latency = latency
        self.requests = 0
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
                time.sleep(owner.latency)
                with owner._lock:
                    owner.requests += 1
                prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
                verdict = {"claims": [{"claim": "the answer", "label": "supported"}]}
                out = {
                    "id": f"chatcmpl-{owner.requests}",
                    "object": "chat.completion",
                    "model": body.get("model", "bench-judge"),
                    "choices": [
                        {"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": json.dumps(verdict)}}
                    ],
                    "usage": {"prompt_tokens": max(1, len(prompt) // 4), "completion_tokens": 20,
                              "total_tokens": max(1, len(prompt) // 4) + 20},
                }  # fmt: skip
                data = json.dumps(out).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

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
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--latency", type=float, default=1.0)
    args = ap.parse_args()
    with JudgeServer(args.latency, port=args.port) as srv:
        print(f"judge at {srv.url} (latency {args.latency}s)", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
