"""HAProxy (Debian's ``haproxy`` package) run with ``deploy/haproxy.cfg`` in front of collectors, in
the foreground on free ports, for the tests and ``bench/scaleout.py``."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import httpx

from tests.pg import free_port

CONFIG = Path(__file__).resolve().parents[1] / "deploy" / "haproxy.cfg"


def haproxy_binary() -> str | None:
    return shutil.which("haproxy") or next(
        (p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy") if os.access(p, os.X_OK)), None
    )


def config_env(collectors: Sequence[tuple[int, int]], http_port: int, grpc_port: int) -> dict[str, str]:
    """The environment ``deploy/haproxy.cfg`` reads: the balancer's addresses and, per collector,
    its OTLP/HTTP and OTLP/gRPC address (``(http_port, grpc_port)`` on 127.0.0.1)."""
    env = {"RAGFAULT_LB_HTTP": f"127.0.0.1:{http_port}", "RAGFAULT_LB_GRPC": f"127.0.0.1:{grpc_port}",
           "RAGFAULT_LB_MAXCONN": "1000"}  # fmt: skip
    for i, (h, g) in enumerate(collectors, start=1):
        env[f"RAGFAULT_COLLECTOR_{i}_HTTP"] = f"127.0.0.1:{h}"
        env[f"RAGFAULT_COLLECTOR_{i}_GRPC"] = f"127.0.0.1:{g}"
    return env


class HAProxy:
    """``haproxy -db -f deploy/haproxy.cfg`` balancing over ``collectors`` (each ``(http, grpc)``)."""

    def __init__(self, collectors: Sequence[tuple[int, int]], log: Path) -> None:
        binary = haproxy_binary()
        if binary is None:
            raise RuntimeError("haproxy is not installed (apt-get install haproxy)")
        self.http_port, self.grpc_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.http_port}"
        self.grpc_endpoint = f"127.0.0.1:{self.grpc_port}"
        self.log = log
        env = {**os.environ, **config_env(collectors, self.http_port, self.grpc_port)}
        check = subprocess.run([binary, "-c", "-f", str(CONFIG)], env=env, capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"haproxy -c refused {CONFIG}: {check.stdout}{check.stderr}")
        self.proc = subprocess.Popen(
            [binary, "-db", "-f", str(CONFIG)], env=env, stdout=log.open("w"), stderr=subprocess.STDOUT
        )

    def wait_ready(self, timeout: float = 30) -> None:
        """Until a request through the balancer reaches a collector's /healthz."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"haproxy exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"haproxy not ready: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def __enter__(self) -> HAProxy:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
