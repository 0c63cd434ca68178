"""The bundled attribution statements equal their plain one-pass formulations (``bench/reference/``),
output for output, on the demo database: the narrow passes that make them cheap at scale change
nothing they return."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import duckdb

from tests.demo_db import demo_db  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.same_results import compare, difference, references  # noqa: E402


def test_every_rewritten_statement_has_its_reference() -> None:
    rewritten = {
        "attribution",
        "live_attribution",
        "case_results",
        "closed_book",
        "triage",
        "online_health",
        "why_no_score",
        "follows_stale",
        "coverage",
        "layer_metrics",
        "refusal_table",
    }
    assert rewritten | {"kb_affected"} <= set(references())


def test_bundled_outputs_equal_the_references(demo_db: Path) -> None:  # noqa: F811
    outcomes = {o.name: o for o in compare(demo_db)}
    assert set(references()) <= set(outcomes)
    for view_reader in (
        "root_causes",
        "quadrant",
        "case_results",
        "triage",
        "layer_metrics",
        "refusal_table",
    ):
        assert view_reader in outcomes  # the statements reading the views are compared too
    assert outcomes["attribution"].rows > 0 and outcomes["live_attribution"].rows > 0
    assert outcomes["case_results"].rows > 0 and outcomes["root_causes"].rows > 0
    different = {o.name: o.first_difference for o in outcomes.values() if not o.same}
    assert not different


def test_views_computing_changed_traces_equal_the_references(demo_db: Path) -> None:  # noqa: F811
    """Every trace of the demo taken as changed by a write not yet flushed: the file's views compute all
    their facts when read, and still give what the references do."""
    outcomes = {o.name: o for o in compare(demo_db, changed=10**6)}
    assert outcomes["attribution"].rows > 0 and outcomes["live_attribution"].rows > 0
    assert outcomes["trace_health"].rows > 0 and outcomes["trace_coverage"].rows > 0
    assert outcomes["case_verdicts"].rows > 0 and outcomes["layer_metrics"].rows > 0
    assert not {o.name: o.first_difference for o in outcomes.values() if not o.same}


def test_closed_book_and_kb_affected_equal_theirs_on_rows(demo_db: Path, tmp_path: Path) -> None:  # noqa: F811
    """The demo has no closed-book twin and no knowledge-base change: a copy gets both (the demo run
    marked as its own twin, every registry document changed), so those two compare rows, not nothing."""
    db = tmp_path / "marked.duckdb"
    shutil.copy(demo_db, db)
    con = duckdb.connect(str(db))
    try:
        con.execute("INSERT INTO marked_runs VALUES ('demo-v1', NULL, 'demo-v1', now())")
        con.execute("INSERT INTO kb_changes SELECT doc_id, 'updated', NULL, NULL, now() FROM kb_documents")
    finally:
        con.close()
    outcomes = {o.name: o for o in compare(db, only={"closed_book", "kb_affected"})}
    assert outcomes["closed_book"].rows > 0 and outcomes["kb_affected"].rows > 0
    assert outcomes["closed_book"].same, outcomes["closed_book"].first_difference
    assert outcomes["kb_affected"].same, outcomes["kb_affected"].first_difference


def test_a_difference_is_found_and_located() -> None:
    assert difference([(1, "a")], [(1, "a")]) == ""
    assert difference([(1, "a")], [(1, "b")]).startswith("row 0:")
    assert difference([(1,)], []) == "1 rows against 0"


def test_a_view_declaring_query_runs_as_its_view() -> None:
    from collector.store.views import view_statement
    from queries import all_queries
    from ragfault.commands.query import resolve_sql

    for q in all_queries().values():
        if q.view:
            assert not q.params and resolve_sql(q.name) == view_statement(q.view)
            assert view_statement(q.view).split() == ["SELECT", "*", "FROM", q.view]
        else:
            assert resolve_sql(q.name) == q.sql
