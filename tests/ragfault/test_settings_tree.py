"""One settings tree: every table of the config file validated at startup, errors that name the
table, the key, the value and what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragfault.cli import main
from ragfault.settings import TABLES, load_settings
from ragfault_core.errors import ConfigError


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "ragfault.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_every_table_is_read_into_one_frozen_tree(tmp_path: Path) -> None:
    cfg = write(
        tmp_path,
        "[server]\nhttp_port = 5000\n[evaluation]\nbatch_size = 7\n[sampling]\nproduction_rate = 0.5\n"
        "[retention]\nexport_dir = 'x'\n",
    )
    tree = load_settings(cfg)
    assert tree.server.http_port == 5000 and tree.evaluation.batch_size == 7
    assert tree.sampling.production_rate == 0.5 and tree.retention.export_dir == "x" and tree.judge is None
    with pytest.raises(Exception, match="frozen"):
        tree.server = tree.server  # type: ignore[misc]
    assert set(TABLES) >= {"server", "evaluation", "sampling", "judge", "retention"}


def test_an_unknown_table_or_key_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown table \[evalution\].*\[evaluation\]"):
        load_settings(write(tmp_path, "[evalution]\nbatch_size = 7\n"))
    with pytest.raises(ConfigError, match=r"\[sampling\] production_rat: unknown setting"):
        load_settings(write(tmp_path, "[sampling]\nproduction_rat = 0.5\n"))
    with pytest.raises(ConfigError) as info:
        load_settings(write(tmp_path, "[server]\nlog_level = 3\nhttp_port = 'x'\n"))
    text = str(info.value)
    assert "[server] http_port = 'x'" in text and "errors.pydantic.dev" not in text


def test_serve_refuses_a_bad_config_before_starting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = write(tmp_path, "[retention]\nmax_age_dayz = 3\n")
    db = tmp_path / "never.duckdb"
    assert main(["serve", "--config", cfg, "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ragfault: invalid settings: [retention] max_age_dayz: unknown setting")
    assert not db.exists()


def test_components_take_their_tables_from_the_tree_passed_down(tmp_path: Path) -> None:
    import httpx

    from collector.maintenance.retention import RetentionService, RetentionSettings
    from evaluators.service.config import EvaluationSettings
    from evaluators.service.sampling_settings import SamplingSettings
    from ragfault.server import ServerThread
    from ragfault.settings import Settings
    from tests.conftest import make_settings

    # a tree made in code, no config file: only the tree can carry these values
    tree = Settings(
        server=make_settings(tmp_path),
        evaluation=EvaluationSettings(batch_size=7),
        sampling=SamplingSettings(production_rate=0.25),
        retention=RetentionSettings(export_dir=str(tmp_path / "exports")),
    )
    srv = ServerThread(tree).start()
    try:
        rt = srv.runtime
        assert rt.tree is tree and rt.settings is tree.server
        assert rt.find(RetentionService).settings is tree.retention
        (evaluation,) = [e for e in rt.extensions if hasattr(e, "sampling")]
        assert evaluation.settings is tree.evaluation and evaluation.sampling is tree.sampling
        # the export API writes under the tree's export_dir (without it the call is refused)
        r = httpx.post(f"http://127.0.0.1:{srv.http_port}/api/v1/export", json={"out_dir": "o"}, timeout=60)
        assert r.status_code == 200, r.text
        assert r.json()["out_dir"] == str((tmp_path / "exports" / "o").resolve())
    finally:
        srv.stop()


def test_serving_reads_the_config_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tomllib

    from collector.maintenance.retention import RetentionService
    from ragfault.server import ServerThread
    from tests.conftest import free_ports

    http_port, grpc_port = free_ports(2)
    cfg = write(
        tmp_path,
        f"[server]\ndb = '{tmp_path / 'one.duckdb'}'\nhttp_port = {http_port}\ngrpc_port = {grpc_port}\n"
        "decode_workers = 0\n[evaluation]\nbatch_size = 7\n[retention]\nexport_dir = 'x'\n"
        "[experiments]\n",
    )
    reads: list[str] = []
    real = tomllib.load

    def counted(fh, **kw):  # noqa: ANN001, ANN003, ANN202
        reads.append(fh.name)
        return real(fh, **kw)

    monkeypatch.setattr(tomllib, "load", counted)
    tree = load_settings(cfg)
    srv = ServerThread(tree).start()  # every component built, the evaluation service started
    try:
        assert srv.runtime.find(RetentionService).settings.export_dir == "x"
        assert reads == [cfg], reads
    finally:
        srv.stop()
