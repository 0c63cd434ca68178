"""The UI's statements are complete in their files and stay in step where they share a definition:
the dashboard's sections count the same rows, the trace list's statements filter alike, and a filter
the trace list was not given costs no read of the table it joins."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from collector.store import ui as store_ui
from collector.store.sqlfiles import statement
from collector.store.templates import filled
from tests.demo_db import demo_db  # noqa: F401 (fixture)

DASH = ("dash_quadrant", "dash_root_causes", "dash_trend")
LIST = ("traces_count", "traces_page", "traces_search")
# the tables the trace list's joined filters read (the views among them over evaluations)
JOINED_TABLES = ("feedback", "attribution", "evaluations", "live_attribution")


def _body(name: str) -> str:
    return filled("ui", name)


def _cte(text: str) -> str:
    """The ``WITH c AS (...)`` of a dashboard statement."""
    return text[text.index("WITH c AS (") : text.index("\n)\n") + 2]


def _where(text: str) -> str:
    """The trace list's conditions: from its ``WHERE`` to the end of the statement's filter, each line
    stripped (the search statement indents them inside its CTE)."""
    start = text.index("WHERE")
    end = min(i for i in (text.find("\nORDER BY", start), text.find("\n)", start), len(text)) if i >= 0)
    return "\n".join(line.strip() for line in text[start:end].splitlines())


def test_the_dashboard_sections_add_up_the_same_counts() -> None:
    ctes = {name: _cte(_body(name)) for name in DASH}
    assert len(set(ctes.values())) == 1, "dash_* statements' WITH c AS (...) differ"
    cte = ctes[DASH[0]]
    for name in DASH:  # every filter of the counts is a parameter of the statement
        assert {"run_id", "dataset", "since", "until"} <= statement("ui", name).used_params()
    assert "_ui_cause_parts" in cte and "attribution" in cte


def test_the_trace_lists_statements_filter_alike() -> None:
    plain = {name: _where(_body(name)) for name in LIST}
    joined = {name: _where(_body(name + "_joined")) for name in LIST}
    assert len(set(plain.values())) == 1, "the trace list's statements differ in their row filters"
    assert len(set(joined.values())) == 1, "the trace list's _joined statements differ in their filters"
    row, every = plain[LIST[0]], joined[LIST[0]]
    assert every.startswith(row)  # the joined ones add to the row filters
    assert not [t for t in JOINED_TABLES if re.search(rf"\b{t}\b", row)], row
    filters = set(store_ui.ROW_FILTERS) | {"q_re"}
    for name in LIST:
        assert set(statement("ui", name).params) - {"limit", "offset"} == filters
        assert set(statement("ui", name + "_joined").params) - {"limit", "offset"} == filters | set(
            store_ui.JOINED_FILTERS
        )


@pytest.fixture
def plain_con(demo_db: Path, tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:  # noqa: F811
    """The demo's database with feedback on a few traces, opened without the store's sandbox (which
    locks the profiling settings)."""
    path = tmp_path / "demo.duckdb"
    shutil.copy(demo_db, path)
    con = duckdb.connect(str(path))
    con.execute(
        "INSERT INTO feedback (feedback_id, trace_id, kind, value, source, negative, created_at) "
        "SELECT 'f' || trace_id, trace_id, 'thumbs', 0, 'api', true, now() FROM traces ORDER BY trace_id LIMIT 3"
    )
    yield con
    con.close()


def _scanned(con: duckdb.DuckDBPyConnection, tmp: Path, text: str, params: dict[str, Any]) -> tuple[Any, int]:
    """(the rows, how many rows DuckDB scanned) of ``text``."""
    out = tmp / "profile.json"
    con.execute("PRAGMA enable_profiling = 'json'")
    con.execute(f"SET profiling_output = '{out}'")
    try:  # DuckDB 1.x names the metric to collect; 2.x collects it in its detailed mode
        con.execute("""SET custom_profiling_settings = '{"CUMULATIVE_ROWS_SCANNED": "true"}'""")
    except duckdb.CatalogException:
        con.execute("SET profiling_mode = 'detailed'")
    try:
        rows = con.execute(text, params).fetchall()
    finally:
        con.execute("PRAGMA disable_profiling")
    if not out.exists():
        # DuckDB 2 answers a count whose filters all fold away from the table's statistics: no plan
        # runs, so no profile is written, and the plan it would show scans no table
        plan = "\n".join(r[1] for r in con.execute("EXPLAIN " + text, params).fetchall())
        assert "SCAN" not in plan.upper().replace("COLUMN DATA SCAN", ""), plan
        return rows, 0
    profile = json.loads(out.read_text())
    scanned = (
        profile["query"]["total_rows_scanned"] if "query" in profile else profile["cumulative_rows_scanned"]
    )
    return rows, int(scanned)


@pytest.mark.parametrize("given", [{"negative_feedback": True}, {"feedback": False}, {}])
def test_a_joined_filter_not_given_reads_none_of_its_table(
    plain_con: duckdb.DuckDBPyConnection, tmp_path: Path, given: dict[str, Any]
) -> None:
    """Given one feedback filter, the count reads the traces and the feedback: the other filters'
    subqueries (over ``evaluations`` and the attribution views, many more rows) read nothing. Given
    none, the plain statement reads at most the traces."""
    traces, feedback, verdicts = plain_con.execute(
        "SELECT (SELECT count(*) FROM traces), (SELECT count(*) FROM feedback), (SELECT count(*) FROM evaluations)"
    ).fetchall()[0]
    assert verdicts > traces + feedback > 0
    text, params = store_ui.trace_list_statement("traces_count", given)
    rows, scanned = _scanned(plain_con, tmp_path, text, params)
    if given:
        assert text == filled("ui", "traces_count_joined")
        negative = "NOT" if given.get("feedback") is False else ""
        neg = " AND negative" if "negative_feedback" in given else ""
        want = plain_con.execute(
            f"SELECT count(*) FROM traces WHERE trace_id {negative} IN (SELECT trace_id FROM feedback WHERE true{neg})"
        ).fetchall()[0][0]
        assert rows == [(want,)]
        assert scanned <= traces + feedback, scanned
    else:
        assert text == filled("ui", "traces_count") and rows == [(traces,)]
        assert scanned <= traces, scanned
