"""Documentation stays true: the README's commands, and the site in docs/ — every setting, command,
evaluator, root cause, gold-case field, HTTP route, bundled query, table and view is on its page, its
SQL examples run, and the site builds with no broken link or anchor."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from pydantic import BaseModel

from collector.config import ServerSettings
from collector.store import Store
from evaluators.gold import Evidence, GoldCase, KBDocument
from evaluators.service.registry import discover
from queries import all_queries, load_query
from ragfault.cli import COMMANDS, build_parser
from ragfault.settings import _MODELS as TABLE_MODELS
from ragfault.settings import TABLES
from tests.conftest import Server
from tests.demo_db import demo_db  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text(encoding="utf-8")
QUERY_README = (ROOT / "queries" / "README.md").read_text(encoding="utf-8")


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


CONFIG = page("configuration.md")


def test_readme_says_what_it_is_then_gives_the_two_commands() -> None:
    before, block = README.split("```bash", 1)
    prose = [p for p in before.split("\n\n") if p.strip() and not p.startswith("#")]
    assert prose and "ragfault" in prose[0], "the README opens with a paragraph saying what ragfault is"
    first_block = block.split("```", 1)[0]
    assert "ragfault demo" in first_block
    assert "./scripts/test.sh" in first_block
    script = ROOT / "scripts" / "test.sh"
    assert script.is_file() and os.access(script, os.X_OK), "the README's test command is not there"


def test_readme_is_a_few_screens_and_its_links_resolve() -> None:
    assert len(README.splitlines()) <= 120, "the README is a few screens: the reference goes to docs/"
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [t for t in targets if "://" not in t]
    assert any(t.startswith("docs/") for t in local)
    for target in local:
        assert (ROOT / target).exists(), f"the README links to {target}, which does not exist"


@pytest.mark.parametrize("name", [n for n in ServerSettings.model_fields if n != "config_file"])
def test_every_server_setting_is_documented(name: str) -> None:
    assert f"| `{name}` |" in _table_rows("server") or f"`{name}`" in CONFIG, (
        f"setting {name} is missing from docs/configuration.md"
    )


def _table_rows(table: str) -> str:
    """The rows of the settings table of ``[table]`` in docs/configuration.md."""
    head = f"| `[{table}]` setting |"
    assert head in CONFIG, f"docs/configuration.md has no table of [{table}] settings"
    return CONFIG.split(head, 1)[1].split("\n\n", 1)[0]


@pytest.mark.parametrize(
    ("table", "name"),
    [(t, n) for t, model in TABLE_MODELS.items() for n in model.model_fields],
)
def test_every_setting_of_every_table_is_documented(table: str, name: str) -> None:
    assert f"| `{name}` |" in _table_rows(table), f"[{table}] {name} is missing from docs/configuration.md"


def test_every_table_of_the_settings_tree_has_its_table() -> None:
    documented = {part.split("]`", 1)[0] for part in CONFIG.split("| `[")[1:]}
    assert documented == set(TABLES)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_is_documented(command: str) -> None:
    parser = build_parser()
    subcommands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert command in subcommands, f"ragfault {command} is listed but not installed"
    assert f"| `ragfault {command}` |" in page("getting-started.md"), (
        f"`ragfault {command}` is not in the command table of docs/getting-started.md"
    )


def test_every_evaluator_is_documented() -> None:
    metrics = page("metrics.md")
    for name, spec in discover().items():
        assert spec.version and spec.description, name
        assert f"| {name} |" in metrics or f"`{name}`" in metrics or spec.tier == "judge", name


def test_the_root_causes_are_listed_in_the_attribution_order() -> None:
    """The order the ``attribution`` view applies is the order the site states, and every root cause
    the view can give is on the home page."""
    header = load_query("attribution").description
    order = header.split("in the order:", 1)[1].split(";", 1)[0]
    causes = [c.strip() for c in order.split(",")] + ["ok"]
    documented = re.findall(r"^\| \d+ \| `(\w+)` \|", page("metrics.md"), flags=re.M)
    assert documented == causes
    home = page("index.md")
    assert all(f"`{c}`" in home for c in causes if c != "ok")


def _fields_table(text: str, head: str) -> dict[str, str]:
    """``field -> required cell`` of the table whose header starts with ``head``."""
    rows = text.split(f"| {head} |", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    out = {}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        out[cells[0].strip("`")] = cells[1]
    return out


@pytest.mark.parametrize(
    ("model", "head"),
    [(GoldCase, "gold case field"), (KBDocument, "knowledge-base field"), (Evidence, "evidence field")],
)
def test_every_gold_and_kb_field_is_documented_as_required_or_optional(
    model: type[BaseModel], head: str
) -> None:
    table = _fields_table(page("gold-cases.md"), head)
    assert set(table) == set(model.model_fields), f"docs/gold-cases.md's {head} table"
    for name, field in model.model_fields.items():
        said = table[name]
        if field.is_required():
            assert said == "required", f"{name} is required"
        else:
            assert said != "required", f"{name} is optional"


def test_every_http_route_is_documented(server: Server) -> None:
    """Every operation a real server publishes in its OpenAPI document is on the HTTP API page."""
    spec = server.http.get("/openapi.json").json()
    api = page("http-api.md")
    routes = [(m.upper(), p) for p, ops in spec["paths"].items() for m in ops]
    assert len(routes) > 20
    missing = [f"{m} {p}" for m, p in routes if f"`{m} {p}`" not in api]
    assert not missing, f"routes missing from docs/http-api.md: {missing}"


def _sql_examples() -> list[tuple[str, str]]:
    out = []
    for path in sorted(DOCS.glob("*.md")):
        for block in re.findall(r"```sql\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S):
            for statement in block.split(";"):
                if statement.strip() and not statement.strip().startswith("-- name:"):
                    out.append((path.name, statement.strip()))
    return out


def test_the_sql_examples_of_the_site_run_on_the_demo(demo_db: Path, tmp_path: Path) -> None:  # noqa: F811
    examples = _sql_examples()
    assert examples, "the site shows SQL examples"
    db = tmp_path / "demo.duckdb"
    shutil.copy(demo_db, db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        for name, sql in examples:
            rows = con.execute(sql).fetchall()
            assert rows, f"an SQL example of docs/{name} returns nothing on the demo: {sql}"
    finally:
        con.close()


@pytest.mark.parametrize("name", sorted(all_queries()))
def test_every_query_is_in_the_queries_readme(name: str) -> None:
    assert f"`{name}`" in QUERY_README, f"query {name} is missing from queries/README.md"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built with ``mkdocs build --strict``, as CI builds it."""
    pytest.importorskip("mkdocs", reason="mkdocs is not installed: pip install -e '.[docs]'")
    pytest.importorskip("material", reason="mkdocs-material is not installed: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    assert "WARNING" not in log, log
    return out


def test_the_site_builds_with_every_page(site: Path) -> None:
    pages = sorted(p.stem for p in DOCS.glob("*.md"))
    for name in pages:
        html = site / ("index.html" if name == "index" else f"{name}/index.html")
        assert html.is_file(), f"docs/{name}.md was not built"
    assert "trace.png" in (site / "index.html").read_text(encoding="utf-8")


def test_the_sql_reference_lists_every_query_table_view_and_column(site: Path, tmp_path: Path) -> None:
    html = (site / "sql-reference" / "index.html").read_text(encoding="utf-8")
    for name in all_queries():
        assert f'id="{name}"' in html, f"query {name} is not in the SQL reference"
    store = Store(tmp_path / "catalog.duckdb")
    try:
        columns = (
            store.cursor()
            .execute(
                "SELECT table_name, table_type, column_name FROM information_schema.columns "
                "JOIN information_schema.tables USING (table_name)"
            )
            .fetchall()
        )
    finally:
        store.close()
    for table, kind, column in columns:
        anchor = f'id="{"view" if kind == "VIEW" else "table"}-{table.replace("_", "_")}"'
        assert anchor in html, f"{kind} {table} is not in the SQL reference"
        assert f"<code>{column}</code>" in html, f"column {table}.{column} is not in the SQL reference"
