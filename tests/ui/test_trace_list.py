"""The trace list's reads on the demo database: the count follows each filter, and pages read from
either end (a page past the middle is read backwards from the last) lie in one order."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collector.store import ui as store_ui
from ragfault.local import LocalStore
from tests.demo_db import demo_db  # noqa: F401 (fixture)

NONE = dict.fromkeys(("service", "run_id", "since", "until", "q", "feedback", "root_cause"))


@pytest.fixture
def con(demo_db: Path, tmp_path: Path) -> Iterator[Any]:  # noqa: F811
    shutil.copy(demo_db, tmp_path / "demo.duckdb")
    local = LocalStore(str(tmp_path / "demo.duckdb"))
    cur = local.store.cursor()
    try:
        yield cur
    finally:
        cur.close()
        local.close()


@pytest.mark.parametrize(
    ("sort", "desc", "order"),
    [
        ("start_time", True, "start_time DESC NULLS LAST, trace_id"),
        ("start_time", False, "start_time ASC NULLS LAST, trace_id"),
        ("latency_ms", True, "date_diff('microsecond', start_time, end_time) DESC NULLS LAST, trace_id"),
        ("service_name", False, "service_name ASC NULLS LAST, trace_id"),
    ],
)
def test_pages_from_either_end_lie_in_one_order(con: Any, sort: str, desc: bool, order: str) -> None:
    want = [r[0] for r in con.execute(f"SELECT trace_id FROM traces ORDER BY {order}").fetchall()]
    total = store_ui.traces_count(con, NONE)
    assert total == len(want) > 10
    for limit in (3, 7, 50):
        got: list[str] = []
        for offset in range(0, total + limit, limit):  # one page past the end too: empty
            page = store_ui.traces_page(con, NONE, sort, desc, limit, offset, total)
            got += [r[0] for r in page.rows]
        assert got == want, (limit, got)


def test_the_count_follows_each_filter(con: Any) -> None:
    run, service = con.execute(
        "SELECT run_id, service_name FROM traces WHERE run_id IS NOT NULL LIMIT 1"
    ).fetchall()[0]
    middle = con.execute("SELECT quantile_disc(start_time, 0.5) FROM traces").fetchall()[0][0]
    con.execute(
        "INSERT INTO feedback (feedback_id, trace_id, kind, value, source, negative, created_at) "
        "SELECT 'f' || trace_id, trace_id, 'thumbs', 1, 'api', false, now() FROM traces ORDER BY trace_id LIMIT 2"
    )
    cases = [
        ({"run_id": run}, f"run_id = '{run}'"),
        ({"service": service}, f"service_name = '{service}'"),
        ({"since": str(middle)}, f"start_time >= TIMESTAMP '{middle}'"),
        ({"until": str(middle), "run_id": run}, f"start_time < TIMESTAMP '{middle}' AND run_id = '{run}'"),
        ({"q": "SAML"}, "contains(lower(query_text), 'saml') OR contains(lower(answer_text), 'saml')"),
        ({"feedback": True}, "trace_id IN (SELECT trace_id FROM feedback)"),
        ({"feedback": False}, "trace_id NOT IN (SELECT trace_id FROM feedback)"),
        ({"root_cause": "stale_context"}, "trace_id IN (SELECT trace_id FROM attribution WHERE root_cause = 'stale_context')"),
    ]  # fmt: skip
    for params, where in cases:
        want = con.execute(f"SELECT count(*) FROM traces WHERE {where}").fetchall()[0][0]
        assert store_ui.traces_count(con, {**NONE, **params}) == want > 0, params
        page = store_ui.traces_page(con, {**NONE, **params}, "start_time", True, 200, 0, want)
        assert len(page.rows) == want, params


def test_the_filters_that_join_another_table_combine_with_the_rest(con: Any) -> None:
    """A filter that joins another table (the list then runs its ``_joined`` statements) with the row
    filters and with the others of its kind: the count, the page and a text search each match what
    the conditions select, and the filters not given select nothing away."""
    from ragfault.ui.api import traces

    con.execute(
        "INSERT INTO feedback (feedback_id, trace_id, kind, value, source, negative, created_at) "
        "SELECT 'f' || trace_id, trace_id, 'thumbs', 0, 'api', true, now() FROM traces ORDER BY trace_id LIMIT 3"
    )
    service = con.execute("SELECT service_name FROM traces ORDER BY trace_id LIMIT 1").fetchall()[0][0]
    cause = con.execute(
        "SELECT root_cause FROM attribution GROUP BY 1 ORDER BY count(*) DESC LIMIT 1"
    ).fetchall()[0][0]
    live = (
        "settled_at IS NOT NULL AND case_id IS NULL AND NOT EXISTS "
        "(SELECT 1 FROM evaluations e WHERE e.trace_id = traces.trace_id AND e.case_id IS NOT NULL)"
    )
    negative = "trace_id IN (SELECT trace_id FROM feedback WHERE negative)"
    cases = [
        ({"negative_feedback": True, "service": service}, f"{negative} AND service_name = '{service}'"),
        ({"negative_feedback": False}, f"NOT ({negative})"),
        ({"feedback": True, "negative_feedback": True}, negative),
        ({"root_cause": cause, "feedback": False}, f"trace_id IN (SELECT trace_id FROM attribution WHERE root_cause = '{cause}') AND trace_id NOT IN (SELECT trace_id FROM feedback)"),
        ({"live": False}, f"NOT ({live})"),
        ({"live": True}, live),
        ({"live_cause": cause}, f"trace_id IN (SELECT trace_id FROM live_attribution WHERE root_cause = '{cause}')"),
    ]  # fmt: skip
    counted = 0
    for params, where in cases:
        want = [
            r[0]
            for r in con.execute(
                f"SELECT trace_id FROM traces WHERE {where} ORDER BY start_time DESC, trace_id"
            ).fetchall()
        ]
        assert store_ui.traces_count(con, {**NONE, **params}) == len(want), params
        page = store_ui.traces_page(con, {**NONE, **params}, "start_time", True, 200, 0, len(want))
        assert [r[0] for r in page.rows] == want[:200], params
        counted += len(want)
    assert counted > 0
    # a text search with a joined filter: the thumbs-down traces whose texts hold a word of the first's
    word = con.execute(
        "SELECT split_part(query_text, ' ', 1) FROM traces ORDER BY trace_id LIMIT 1"
    ).fetchall()[0][0]
    want = con.execute(
        f"SELECT count(*) FROM traces WHERE {negative} AND (contains(lower(query_text), lower($w)) "
        "OR contains(lower(answer_text), lower($w)))",
        {"w": word},
    ).fetchall()[0][0]
    found = traces(con, {**NONE, "q": word, "negative_feedback": True}, "start_time", True, 50, 0)
    assert found["total"] == len(found["rows"]) == want > 0


def test_a_text_search_pages_and_counts_in_one_reading(con: Any) -> None:
    from ragfault.ui.api import traces

    where = "contains(lower(query_text), 'how') OR contains(lower(answer_text), 'how')"
    want = [
        r[0]
        for r in con.execute(
            f"SELECT trace_id FROM traces WHERE {where} ORDER BY start_time DESC, trace_id"
        ).fetchall()
    ]
    assert len(want) > 4
    got: list[str] = []
    for offset in range(0, len(want) + 3, 3):
        page = traces(con, {**NONE, "q": "HOW"}, "start_time", True, 3, offset)
        assert page["total"] == len(want) and all("_total" not in r for r in page["rows"])
        got += [r["trace_id"] for r in page["rows"]]
    assert got == want


@pytest.mark.parametrize(
    ("sort", "desc", "order"),
    [
        ("root_cause", False, "array_position($causes, root_cause) ASC NULLS LAST, case_id, trace_id"),
        ("category", True, "category DESC NULLS LAST, case_id, trace_id"),
        ("context_recall", False, "context_recall ASC NULLS LAST, case_id, trace_id"),
    ],
)
def test_case_table_pages_from_either_end_lie_in_one_order(
    con: Any, sort: str, desc: bool, order: str
) -> None:
    from ragfault.ui.api import ROOT_CAUSES, cases

    want = [r[0] for r in con.execute(f"SELECT trace_id FROM attribution ORDER BY {order}", {"causes": list(ROOT_CAUSES)} if "$" in order else None).fetchall()]  # fmt: skip
    assert len(want) > 10
    params = dict.fromkeys(("run_id", "dataset", "since", "until", "root_cause", "layer", "category", "q"))
    for limit in (3, 7):
        got: list[str] = []
        for offset in range(0, len(want) + limit, limit):
            page = cases(con, params, sort, desc, limit, offset)
            assert page["total"] == len(want)
            got += [r["trace_id"] for r in page["rows"]]
        assert got == want, (limit, got)


def test_a_text_search_matches_its_text_as_written_ignoring_case(con: Any) -> None:
    # a text full of what a regular expression would read as syntax, in three scripts
    text = r"Is 1+1 (really) [2]? C:\path costs $5.00 ^x | y* {3} 退款 Ärger"
    con.execute(
        "UPDATE traces SET query_text = $t WHERE trace_id = (SELECT min(trace_id) FROM traces)", {"t": text}
    )
    for q in (
        "1+1 (REALLY)",
        "[2]?",
        r"c:\PATH",
        "$5.00 ^X |",
        "y* {3}",
        "退款",
        "ärger",
        "ÄRGER",
        ".",
        "saml",
    ):
        want = con.execute(
            "SELECT count(*) FROM traces WHERE contains(lower(coalesce(query_text, '')), lower($q)) "
            "OR contains(lower(coalesce(answer_text, '')), lower($q)) OR trace_id = lower($q)",
            {"q": q},
        ).fetchall()[0][0]
        assert store_ui.traces_count(con, {**NONE, "q": q}) == want > 0, q
    assert store_ui.traces_count(con, {**NONE, "q": "1+1 (really) [3]"}) == 0
