"""A wrong file, a wrong path, a wrong flag or a wrong name gets one line that names it and says what
to do, never a traceback, and a non-zero exit: what a newcomer's first mistakes should meet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragfault.cli import COMMANDS, build_parser, main
from tests.conftest import Server
from tests.demo_db import demo_db  # noqa: F401
from tests.ragfault.clirun import NOWHERE, cli


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _args(tmp: Path) -> dict[str, list[str]]:
    """Each command that takes --db, with the other arguments it needs (valid ones)."""
    label = {"trace_id": "t", "metric": "judge_answer_support", "label": "supported", "annotator": "a"}
    labels = write(tmp / "labels.jsonl", json.dumps(label) + "\n")
    gold = write(tmp / "gold.jsonl", json.dumps({"case_id": "c", "query": "q"}) + "\n")
    rules = write(tmp / "gate.toml", '[[rule]]\nmetric = "traces"\nmin = 1\n')
    return {
        "query": ["query", "attribution"],
        "report": ["report"],
        "gate": ["gate", "--rules", str(rules)],
        "compare": ["compare", "--run", "a", "--baseline", "b"],
        "affected": ["affected"],
        "evaluate": ["evaluate"],
        "load": ["load", "gold", str(gold)],
        "label": ["label", "import", str(labels)],
        "judge": ["judge", "calibrate"],
        "export": ["export", str(tmp / "out")],
        "doctor": ["doctor"],
        "gold": ["gold", "promote", "ab" * 16, "--cause", "ok"],
        "serve": ["serve", "--http-port", "0", "--grpc-port", "0"],
        "demo": ["demo"],
    }


def test_every_command_given_a_jsonl_file_as_db_says_so_in_one_line(tmp_path: Path) -> None:
    data = write(tmp_path / "traces.jsonl", json.dumps({"trace_id": "t", "spans": []}) + "\n")
    before = data.read_bytes()
    args = _args(tmp_path)
    taking_db = {name for name, p in _subparsers().items() if any(a.dest == "db" for a in p._actions)}  # type: ignore[attr-defined]
    assert taking_db == set(args)  # every command with --db is tried here
    for name, argv in args.items():
        out = cli(tmp_path, *argv, "--db", data.name)
        assert out.returncode != 0, name
        assert "Traceback" not in out.stderr, (name, out.stderr)
        (line,) = out.stderr.strip().splitlines()
        assert "traces.jsonl is not a DuckDB database (a JSON or JSON lines file)" in line, (name, line)
        assert "--db" in line, line  # and what to pass instead
    assert data.read_bytes() == before
    assert not (tmp_path / "out").exists()


def _subparsers() -> dict[str, object]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if a.dest == "command"]
    return dict(action.choices)  # type: ignore[arg-type]


def test_a_mistyped_db_while_a_server_runs_points_at_the_server(tmp_path: Path, server: Server) -> None:
    (tmp_path / "ragfault.duckdb").touch()
    for argv in (["query", "SELECT 1"], ["doctor"], ["evaluate"], ["report"]):
        out = cli(tmp_path, *argv, "--db", "ragfualt.duckdb", server=server.url)
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        (line,) = out.stderr.strip().splitlines()
        assert "no database file ragfualt.duckdb" in line and "ragfault.duckdb" in line, line
        assert f"a ragfault server answers at {server.url}: leave out --db" in line, line
        assert not (tmp_path / "ragfualt.duckdb").exists()


# the arguments each command needs before an unknown option can be the only error
REQUIRED = {
    "query": ["SELECT 1"],
    "load": ["gold", "f.jsonl"],
    "label": ["import", "f.jsonl"],
    "judge": ["calibrate"],
    "compare": ["--run", "a", "--baseline", "b"],
    "gate": ["--rules", "r.toml"],
    "export": ["out"],
    "kb": ["conflicts", "--kb", "a", "--gold", "b", "--out", "c"],
    "gold": ["promote", "ab" * 16],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_mistyped_option_prints_the_usage_of_its_subcommand(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, *REQUIRED.get(command, []), "--formt", "json"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    usage = "ragfault kb conflicts" if command == "kb" else f"ragfault {command}"
    assert err.startswith(f"usage: {usage} "), err
    assert err.rstrip().endswith(f"{usage}: error: unrecognized arguments: --formt json"), err


def test_the_db_help_says_what_the_code_does() -> None:
    for name, p in _subparsers().items():
        text = p.format_help()  # type: ignore[attr-defined]
        assert "opened even while" not in text, name
        if "--db" in text and name not in ("serve", "demo"):
            assert "a file a running server holds is refused" in " ".join(text.split()), name
    demo = " ".join(_subparsers()["demo"].format_help().split())  # type: ignore[attr-defined]
    assert "an existing file is refused, except an earlier demo's with --force" in demo


def test_a_run_or_dataset_nothing_is_stored_under_is_refused(
    demo_db: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["report", "--db", str(demo_db), "--server", NOWHERE]
    assert main([*base, "--run", "does-not-exist"]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err
        == "ragfault: no traces of run 'does-not-exist' (the runs stored: demo-v1 (17)); pass --run one of those"
    )
    assert main([*base, "--dataset", "nope.jsonl"]) == 2
    assert (
        "no gold cases of dataset 'nope.jsonl' (the datasets stored: helpdesk-demo" in capsys.readouterr().err
    )
    assert main([*base, "--run", "demo-v1"]) == 0  # a stored run still reports
    assert "== Root causes ==" in capsys.readouterr().out


def test_doctor_on_a_service_without_traces_names_the_services_that_have_some(
    demo_db: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["doctor", "--db", str(demo_db), "--server", NOWHERE, "--service", "nope"]) == 1
    out = capsys.readouterr().out.strip()
    assert out == (
        "No settled traces of service 'nope'. Services with settled traces: helpdesk-demo (20); "
        "pass --service one of those."
    )
    assert (
        main(["doctor", "--db", str(demo_db), "--server", NOWHERE, "--format", "json", "--service", "x"]) == 1
    )
    rep = json.loads(capsys.readouterr().out)
    assert rep["groups"] == [] and rep["services"] == [{"service_name": "helpdesk-demo", "traces": 20}]
