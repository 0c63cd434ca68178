"""Moving a trace's earlier verdicts to history reads only the rows written since its first verdict
(``traces.verdicts_since``, migration 007), and still finds every one of them: when the clock was
set back, when only some evaluators ran in between, and for traces evaluated before the column
existed (searched everywhere)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from collector.ingest.span_rows import flatten
from collector.store.schema import batch_to_arrow
from evaluators.service.config import EvaluationSettings, evaluator_configs
from evaluators.service.registry import discover
from evaluators.service.runner import Runner, StoreRunner, evaluate_tables, fetch_with_window, write_job
from ragfault.local import LocalStore
from tests.collector.otlp_build import new_trace_id, rag_spans, request

T0 = datetime(2026, 11, 1, 12, 0, 0)
AT = datetime(2026, 11, 2, 10, 0, 0)  # the first evaluation


@pytest.fixture
def local(tmp_path: Path) -> LocalStore:
    store = LocalStore(str(tmp_path / "v.duckdb"))
    for h in range(2):
        tid = new_trace_id()
        batch = flatten(request(rag_spans(tid)), received_at=T0 + timedelta(hours=h))
        store.store.write_spans(store.store.con, batch_to_arrow(batch))
    assert store.settle_all() == 2
    return store


def runner_of(local: LocalStore, only: str | None = None) -> StoreRunner:
    specs = discover()
    configs = evaluator_configs(EvaluationSettings(), specs)
    if only is not None:
        configs = {only: configs[only]}
    return StoreRunner(local.store.cursor(), local.write, Runner(specs, configs))


def evaluate_at(local: LocalStore, now: datetime, only: str | None = None) -> None:
    """Every trace evaluated with the clock at ``now`` (by one evaluator only, as the judge tier
    writes some pairs of a trace and not the others)."""
    runner = runner_of(local, only)
    cur = local.store.cursor()
    runner.refs.refresh(cur)
    ids = [t for (t,) in cur.execute("SELECT trace_id FROM traces").fetchall()]
    tables, window = fetch_with_window(cur, ids)
    out = evaluate_tables(runner.runner, runner.refs, tables, now, ())
    local.write(write_job(out, now, window))


def left_over(local: LocalStore) -> list[tuple]:
    """Verdicts in ``evaluations`` that a later generation of the same pair should have replaced."""
    return local.store.con.execute(
        "SELECT e.trace_id, e.evaluator, e.generation, e.evaluated_at FROM evaluations e "
        "JOIN (SELECT trace_id, evaluator, max(generation) AS g FROM evaluations GROUP BY ALL) m "
        "USING (trace_id, evaluator) WHERE e.generation < m.g"
    ).fetchall()


def since(local: LocalStore) -> set:
    return {s for (s,) in local.store.con.execute("SELECT verdicts_since FROM traces").fetchall()}


def test_every_earlier_verdict_moves_whatever_the_clock_did_in_between(local: LocalStore) -> None:
    evaluate_at(local, AT)  # every evaluator
    assert since(local) == {AT}
    evaluate_at(local, AT - timedelta(hours=1), only="refusal")  # the clock was set back
    assert since(local) == {AT - timedelta(hours=1)}  # the least, not the latest
    evaluate_at(local, AT + timedelta(hours=1), only="refusal")
    assert since(local) == {AT - timedelta(hours=1)}
    evaluate_at(local, AT + timedelta(hours=2))  # every evaluator again
    assert left_over(local) == []
    con = local.store.con
    gens = con.execute("SELECT DISTINCT generation, evaluated_at FROM evaluations").fetchall()
    assert gens == [(4, AT + timedelta(hours=2))]
    # the first run's verdicts of the other evaluators (written before the last two) moved too
    moved = con.execute(
        "SELECT count(*) FROM evaluation_history WHERE evaluator <> 'refusal' AND evaluated_at = $t",
        {"t": AT},
    ).fetchall()[0][0]
    assert moved > 0


def test_traces_evaluated_before_the_column_existed_are_searched_everywhere(local: LocalStore) -> None:
    evaluate_at(local, AT)
    con = local.store.con
    # one trace as the migration leaves a trace whose verdicts it could not date, its rows older
    old = con.execute("SELECT min(trace_id) FROM traces").fetchall()[0][0]
    con.execute("UPDATE traces SET verdicts_since = NULL WHERE trace_id = $t", {"t": old})
    con.execute(
        "UPDATE evaluations SET evaluated_at = TIMESTAMP '2020-01-01' WHERE trace_id = $t", {"t": old}
    )
    evaluate_at(local, AT + timedelta(hours=1))  # the batch holds it and a trace dated AT
    assert left_over(local) == []
    moved = con.execute(
        "SELECT count(*) FROM evaluation_history WHERE trace_id = $t AND evaluated_at = TIMESTAMP '2020-01-01'",
        {"t": old},
    ).fetchall()[0][0]
    assert moved > 0
    dated = dict(con.execute("SELECT trace_id, verdicts_since FROM traces").fetchall())
    assert dated.pop(old) is None  # still unknown: rows it had before may be anywhere
    assert set(dated.values()) == {AT}


def test_the_migration_dates_the_verdicts_already_stored(local: LocalStore, tmp_path: Path) -> None:
    evaluate_at(local, AT)
    evaluate_at(local, AT + timedelta(hours=1), only="refusal")
    con = local.store.con
    # the database as it was before migration 007
    con.execute("ALTER TABLE traces DROP COLUMN verdicts_since")
    con.execute("DELETE FROM schema_migrations WHERE version = 7")
    local.close()
    reopened = LocalStore(str(tmp_path / "v.duckdb"))
    assert since(reopened) == {AT}  # the earliest verdict each trace still has
    evaluate_at(reopened, AT + timedelta(hours=2))
    assert left_over(reopened) == []
