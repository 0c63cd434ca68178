"""A real server per test module, with an optional config file (policy settings)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from tests.conftest import Server, make_settings


def start_server(tmp: Path, config: str | None = None) -> Server:
    overrides = {}
    if config is not None:
        path = tmp / "ragfault.toml"
        path.write_text(config, encoding="utf-8")
        overrides["config_file"] = str(path)
    return Server(make_settings(tmp, **overrides))


def wait_evaluated(server: Server, trace_ids: list[str], timeout: float = 45) -> None:
    """Force assembly once, then wait until every trace is evaluated."""
    server.settle()
    server.wait_for(
        "SELECT count(*) FROM traces WHERE evaluated_at IS NOT NULL AND list_contains($ids, trace_id)",
        len(trace_ids),
        timeout=timeout,
        ids=trace_ids,
    )


def serve(tmp: Path, config: str | None = None) -> Iterator[Server]:
    srv = start_server(tmp, config)
    try:
        yield srv
    finally:
        srv.stop()
