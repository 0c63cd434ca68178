"""When a file store computes the facts of the traces a write changed (``facts.changed``): a write that
leaves ``FLUSH_TRACES`` of them, or one whose rows go back more than ``FLUSH_AGE`` before it, flushes
them all; before that the views compute them when read. Either way the views give their definitions'
rows, through a reopen too."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from collector.store import Store
from collector.store.file import facts
from queries import all_queries
from tests.store.contract.stored import T0, add_trace, rows, write_results

A, B, C = "a" * 32, "b" * 32, "c" * 32
VIEWS = ("attribution", "live_attribution")  # trace_health's rows come from settling, which add_trace skips
# (tests/store/contract/test_attribution_facts.py holds it under both rules)


def _same_as_defined(store: Any) -> None:
    for view in VIEWS:
        defined = rows(store, f"SELECT * FROM ({all_queries()[view].sql}) ORDER BY trace_id")
        assert rows(store, f"SELECT * FROM {view} ORDER BY trace_id") == defined, view


def _changed(store: Any) -> list[str]:
    return [r[0] for r in rows(store, "SELECT DISTINCT trace_id FROM facts_changed ORDER BY 1")]


def _kept(store: Any) -> list[str]:
    return [r[0] for r in rows(store, "SELECT trace_id FROM attribution_facts ORDER BY 1")]


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(facts, "FLUSH_TRACES", 3)
    s = Store(tmp_path / "flush.duckdb")
    for i, t in enumerate((A, B, C)):
        add_trace(s, t, case_id=f"c-{t[0]}", run_id="r1", at=T0 + timedelta(minutes=i))
    yield s
    s.close()


def test_changed_traces_are_computed_when_read_until_enough_of_them_flush(store: Any, tmp_path: Path) -> None:
    now = T0 + timedelta(minutes=4)  # within FLUSH_AGE of the traces' receipt (T0 on)
    write_results(store, [A], {"candidate_recall": False}, 1, now)
    write_results(store, [B], {"candidate_recall": True, "context_retention": False}, 1, now)
    assert _changed(store) == [A, B] and _kept(store) == []
    assert {r[0]: r[1] for r in rows(store, "SELECT trace_id, root_cause FROM attribution")} == {
        A: "candidate_miss",
        B: "dropped_before_context",
    }
    _same_as_defined(store)

    # the changed set survives a reopen, and the views still compute it
    store.close()
    reopened = Store(tmp_path / "flush.duckdb")
    try:
        assert _changed(reopened) == [A, B]
        _same_as_defined(reopened)

        # the third changed trace reaches FLUSH_TRACES: all three are computed and kept
        write_results(reopened, [C], {"candidate_recall": True}, 1, now)
        assert _changed(reopened) == [] and _kept(reopened) == [A, B, C]
        _same_as_defined(reopened)
    finally:
        reopened.close()


def test_a_write_whose_rows_go_back_further_than_flush_age_flushes(store: Any) -> None:
    first = T0 + timedelta(minutes=3)
    write_results(store, [A], {"candidate_recall": False}, 1, first)
    assert _changed(store) == [A]

    # B evaluated while A's rows (received at T0) are within FLUSH_AGE: kept changed
    write_results(store, [B], {"candidate_recall": False}, 1, T0 + facts.FLUSH_AGE)
    assert _changed(store) == [A, B]
    # A evaluated again later: the rows to read go back further than FLUSH_AGE, so everything flushes
    later = T0 + facts.FLUSH_AGE + timedelta(seconds=1)
    write_results(store, [A], {"candidate_recall": True}, 2, later)
    assert _changed(store) == [] and _kept(store) == [A, B]
    assert rows(store, "SELECT root_cause FROM attribution WHERE trace_id = $t", t=A) == [("ok",)]
    _same_as_defined(store)


def test_retention_deletes_changed_traces_with_their_rows(store: Any) -> None:
    from collector.store import retention

    write_results(store, [A, B], {"candidate_recall": False}, 1, T0 + timedelta(minutes=4))
    assert _changed(store) == [A, B]
    retention.delete_traces(store.con, [A])
    assert _changed(store) == [B]
    _same_as_defined(store)
