"""An export into a directory that cannot be written (a real read-only filesystem: a tmpfs mounted
``-o ro``, since the tests run as root and permissions would not stop them) ends with a clear
error, through the API and on a database file, and deletes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.collector.otlp_build import new_trace_id, request, span
from tests.conftest import Server, StartServer, free_port, make_settings

PROTOBUF = {"Content-Type": "application/x-protobuf"}


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(mnt)], capture_output=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.decode().strip()}")
    try:
        with pytest.raises(OSError):  # really read-only, for root too
            (mnt / "probe").write_text("x")
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _ingest(srv: Server, n: int) -> None:
    for i in range(n):
        r = srv.http.post(
            "/v1/traces",
            content=request([span(new_trace_id(), name=f"op{i}")]).SerializeToString(),
            headers=PROTOBUF,
        )
        assert r.status_code == 200
    srv.wait_for("SELECT count(*) FROM spans", n)
    srv.settle()


def test_an_api_export_into_a_read_only_directory_is_a_clear_error_and_deletes_nothing(
    tmp_path: Path, read_only_dir: Path, start_server: StartServer
) -> None:
    cfg = tmp_path / "ragfault.toml"
    cfg.write_text(f"[retention]\nexport_dir = '{read_only_dir}'\n", encoding="utf-8")
    srv = start_server(config_file=str(cfg))
    _ingest(srv, 3)
    traces = srv.scalar("SELECT count(*) FROM traces")
    assert traces == 3
    r = srv.http.post("/api/v1/export", json={"out_dir": "out", "delete_after": True})
    assert r.status_code == 500, r.text
    detail = r.json()["detail"]
    assert "cannot write the export" in detail and "Read-only file system" in detail, detail
    assert "Traceback" not in r.text
    assert srv.scalar("SELECT count(*) FROM traces") == traces  # nothing deleted
    assert srv.scalar("SELECT count(*) FROM spans") == 3
    assert os.listdir(read_only_dir) == []


def test_ragfault_export_on_a_file_into_a_read_only_directory_is_one_line(
    tmp_path: Path, read_only_dir: Path, start_server: StartServer
) -> None:
    srv = Server(make_settings(tmp_path))
    try:
        _ingest(srv, 2)
    finally:
        srv.stop()
    db = srv.settings.db
    p = subprocess.run(
        [sys.executable, "-m", "ragfault.cli", "export", "--db", db, "--server", f"http://127.0.0.1:{free_port()}",
         "--delete-after", str(read_only_dir / "out")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 1, (p.returncode, p.stderr[-500:])
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Read-only file system" in lines[0], p.stderr[-500:]
    check = start_server()
    assert check.scalar("SELECT count(*) FROM traces") == 2  # nothing deleted
