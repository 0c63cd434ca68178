"""A newcomer's first hour: mistakes get one clear line that says what is wrong and what exists,
never a traceback, and nothing is created by a command that failed."""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ragfault.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
NOWHERE = "http://127.0.0.1:9"  # nothing listens there


def cli(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragfault.cli", *argv], capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "RAGFAULT_SERVER": NOWHERE},
    )  # fmt: skip


def test_loading_a_missing_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "x.duckdb").touch()
    out = cli(tmp_path, "load", "gold", "missing.jsonl", "--db", "x.duckdb")
    assert out.returncode == 1
    assert out.stderr.strip() == "ragfault: No such file or directory: missing.jsonl"


def test_a_mistyped_db_is_refused_and_the_files_there_are_named(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"case_id": "c", "query": "q"}) + "\n", encoding="utf-8")
    (tmp_path / "real.duckdb").write_bytes(b"")
    for argv in (["evaluate", "--db", "rael.duckdb"], ["load", "gold", str(gold), "--db", "rael.duckdb"]):
        out = cli(tmp_path, *argv)
        assert out.returncode == 2, out.stderr
        assert "Traceback" not in out.stderr
        assert "no database file rael.duckdb" in out.stderr and "real.duckdb" in out.stderr
        assert not (tmp_path / "rael.duckdb").exists()
    out = cli(tmp_path, "demo", "--db", "no/such/dir/demo.duckdb")
    assert out.returncode == 2 and "no/such/dir" in out.stderr
    assert not (tmp_path / "no").exists()


def test_a_mistyped_bundled_query_lists_the_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", "atribution", "--db", str(tmp_path / "x.duckdb"), "--server", NOWHERE]) == 2
    err = capsys.readouterr().err
    assert "no bundled query 'atribution'" in err and "attribution" in err.split("are:", 1)[1]


def test_gold_fields_are_strict_and_errors_say_field_value_and_what_is_allowed(tmp_path: Path) -> None:
    from evaluators.gold import GoldCase, parse_jsonl
    from ragfault_core.errors import PermanentError

    with pytest.raises(PermanentError) as info:
        parse_jsonl(json.dumps({"case_id": "c", "query": "q", "answerable": "yes"}), GoldCase, "case_id")
    assert str(info.value) == 'line 1: field answerable = "yes": must be true or false'
    with pytest.raises(PermanentError) as info:
        parse_jsonl(json.dumps({"case_id": "c", "query": "q", "risk": "huge"}), GoldCase, "case_id")
    assert str(info.value) == """line 1: field risk = "huge": allowed: 'high' or 'normal'"""
    assert "pydantic" not in str(info.value)


def test_an_unknown_gate_metric_lists_the_metrics(tmp_path: Path) -> None:
    from ragfault.gate import load_rules
    from ragfault_core.errors import ConfigError

    rules = tmp_path / "gate.toml"
    rules.write_text('[[rule]]\nmetric = "recal@5"\nmin = 0.5\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_rules(rules)
    text = str(info.value)
    assert "unknown metric 'recal@5'" in text and "recall@K" in text and "candidate_recall" in text
    assert "errors.pydantic.dev" not in text


def test_serve_on_a_busy_port_fails_first_and_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        db = tmp_path / "x.duckdb"
        assert main(["serve", "--db", str(db), "--http-port", str(port), "--grpc-port", "0"]) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port} (http_port)" in err and "collector ready" not in err
    assert list(tmp_path.iterdir()) == []


def test_every_option_has_help_with_its_default_and_every_command_a_description() -> None:
    parser = build_parser()
    commands: dict[str, argparse.ArgumentParser] = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr,assignment]
    for name, sub in commands.items():
        assert sub.description, f"ragfault {name} has no description"
        text = sub.format_help()
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, f"ragfault {name} {action.option_strings or action.dest} has no help"
            if action.option_strings and action.default not in (None, False, []):
                assert str(action.default) in text, (
                    f"ragfault {name} {action.option_strings[0]} hides its default"
                )
