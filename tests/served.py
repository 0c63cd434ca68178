"""Child processes the tests and the benchmarks start (``ragfault serve``, HAProxy, a peer's server):
output to a log file, ready once a URL answers, stopped with SIGTERM and then SIGKILL. One place for
what every such test and benchmark needs, so a fix to start-up or shutdown is made once."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from tests.waiting import wait_until


def api_client(url: str, timeout: float = 30) -> Any:
    """An ``httpx.Client`` for a server's API that a test keeps across calls. It lets an idle
    connection go after 2 s, before the server closes it (``keep_alive_seconds``, 5 s): with both
    at 5 s, a call made as the server closes the idle connection is reset."""
    import httpx

    return httpx.Client(base_url=url, timeout=timeout, limits=httpx.Limits(keepalive_expiry=2.0))


def free_ports(n: int) -> list[int]:
    """``n`` distinct ports free now. Every socket stays bound until all are chosen: ports asked
    for one after another can be the same one, as the kernel hands out a port it just freed."""
    held = [socket.socket() for _ in range(n)]
    try:
        for s in held:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in held]
    finally:
        for s in held:
            s.close()


def free_port() -> int:
    return free_ports(1)[0]


def log_tail(log: Path, chars: int = 2000) -> str:
    return log.read_text(errors="replace")[-chars:] if log.exists() else ""


class NotReady(AssertionError):
    """The process exited, or its URL did not answer in time; the message ends with its log's tail."""


def wait_http(
    url: str,
    proc: subprocess.Popen[Any],
    timeout: float,
    log: Path,
    ready: Callable[[int], bool] = lambda status: status == 200,
) -> None:
    """Poll ``url`` until its status satisfies ``ready``; raise :class:`NotReady` when ``proc`` exits
    first or ``timeout`` seconds pass."""

    def status() -> int | str:
        if proc.poll() is not None:
            args = proc.args
            program = os.fsdecode(args if isinstance(args, (str, bytes, os.PathLike)) else args[0])
            raise NotReady(f"{program} exited with {proc.returncode}:\n{log_tail(log)}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                return int(r.status)
        except urllib.error.HTTPError as e:
            return e.code
        except (urllib.error.URLError, OSError) as e:
            return f"no answer ({e})"

    try:
        wait_until(
            status, lambda got: isinstance(got, int) and ready(got), what=url, timeout=timeout, every=0.1
        )
    except NotReady:
        raise
    except AssertionError as e:
        raise NotReady(f"{e}:\n{log_tail(log)}") from None


def stop_process(proc: subprocess.Popen[Any], grace: float = 30) -> None:
    """SIGTERM, and SIGKILL after ``grace`` seconds."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


class Served:
    """A child process writing its output to ``log``; a context manager that stops it."""

    grace = 30.0

    def __init__(
        self, args: Sequence[str], log: Path, env: Mapping[str, str] | None = None, cwd: Path | None = None
    ) -> None:
        self.log = log
        with log.open("w") as out:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(
                list(args), env={**os.environ, **(env or {})}, stdout=out, stderr=subprocess.STDOUT, cwd=cwd
            )

    def wait_http(self, url: str, timeout: float) -> None:
        wait_http(url, self.proc, timeout, self.log)

    def kill(self) -> None:
        """SIGKILL, as a crash would end it."""
        self.proc.kill()
        self.proc.wait(30)

    def stop(self) -> None:
        stop_process(self.proc, self.grace)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class Collector(Served):
    """``ragfault serve`` with ``serve_args`` (a store, settings) on two free ports (HTTP and gRPC), run
    as ``python -m ragfault.cli`` by this interpreter, so from the code the working directory holds."""

    def __init__(
        self,
        serve_args: Sequence[str],
        log: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.port, self.grpc_port = free_ports(2)
        self.url = f"http://127.0.0.1:{self.port}"
        self.grpc_endpoint = f"127.0.0.1:{self.grpc_port}"
        args = [sys.executable, "-m", "ragfault.cli", "serve", *serve_args, "--http-port", str(self.port),
                "--grpc-port", str(self.grpc_port)]  # fmt: skip
        super().__init__(args, log, env, cwd)

    def wait_ready(self, timeout: float = 120) -> None:
        self.wait_http(f"{self.url}/healthz", timeout)

    def metric(self, name: str) -> float:
        """A sample's value from ``/metrics`` (the first series of that name), 0 when absent."""
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=10) as r:
            for line in r.read().decode().splitlines():
                head, _, value = line.rpartition(" ")
                if head == name or head.startswith(name + "{"):
                    return float(value)
        return 0.0

    def sql(self, query: str, **params: object) -> list[list[Any]]:
        """Rows of ``query`` (with ``$name`` parameters) through the SQL API, at most 10,000; an answer
        other than 200 fails."""
        import httpx

        body = {"sql": query, "params": params, "max_rows": 10_000}
        r = httpx.post(f"{self.url}/api/v1/sql", json=body, timeout=120)
        assert r.status_code == 200, r.text
        rows: list[list[Any]] = r.json()["rows"]
        return rows
