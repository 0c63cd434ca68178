"""The ``attribution`` view gives the rows of its definition (``queries/attribution.sql`` run over the
verdicts) on every backend, however the verdicts got there: a first write, a later write of one evaluator
only (the trace's other verdicts were written before), a write that clears a layer, and retention. A file
store keeps the rows as facts written with the verdicts (``collector.store.file.facts``); a lake's view
is the statement itself. On a file store, facts a migration left pending are computed when it opens.

Each test runs three times on a file store (``stored.FLUSH_MODES``): with every write flushing its
changed traces' facts, from the tables or from their rows kept once for the flush, and with none
flushing (the views compute the changed traces when read); ``test_a_write_flushes_...`` holds the rule
that decides between them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from collector.settling.settle import Settler
from collector.store import references, retention
from evaluators.gold import GoldCase, case_row
from queries import all_queries
from tests.store.contract.build import spans_batch
from tests.store.contract.conftest import requires
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

TABLES = ("traces", "evaluations", "evaluation_history", "eval_log", "gold_cases")
A, B = "a" * 32, "b" * 32


@pytest.fixture(autouse=True, params=FLUSH_MODES)
def flushing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """(A lake keeps no facts: there both runs are the same.)"""
    return set_flushing(monkeypatch, str(request.param))


def _defined(backend: Any) -> list[tuple[Any, ...]]:
    """What the definition gives over the verdicts as stored, by trace."""
    return rows(backend, f"SELECT * FROM ({all_queries()['attribution'].sql}) ORDER BY trace_id")


def _viewed(backend: Any) -> list[tuple[Any, ...]]:
    return rows(backend, "SELECT * FROM attribution ORDER BY trace_id")


def _causes(backend: Any) -> dict[str, tuple[str, list[str]]]:
    return {
        r[0]: (r[1], r[2])
        for r in rows(backend, "SELECT trace_id, root_cause, failing_layers FROM attribution")
    }


def test_the_view_follows_every_write_of_verdicts_and_equals_its_definition(backend: Any) -> None:
    needs_tables(backend, "verdicts.write_verdicts", *TABLES)
    add_trace(backend, A, case_id="c-a", run_id="r1")
    add_trace(backend, B, case_id="c-b", run_id="r1", at=T0 + timedelta(minutes=1))
    first = T0 + timedelta(hours=1)
    write_results(backend, [A, B], {"candidate_recall": False, "context_retention": True}, 1, first)
    assert _causes(backend) == {
        A: ("candidate_miss", ["candidate_miss"]),
        B: ("candidate_miss", ["candidate_miss"]),
    }
    assert _viewed(backend) == _defined(backend)

    # one evaluator runs again on A alone: its other verdict (written an hour earlier) still counts
    second = first + timedelta(hours=1)
    write_results(backend, [A], {"context_retention": False}, 2, second)
    assert _causes(backend)[A] == ("candidate_miss", ["candidate_miss", "dropped_before_context"])
    assert _causes(backend)[B] == ("candidate_miss", ["candidate_miss"])
    viewed = _viewed(backend)
    assert viewed == _defined(backend)
    evidence = dict(rows(backend, "SELECT trace_id, evidence FROM attribution"))
    assert '"gen":2' in evidence[A].replace(" ", "") and '"gen":1' in evidence[A].replace(" ", "")

    # the layer that failed first is cleared: the next one is the root cause
    third = second + timedelta(hours=1)
    write_results(backend, [A], {"candidate_recall": True}, 3, third)
    assert _causes(backend)[A] == ("dropped_before_context", ["dropped_before_context"])
    assert _viewed(backend) == _defined(backend)

    # retention deletes a trace's attribution with its verdicts
    retention.delete_traces(backend.con, [B])
    assert set(_causes(backend)) == {A}
    assert _viewed(backend) == _defined(backend)
    if not is_lake(backend):
        kept = "SELECT trace_id FROM attribution_facts UNION SELECT trace_id FROM facts_changed"
        assert rows(backend, kept) == [(A,)]  # B's facts went, kept or still to compute


def test_facts_left_pending_are_computed_when_the_file_opens(backend: Any) -> None:
    if is_lake(backend):
        return  # a lake keeps no facts: its view is the statement (the test above)
    add_trace(backend, A, case_id="c-a", run_id="r1")
    write_results(
        backend, [A], {"candidate_recall": True, "context_retention": False}, 1, T0 + timedelta(hours=1)
    )
    want = _viewed(backend)
    assert want == _defined(backend) and want[0][3] == "dropped_before_context"
    want_live = _live_viewed(backend)
    assert want_live == _live_defined(backend) and want_live  # c-a is not stored: live traffic too
    # as a file migrated to 027 with verdicts has them
    backend.con.execute("DELETE FROM attribution_facts")
    backend.con.execute("DELETE FROM live_attribution_facts")
    backend.con.execute("INSERT INTO facts_pending VALUES ('attribution_facts'), ('live_attribution_facts')")
    path = backend.path
    backend.close()
    from collector.store import Store

    reopened = Store(path)
    try:
        assert rows(reopened, "SELECT count(*) FROM facts_pending") == [(0,)]
        assert _viewed(reopened) == want
        assert _live_viewed(reopened) == want_live
    finally:
        reopened.close()


def _live_defined(backend: Any) -> list[tuple[Any, ...]]:
    return rows(backend, f"SELECT * FROM ({all_queries()['live_attribution'].sql}) ORDER BY trace_id")


def _live_viewed(backend: Any) -> list[tuple[Any, ...]]:
    return rows(backend, "SELECT * FROM live_attribution ORDER BY trace_id")


def test_live_attribution_follows_writes_and_stored_cases(backend: Any) -> None:
    needs_tables(backend, "verdicts.write_verdicts", *TABLES)
    add_trace(backend, A, case_id="c-a", run_id="r1")
    add_trace(backend, B, case_id="c-b", run_id="r1", at=T0 + timedelta(minutes=1))
    first = T0 + timedelta(hours=1)
    # neither case is stored: both traces are live traffic, unsupported by the answer-support tier
    write_results(backend, [A, B], {"answer_support": False, "trace_sufficiency": True}, 1, first)
    live = {r[0]: r[4] for r in _live_viewed(backend)}
    assert live == {A: "unsupported_claims", B: "unsupported_claims"}
    assert _live_viewed(backend) == _live_defined(backend)
    assert _viewed(backend) == _defined(backend)

    # A's other verdict fails later: both layers, the older verdict still read
    write_results(backend, [A], {"trace_sufficiency": False}, 2, first + timedelta(hours=1))
    assert {r[0]: r[5] for r in _live_viewed(backend)}[A] == ["unsupported_claims", "insufficient_trace"]
    assert _live_viewed(backend) == _live_defined(backend)

    # storing A's case makes its verdicts a gold case's: it leaves live_attribution at once
    case = GoldCase.model_validate(
        {"case_id": "c-a", "query": "How long is the refund window?", "category": "refunds", "risk": "high"}
    )
    references.upsert_gold(backend.con, [case_row(case, "d", first)])
    assert [r[0] for r in _live_viewed(backend)] == [B]
    assert _live_viewed(backend) == _live_defined(backend)
    assert _viewed(backend) == _defined(backend)
    assert rows(backend, "SELECT category FROM attribution WHERE trace_id = $t", t=A) == [("refunds",)]


def _health(backend: Any, view: bool) -> list[tuple[Any, ...]]:
    source = "trace_health" if view else f"({all_queries()['trace_health'].sql})"
    return rows(backend, f"SELECT * FROM {source} ORDER BY trace_id")


def test_trace_health_follows_settling_and_verdicts(backend: Any) -> None:
    requires(backend, "settling")
    con = backend.cursor()
    settler = Settler(backend.cursor(), lambda job: job(con), settle_seconds=2, max_wait_seconds=60)
    backend.write_spans(con, spans_batch(bytes.fromhex(A), T0, T0))
    backend.write_spans(con, spans_batch(bytes.fromhex(B), T0, T0 + timedelta(minutes=5)))
    assert settler.run_once(now=T0 + timedelta(seconds=3)) == 1  # A only: B's spans came later
    health = {r[0]: r for r in _health(backend, True)}
    assert set(health) == {A}
    assert health[A][2:7] == (
        False,
        1,
        False,
        1,
        None,
    )  # no verdict; one retrieval, its documents but no output value; one candidate
    assert _health(backend, True) == _health(backend, False)

    assert settler.run_once(now=T0 + timedelta(minutes=6)) == 1
    write_results(backend, [A], {"answer_support": False, "refusal": True}, 1, T0 + timedelta(hours=1))
    health = {r[0]: r for r in _health(backend, True)}
    assert set(health) == {A, B}
    assert health[A][2] is True and health[A][9:12] == (1.0, 1.0, 1.0)  # one claim, unsupported; refused
    assert health[B][2] is False and health[B][9] is None
    assert _health(backend, True) == _health(backend, False)
