"""The dashboard's facts against the bundled queries on the same database: every section the dashboard
draws from the facts (layered metrics, refusal table, root causes, quadrant, trend) gives the numbers
``queries/*.sql`` give over the tables, after the first computation and after each way the data moves
(traces evaluated again with other settings, traces deleted, verdicts written around the verdict
writer, gold cases reloaded); only the traces that changed are computed again. Saved facts are
loaded by the next server on the file and brought up to date the same way."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from collector.normalize import DEFAULT_SOURCE_KEYS
from collector.store.reader import run_select
from collector.store.retention import delete_traces
from collector.store.ui_facts import Building, DashboardFacts, root_causes
from evaluators.service.config import EvaluationSettings, evaluator_configs
from evaluators.service.registry import discover
from evaluators.service.runner import Runner, StoreRunner
from queries import load_query
from ragfault.local import LocalStore
from ragfault.ui.api import BUNDLED, FAST, SECTIONS, dashboard, ui_query
from tests.conftest import Server, make_settings
from tests.demo_db import demo_db  # noqa: F401 (fixture)


@pytest.fixture
def local(demo_db: Path, tmp_path: Path) -> Iterator[LocalStore]:  # noqa: F811
    shutil.copy(demo_db, tmp_path / "demo.duckdb")
    store = LocalStore(str(tmp_path / "demo.duckdb"))
    try:
        yield store
    finally:
        store.close()


def _rows(con: Any, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    r = run_select(con, sql, params, row_cap=100_000)
    return [dict(zip(r.columns, row, strict=True)) for row in r.rows]


def bundled(local: LocalStore, filters: dict[str, Any], bucket: str = "day") -> dict[str, Any]:
    """Each section as the bundled queries compute it over the tables (no facts registered)."""
    con = local.store.cursor()
    try:
        out = {}
        for name in SECTIONS:
            q = load_query(name)
            out[name] = _rows(con, q.sql, q.bind(filters))
        trend = ui_query("ui_trend")  # over the attribution view itself here
        out["trend"] = _rows(con, trend.sql, trend.bind({**filters, "bucket": bucket}))
        return out
    finally:
        con.close()


def fast(
    local: LocalStore, facts: DashboardFacts, filters: dict[str, Any], bucket: str = "day"
) -> dict[str, Any]:
    con = local.store.cursor()
    try:
        assert facts.use(con)
        return dashboard(con, filters, bucket)
    finally:
        con.close()


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


FILTERS: list[dict[str, Any]] = [
    {},
    {"run_id": "demo-v1"},
    {"dataset": "helpdesk-demo"},
    {"dataset": "no-such-dataset"},  # nothing applies: every rate and mean is NULL, never 0 or 1
    {"run_id": "no-such-run", "since": "2000-01-01 00:00:00"},
]


def check_all(
    local: LocalStore, facts: DashboardFacts, extra: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    first: dict[str, Any] = {}
    for filters in FILTERS + (extra or []):
        full = {k: None for k in ("run_id", "dataset", "since", "until")} | filters
        want, got = bundled(local, full), fast(local, facts, full)
        for name in (*SECTIONS, "trend"):
            assert same(got[name], want[name]), (filters, name, got[name], want[name])
        first = first or want
    return first


def test_facts_give_the_bundled_numbers_and_follow_each_change(local: LocalStore) -> None:
    facts = DashboardFacts()
    con = local.store.cursor()
    # the traces spread over three days, so that a time filter takes some hours whole (their sums)
    # and cuts others (their rows)
    con.execute(
        "UPDATE traces SET start_time = start_time - to_minutes(r.k * 97) FROM "
        "(SELECT trace_id, row_number() OVER (ORDER BY trace_id) AS k FROM traces) r WHERE traces.trace_id = r.trace_id"
    )
    lo, hi = con.execute("SELECT min(start_time), max(start_time) FROM traces").fetchall()[0]
    con.close()
    a, b = lo + (hi - lo) / 3 + timedelta(minutes=13), hi - (hi - lo) / 4 - timedelta(minutes=29)
    window = [{"since": str(a)}, {"until": str(b), "run_id": "demo-v1"}, {"since": str(a), "until": str(b)}]

    want = check_all(local, facts, window)
    assert facts.refreshes.full == 1 and facts.refreshes.partial == 0
    layer = {(r["category"], r["metric"]): r for r in want["layer_metrics"]}
    assert layer["(all)", "recall@5"]["n_traces"] > 0 and {r["category"] for r in want["refusal_table"]} > {
        "(all)"
    }
    assert set(FAST) | set(BUNDLED) == set(
        fast(local, facts, dict.fromkeys(("run_id", "dataset", "since", "until")))["timings_ms"]
    )

    # three traces evaluated again with other cut-offs: their recall@1/3/5/10 move to history and
    # recall@2 appears, for those three only
    _evaluate_again(local, 3)
    want = check_all(local, facts, window)
    assert (facts.refreshes.full, facts.refreshes.partial, facts.refreshes.traces) == (1, 1, 3)
    recall2 = {(r["category"], r["metric"]): r for r in want["layer_metrics"]}["(all)", "recall@2"]
    assert recall2["n_traces"] + recall2["not_applicable"] == 3  # one trace-level row each

    # two traces deleted (retention): their rows leave every table of the facts
    con = local.store.cursor()
    gone = [
        r[0]
        for r in con.execute("SELECT trace_id FROM attribution ORDER BY trace_id DESC LIMIT 2").fetchall()
    ]
    con.close()
    before = facts.facts.traces if facts.facts else 0
    local.write(lambda tx: delete_traces(tx, gone))
    check_all(local, facts, window)
    assert (facts.refreshes.full, facts.refreshes.partial) == (1, 2) and facts.facts is not None
    assert facts.facts.traces == before - 2

    # a verdict written around write_verdicts (no generation raised): everything is computed again
    local.store.con.execute(
        "INSERT INTO evaluations SELECT * REPLACE ('recall@7' AS metric) FROM evaluations "
        "WHERE metric = 'recall@2' AND span_id IS NULL"
    )
    want = check_all(local, facts)
    assert facts.refreshes.full == 2 and "without a stamp" in facts.refreshes.last
    recall7 = {(r["category"], r["metric"]): r for r in want["layer_metrics"]}["(all)", "recall@7"]
    assert (recall7["n_traces"], recall7["not_applicable"]) == (
        recall2["n_traces"],
        recall2["not_applicable"],
    )

    # a gold case in another category: every row of its traces moves, so everything is computed again
    local.store.con.execute("UPDATE gold_cases SET category = 'renamed', loaded_at = now() WHERE case_id = "
                            "(SELECT case_id FROM attribution WHERE case_id IS NOT NULL ORDER BY 1 LIMIT 1)")  # fmt: skip
    want = check_all(local, facts)
    assert facts.refreshes.full == 3 and "renamed" in {r["category"] for r in want["refusal_table"]}

    # nothing changed: the same facts, nothing computed
    n = (facts.refreshes.full, facts.refreshes.partial)
    check_all(local, facts)
    assert (facts.refreshes.full, facts.refreshes.partial) == n


def test_the_trace_list_reads_the_view_until_the_facts_exist(local: LocalStore) -> None:
    facts = DashboardFacts()
    con = local.store.cursor()
    try:
        assert facts.use(con, build=False) is False and facts.refreshes.full == 0
        assert facts.use(con) is True and facts.use(con, build=False) is True
        assert facts.refreshes.full == 1
    finally:
        con.close()


def test_a_pages_own_root_causes_are_the_views(local: LocalStore) -> None:
    con = local.store.cursor()
    try:
        want = dict(con.execute("SELECT trace_id, root_cause FROM attribution").fetchall())
        ids = [r[0] for r in con.execute("SELECT trace_id FROM traces ORDER BY trace_id").fetchall()]
        got = root_causes(con, ids)
    finally:
        con.close()
    assert got == want and len(ids) > len(want)  # the demo's live traffic has no gold case, no root cause


def _evaluate_again(local: LocalStore, n: int) -> list[str]:
    """``n`` traces evaluated again with other cut-offs (their stamps move)."""
    specs = discover()
    settings = EvaluationSettings(evaluators={"retrieval": {"ks": [2]}})
    runner = StoreRunner(
        local.store.cursor(),
        local.write,
        Runner(specs, evaluator_configs(settings, specs)),
        DEFAULT_SOURCE_KEYS,
    )
    runner.refs.refresh(runner.cursor)
    con = local.store.cursor()
    ids = [
        r[0]
        for r in con.execute(
            "SELECT trace_id FROM attribution ORDER BY trace_id LIMIT $n", {"n": n}
        ).fetchall()
    ]
    con.close()
    runner.evaluate(ids)
    return ids


def test_saved_facts_are_loaded_after_a_restart_and_follow_what_changed_meanwhile(
    local: LocalStore, tmp_path: Path
) -> None:
    saved = tmp_path / "demo.duckdb.ui-facts"
    first = DashboardFacts(path=saved)
    check_all(local, first)
    first.stop()  # saved once: after the full computation (in the background) or here
    assert (first.refreshes.full, first.refreshes.saved) == (1, 1) and (saved / "facts.json").exists()
    assert not first.save()  # nothing moved since

    # a new server on the same file: the saved facts, nothing computed
    again = DashboardFacts(path=saved)
    check_all(local, again)
    assert (again.refreshes.loaded, again.refreshes.full, again.refreshes.partial) == (1, 0, 0)
    assert again.refreshes.history[0].startswith("loaded ")

    # traces evaluated again while no server ran: only those are computed at the next start
    _evaluate_again(local, 3)
    third = DashboardFacts(path=saved)
    want = check_all(local, third)
    assert (third.refreshes.full, third.refreshes.partial, third.refreshes.traces) == (0, 1, 3)
    assert {r["metric"] for r in want["layer_metrics"]} >= {"recall@2"}
    third.stop()  # saves what moved: the next start computes nothing
    fourth = DashboardFacts(path=saved)
    check_all(local, fourth)
    assert (fourth.refreshes.full, fourth.refreshes.partial) == (0, 0)

    # facts of another form (the statements or the view changed): computed again, not used
    meta = json.loads((saved / "facts.json").read_text())
    (saved / "facts.json").write_text(json.dumps({**meta, "form": "another"}))
    fifth = DashboardFacts(path=saved)
    check_all(local, fifth)
    assert (fifth.refreshes.loaded, fifth.refreshes.full) == (1, 1)


def test_a_call_that_does_not_wait_is_told_the_facts_are_being_computed(local: LocalStore) -> None:
    facts = DashboardFacts(cursor=local.store.cursor, patience=0)
    con = local.store.cursor()
    try:
        with facts.lock:  # the computation in the background cannot finish before the lock is let go
            facts.start_full("first")
            with pytest.raises(Building) as building:
                facts.use(con, wait=False)
            assert building.value.why == "first" and facts.running is not None
            assert facts.use(con, build=False, wait=False) is False  # the trace list reads the view
        assert facts._thread is not None
        facts._thread.join()
        assert facts.running is None and facts.refreshes.full == 1
        assert facts.use(con, wait=False) is True
    finally:
        con.close()
        facts.stop()


def test_a_server_started_again_answers_its_first_dashboard_call_from_the_saved_facts(
    demo_db: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    shutil.copy(demo_db, tmp_path / "ragfault.duckdb")
    server = Server(make_settings(tmp_path))
    try:
        facts = server.runtime.find(DashboardFacts)
        assert facts._thread is not None
        facts._thread.join()  # computed at start, in the background
        assert facts.refreshes.full == 1
        want = server.http.get("/api/v1/ui/dashboard").json()
    finally:
        server.stop()
    assert (tmp_path / "ragfault.duckdb.ui-facts" / "facts.json").exists()  # saved at once and at stop

    server = Server(make_settings(tmp_path))
    try:
        r = server.http.get("/api/v1/ui/dashboard")
        facts = server.runtime.find(DashboardFacts)
        assert r.status_code == 200
        assert (facts.refreshes.loaded, facts.refreshes.full) == (1, 0)
        got = r.json()
    finally:
        server.stop()
    for name in (*SECTIONS, "trend"):
        assert same(got[name], want[name]), name


@pytest.mark.parametrize(
    "drop",
    [[], [0], [9], [0, 1, 2], [3, 4, 8], [1, 3, 5, 7], list(range(10))],
    ids=["none", "first", "last", "a run at the start", "two runs", "every other", "all"],
)
def test_a_traces_rows_are_replaced_in_the_order_kept(drop: list[int]) -> None:
    """The rows of the traces computed again are dropped (as slices of the rest, across chunks) and
    their new rows appended: the rows a filter would keep, in the same order."""
    import pyarrow as pa

    from collector.store.ui_facts_tables import replace_rows

    ids = [f"t{i}" for i in range(10)]
    old = pa.concat_tables(
        [pa.table({"trace_id": ids[a:b], "v": list(range(a, b))}) for a, b in ((0, 4), (4, 7), (7, 10))]
    )
    gone = pa.array([ids[i] for i in drop], pa.string())
    new = pa.table({"trace_id": [ids[i] for i in drop], "v": [100 + i for i in drop]})
    out = replace_rows(old, gone, new)
    kept = [(t, v) for v, t in enumerate(ids) if v not in drop]
    assert list(zip(out.column("trace_id").to_pylist(), out.column("v").to_pylist(), strict=True)) == [
        *kept,
        *((ids[i], 100 + i) for i in drop),
    ]
