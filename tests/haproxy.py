"""HAProxy (Debian's ``haproxy`` package) run with ``deploy/haproxy.cfg`` in front of collectors, in
the foreground on free ports, for the tests and ``bench/scaleout.py``."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from tests.served import Collector, Served, free_ports

C = TypeVar("C", bound=Collector)  # a collector of any kind, kept as the caller's list holds it

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


class HAProxy(Served):
    """``haproxy -db -f deploy/haproxy.cfg`` balancing over ``collectors`` (each ``(http, grpc)``)."""

    grace = 10.0

    def __init__(self, collectors: Sequence[tuple[int, int]], log: Path) -> None:
        binary = haproxy_binary()
        if binary is None:
            raise RuntimeError("haproxy is not installed (./scripts/test.sh installs it)")
        self.http_port, self.grpc_port = free_ports(2)
        self.url = f"http://127.0.0.1:{self.http_port}"
        self.grpc_endpoint = f"127.0.0.1:{self.grpc_port}"
        env = config_env(collectors, self.http_port, self.grpc_port)
        check = subprocess.run(
            [binary, "-c", "-f", str(CONFIG)], env={**os.environ, **env}, capture_output=True, text=True
        )
        if check.returncode != 0:
            raise RuntimeError(f"haproxy -c refused {CONFIG}: {check.stdout}{check.stderr}")
        super().__init__([binary, "-db", "-f", str(CONFIG)], log, env)

    def wait_ready(self, timeout: float = 30) -> None:
        """Until a request through the balancer reaches a collector's /healthz."""
        self.wait_http(f"{self.url}/healthz", timeout)


@contextmanager
def behind_haproxy(collectors: list[C], log: Path) -> Iterator[HAProxy]:
    """Wait for each of ``collectors``, then put HAProxy in front of them; on leaving, stop the
    balancer and every collector in the list (also ones appended to it meanwhile)."""
    lb = None
    try:
        for c in collectors:
            c.wait_ready()
        lb = HAProxy([(c.port, c.grpc_port) for c in collectors], log)
        lb.wait_ready()
        yield lb
    finally:
        if lb is not None:
            lb.stop()
        for c in collectors:
            c.stop()
