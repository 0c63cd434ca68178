"""One settings tree: every table of the config file validated at startup, errors that name the
table, the key, the value and what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from collector.errors import ConfigError
from ragfault.cli import main
from ragfault.settings import TABLES, load_settings


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
