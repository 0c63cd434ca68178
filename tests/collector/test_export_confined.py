"""An export through the API stays inside the server's ``export_dir`` even when a directory below it
(a table's, a day's) is a symbolic link leading elsewhere: refused with 400 before anything is
written there, and nothing is deleted."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.collector.otlp_build import new_trace_id, request, span
from tests.conftest import Server, make_settings

PROTOBUF = {"Content-Type": "application/x-protobuf"}


@pytest.fixture
def exporting(tmp_path: Path) -> Iterator[Server]:
    archive = tmp_path / "archive"
    archive.mkdir()
    cfg = tmp_path / "ragfault.toml"
    cfg.write_text(f"[retention]\nexport_dir = '{archive}'\n", encoding="utf-8")
    srv = Server(make_settings(tmp_path, config_file=str(cfg)))
    try:
        for i in range(3):
            body = request([span(new_trace_id(), name=f"op{i}")]).SerializeToString()
            assert srv.http.post("/v1/traces", content=body, headers=PROTOBUF).status_code == 200
        srv.wait_for("SELECT count(*) FROM spans", 3)
        srv.settle()
        yield srv
    finally:
        srv.stop()


def files_under(path: Path) -> list[str]:
    return sorted(str(Path(d, f).relative_to(path)) for d, _, fs in os.walk(path) for f in fs)


def test_a_table_directory_linked_outside_is_refused_and_nothing_is_deleted(
    exporting: Server, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "archive" / "out").mkdir()
    (tmp_path / "archive" / "out" / "spans").symlink_to(outside, target_is_directory=True)
    r = exporting.http.post("/api/v1/export", json={"out_dir": "out", "delete_after": True})
    assert r.status_code == 400, r.text
    assert "symbolic link" in r.json()["detail"]
    assert files_under(outside) == []
    assert exporting.scalar("SELECT count(*) FROM traces") == 3  # nothing deleted
    assert exporting.scalar("SELECT count(*) FROM spans") == 3


def test_a_day_directory_linked_outside_is_refused(exporting: Server, tmp_path: Path) -> None:
    day = exporting.scalar("SELECT strftime(min(start_time), '%Y-%m-%d') FROM traces")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    spans_dir = tmp_path / "archive" / "by-day" / "spans"
    spans_dir.mkdir(parents=True)
    (spans_dir / f"day={day}").symlink_to(outside, target_is_directory=True)
    r = exporting.http.post("/api/v1/export", json={"out_dir": "by-day", "delete_after": True})
    assert r.status_code == 400, r.text
    assert files_under(outside) == []
    assert exporting.scalar("SELECT count(*) FROM traces") == 3


def test_a_link_that_stays_inside_and_a_plain_directory_still_export(
    exporting: Server, tmp_path: Path
) -> None:
    archive = tmp_path / "archive"
    (archive / "linked" / "real-spans").mkdir(parents=True)
    (archive / "linked" / "spans").symlink_to(archive / "linked" / "real-spans", target_is_directory=True)
    r = exporting.http.post("/api/v1/export", json={"out_dir": "linked"})
    assert r.status_code == 200, r.text
    assert r.json()["rows"]["spans"] == 3
    assert any(f.endswith(".parquet") for f in files_under(archive / "linked" / "real-spans"))
    # a link from the export's directory to another one beside it is refused too: every file of an
    # export lies under the directory it names
    (archive / "beside").mkdir()
    (archive / "across").mkdir()
    (archive / "across" / "spans").symlink_to(archive / "beside", target_is_directory=True)
    assert exporting.http.post("/api/v1/export", json={"out_dir": "across"}).status_code == 400
    assert files_under(archive / "beside") == []
    r = exporting.http.post("/api/v1/export", json={"out_dir": "plain", "delete_after": True})
    assert r.status_code == 200, r.text
    assert any(f.startswith("spans/day=") for f in files_under(archive / "plain"))
    assert exporting.scalar("SELECT count(*) FROM traces") == 0
