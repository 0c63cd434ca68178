"""The ``case_verdicts`` view gives the rows of its definition (``queries/case_verdicts.sql`` over every
verdict) on every backend, through writes, a later write of one evaluator, and retention; and the three
gold-set reports that read it (``layer_metrics``, ``refusal_table``, ``case_results``) give what their
formulations over every verdict give (``bench/reference/``). A file store keeps the rows as facts
(``collector.store.file.facts``); each test runs with every write flushing them (either way) and with
none (``stored.FLUSH_MODES``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from bench.same_results import references as formulations
from collector.store import references, retention
from evaluators.gold import GoldCase, case_row
from queries import all_queries
from tests.store.contract.stored import (
    FLUSH_MODES,
    T0,
    add_trace,
    is_lake,
    needs_tables,
    rows,
    set_flushing,
    write_results,
)

A, B, C = "a" * 32, "b" * 32, "c" * 32


@pytest.fixture(autouse=True, params=FLUSH_MODES)
def flushing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    return set_flushing(monkeypatch, str(request.param))


ORDER = "ORDER BY trace_id, metric, span_id NULLS FIRST"


def _viewed(backend: Any) -> list[tuple[Any, ...]]:
    return rows(backend, f"SELECT * FROM case_verdicts {ORDER}")


def _defined(backend: Any) -> list[tuple[Any, ...]]:
    return rows(backend, f"SELECT * FROM ({all_queries()['case_verdicts'].sql}) {ORDER}")


def _reports_equal_their_references(backend: Any) -> None:
    for name in ("layer_metrics", "refusal_table", "case_results"):
        bundled = all_queries()[name]
        ref = formulations()[name]
        got = rows(backend, bundled.sql, **{k: None for k in bundled.used_params()})
        want = rows(backend, ref.sql, **{k: None for k in ref.used_params()})
        assert got == want, name
        assert got, name  # the reports have rows to compare: the gold traces' verdicts


def test_the_view_keeps_the_reports_verdicts_of_gold_traces(backend: Any) -> None:
    needs_tables(backend, "verdicts.write_verdicts", "traces", "evaluations", "gold_cases")
    cases = [GoldCase(case_id="c-a", query="q", category="refund"), GoldCase(case_id="c-b", query="q")]
    references.upsert_gold(backend.con, [case_row(c, "gold", T0) for c in cases])
    add_trace(backend, A, case_id="c-a", run_id="r1")
    add_trace(backend, B, case_id="c-b", run_id="r1", at=T0 + timedelta(minutes=1))
    add_trace(backend, C, run_id="r1", at=T0 + timedelta(minutes=2))
    first = T0 + timedelta(hours=1)
    # the reports' metrics and one they do not read (evidence_opened)
    results = {
        "candidate_recall": False,
        "context_retention": True,
        "fact_coverage": True,
        "evidence_opened": False,
    }
    write_results(backend, [A, B], results, 1, first)
    write_results(backend, [C], results, 1, first, gold=False)  # live traffic: no gold case
    viewed = _viewed(backend)
    assert viewed == _defined(backend)
    assert {(r[0], r[4]) for r in viewed} == {
        (t, m) for t in (A, B) for m in ("candidate_recall", "context_retention", "fact_coverage")
    }
    _reports_equal_their_references(backend)

    # one evaluator runs again on A alone: the view follows, its other verdicts stay
    write_results(backend, [A], {"candidate_recall": True}, 2, first + timedelta(hours=1))
    viewed = _viewed(backend)
    assert viewed == _defined(backend)
    assert [r[9] for r in viewed if r[0] == A and r[4] == "candidate_recall"] == [True]
    assert len([r for r in viewed if r[0] == A]) == 3
    _reports_equal_their_references(backend)

    # retention deletes B's rows with its verdicts
    retention.delete_traces(backend.con, [B])
    assert {r[0] for r in _viewed(backend)} == {A}
    assert _viewed(backend) == _defined(backend)
    if not is_lake(backend):
        kept = "SELECT DISTINCT trace_id FROM case_verdicts_facts UNION SELECT trace_id FROM facts_changed"
        kept_ids = {r[0] for r in rows(backend, kept)}
        assert A in kept_ids and B not in kept_ids  # B's facts went, kept or still to compute
    _reports_equal_their_references(backend)
