"""Documentation stays true: every setting, command, evaluator and bundled query is documented."""

from __future__ import annotations

from pathlib import Path

import pytest

from collector.config import ServerSettings
from evaluators.registry import discover
from queries import all_queries
from ragfault.cli import COMMANDS, build_parser
from ragfault.settings import _MODELS as TABLE_MODELS
from ragfault.settings import TABLES

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
EVAL_README = (ROOT / "evaluators" / "README.md").read_text(encoding="utf-8")
QUERY_README = (ROOT / "queries" / "README.md").read_text(encoding="utf-8")


def test_readme_starts_with_the_two_commands() -> None:
    first_block = README.split("```bash", 1)[1].split("```", 1)[0]
    assert "ragfault demo" in first_block
    assert "pytest" in first_block


@pytest.mark.parametrize("name", [n for n in ServerSettings.model_fields if n != "config_file"])
def test_every_server_setting_is_documented(name: str) -> None:
    assert f"`{name}`" in README, f"setting {name} is missing from the README's configuration table"


def _table_rows(table: str) -> str:
    """The README's table of the settings of ``[table]``."""
    head = f"| `[{table}]` setting |"
    assert head in README, f"the README has no table of [{table}] settings"
    return README.split(head, 1)[1].split("\n\n", 1)[0]


@pytest.mark.parametrize(
    ("table", "name"),
    [(t, n) for t, model in TABLE_MODELS.items() for n in model.model_fields],
)
def test_every_setting_of_every_table_is_documented(table: str, name: str) -> None:
    assert f"| `{name}` |" in _table_rows(table), (
        f"[{table}] {name} is missing from the README's configuration"
    )


def test_every_table_of_the_settings_tree_has_its_readme_table() -> None:
    documented = {part.split("]`", 1)[0] for part in README.split("| `[")[1:]}
    assert documented == set(TABLES)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_is_documented(command: str) -> None:
    parser = build_parser()
    subcommands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert command in subcommands, f"ragfault {command} is listed but not installed"
    assert f"ragfault {command}" in README, f"`ragfault {command}` is not in the README"


def test_every_evaluator_is_documented() -> None:
    for name, spec in discover().items():
        assert spec.version and spec.description, name
        assert f"| {name} |" in EVAL_README or f"`{name}`" in EVAL_README or spec.tier == "judge", name


@pytest.mark.parametrize("name", sorted(all_queries()))
def test_every_query_is_documented(name: str) -> None:
    assert f"`{name}`" in QUERY_README, f"query {name} is missing from queries/README.md"
