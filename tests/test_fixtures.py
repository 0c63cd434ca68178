"""The shared server fixtures: settings given by the marker reach the server, each test's servers
are stopped when it ends, and a named store is its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Server, StartServer


@pytest.mark.server_settings(sql_row_cap=7, api_token="t0ken")
def test_the_marker_gives_the_server_its_settings(server: Server) -> None:
    assert server.settings.sql_row_cap == 7
    assert server.http.get("/api/v1/traces").status_code == 401  # the token is in force


def test_the_factory_stops_every_server_it_started_and_names_stores(tmp_path: Path) -> None:
    servers = StartServer(tmp_path)
    first, other = servers(), servers("other", sql_row_cap=3)
    assert Path(first.settings.db) == tmp_path / "ragfault.duckdb"
    assert Path(other.settings.db) == tmp_path / "other" / "ragfault.duckdb"
    assert other.settings.sql_row_cap == 3 and first.settings.sql_row_cap != 3
    assert first.thread.thread.is_alive() and other.thread.thread.is_alive()
    servers.stop_all()
    assert not first.thread.thread.is_alive() and not other.thread.thread.is_alive()
    assert servers.started == []
    again = servers()  # the same name is the same store, free again once its server stopped
    try:
        assert again.scalar("SELECT count(*) FROM spans") == 0
    finally:
        servers.stop_all()
