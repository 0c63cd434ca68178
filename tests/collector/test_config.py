"""Settings: defaults < TOML [server] < RAGFAULT_* environment < flags; bad settings fail at startup."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from collector.config import ServerSettings, build_settings
from ragfault.cli import main
from ragfault_core.errors import ConfigError


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ServerSettings.model_fields:
        monkeypatch.delenv(f"RAGFAULT_{name.upper()}", raising=False)


def write_toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ragfault.toml"
    path.write_text(text)
    return path


def test_defaults() -> None:
    s = build_settings()
    assert (s.db, s.http_port, s.grpc_port, s.host) == ("./ragfault.duckdb", 4318, 4317, "127.0.0.1")
    assert s.ingest_token is None and s.api_token is None  # auth off by default
    assert 0 < s.settle_seconds <= 10


def test_precedence_file_env_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = write_toml(tmp_path, """
[server]
db = "from-file.duckdb"
http_port = 5000
grpc_port = 5001
settle_seconds = 7.5
max_queue_spans = 1234
source_keys = ["a", "b"]

[evaluation]
ignored_here = true
""")  # fmt: skip
    s = build_settings(cfg)
    assert (s.db, s.http_port, s.grpc_port, s.settle_seconds, s.max_queue_spans) == (
        "from-file.duckdb", 5000, 5001, 7.5, 1234
    )  # fmt: skip
    assert s.source_keys == ("a", "b")

    monkeypatch.setenv("RAGFAULT_HTTP_PORT", "6000")
    monkeypatch.setenv("RAGFAULT_SETTLE_SECONDS", "2")
    monkeypatch.setenv("RAGFAULT_INGEST_TOKEN", "env-token")
    monkeypatch.setenv("RAGFAULT_SOURCE_KEYS", "x, y")
    s = build_settings(cfg)
    assert (s.db, s.http_port, s.settle_seconds, s.ingest_token, s.source_keys) == (
        "from-file.duckdb", 6000, 2.0, "env-token", ("x", "y")
    )  # fmt: skip

    s = build_settings(cfg, {"http_port": 7000, "db": "flag.duckdb", "settle_seconds": None})
    assert (s.db, s.http_port, s.grpc_port, s.settle_seconds) == ("flag.duckdb", 7000, 5001, 2.0)


@pytest.mark.parametrize(
    ("toml", "env"),
    [
        ("[server]\nhttp_port = 70000\n", {}),
        ("[server]\nsettle_seconds = 0\n", {}),
        ("[server]\nhttp_port = 5000\ngrpc_port = 5000\n", {}),
        ("[server]\nno_such_setting = 1\n", {}),
        ("[server]\nmax_body_bytes = 100\nmax_decompressed_bytes = 10\n", {}),
        ("[server\n", {}),
        ("", {"RAGFAULT_HTTP_PORT": "not-a-number"}),
        ("", {"RAGFAULT_MAX_QUEUE_SPANS": "-1"}),
    ],
    ids=[
        "port-range",
        "settle-zero",
        "same-ports",
        "unknown-key",
        "limits-order",
        "bad-toml",
        "env-type",
        "env-range",
    ],
)
def test_invalid_settings_raise_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str, env: dict[str, str]
) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(ConfigError):
        build_settings(write_toml(tmp_path, toml))


def test_missing_config_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        build_settings(tmp_path / "nope.toml")


def test_serve_exits_2_on_bad_settings(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    db = str(tmp_path / "x.duckdb")
    assert main(["serve", "--db", db, "--http-port", "70000"]) == 2
    assert "http_port" in capsys.readouterr().err
    assert main(["serve", "--db", db, "--config", str(tmp_path / "missing.toml")]) == 2
    assert "not found" in capsys.readouterr().err
    monkeypatch.setenv("RAGFAULT_SETTLE_SECONDS", "-3")
    assert main(["serve", "--db", db]) == 2
    assert "settle_seconds" in capsys.readouterr().err
    assert not Path(db).exists()  # it failed before touching anything


def test_serve_exits_2_in_a_real_process(tmp_path: Path) -> None:
    cfg = write_toml(tmp_path, "[server]\nhttp_port = 4999\ngrpc_port = 4999\n")
    out = subprocess.run([sys.executable, "-m", "ragfault.cli", "serve", "--config", str(cfg)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)  # fmt: skip
    assert out.returncode == 2
    assert "must differ" in out.stderr
