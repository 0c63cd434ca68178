"""Gold cases as the evaluators get them (``evaluators.service.runner.References``): joined by case id or by
normalized query, the same after travelling to a worker process, and validated only when a trace
joins them (a stored row that no longer validates spoils no other case)."""

from __future__ import annotations

import json
import logging
import pickle
from pathlib import Path
from typing import Any

import pytest

from evaluators.service.loading import store_gold
from evaluators.service.runner import References
from evaluators.trace_view import TraceView
from ragfault.local import LocalStore

CASES: list[dict[str, Any]] = [
    {"case_id": "c-refund", "query": "How long is the refund window?", "answerable": True},
    # the same query once normalized: the first row read joins it
    {"case_id": "c-refund-again", "query": "how long is the REFUND window", "category": "again"},
    {"case_id": "c-ship", "query": "Do you ship to Norway?", "answerable": True},
    {"case_id": "c-bad", "query": "A case whose stored row is spoiled later", "answerable": True},
]


def trace(case_id: str | None = None, query: str | None = None) -> TraceView:
    return TraceView(trace_id="t" * 32, case_id=case_id, query_text=query)


@pytest.fixture
def local(tmp_path: Path) -> LocalStore:
    store = LocalStore(str(tmp_path / "refs.duckdb"))
    store_gold(store.write, "\n".join(json.dumps(c) for c in CASES))
    return store


def joined(refs: References, t: TraceView) -> str | None:
    case = refs.case_for(t)
    return case.case_id if case is not None else None


def test_cases_join_by_id_and_by_query_also_after_travelling_to_a_worker(local: LocalStore) -> None:
    refs = References()
    refs.refresh(local.store.cursor())
    # the first of the two rows as the table is read, whichever the engine returns first
    rows = [r[0] for r in local.store.cursor().execute("SELECT case_id FROM gold_cases").fetchall()]
    expected_by_query = next(c for c in rows if c.startswith("c-refund"))
    probes = [
        trace(case_id="c-ship"),
        trace(case_id="c-refund-again"),
        trace(case_id="unknown"),
        trace(query="HOW LONG is the refund window???"),
        trace(query="do you ship to norway"),
        trace(query="Something nobody asked"),
        trace(),
    ]
    here = [joined(refs, t) for t in probes]
    assert here == ["c-ship", "c-refund-again", None, expected_by_query, "c-ship", None, None]

    # what a worker process gets: the state pickled, then rebuilt
    there = References()
    there.set_state(pickle.loads(pickle.dumps(refs.get_state())))
    assert [joined(there, t) for t in probes] == here
    assert there.case_count == refs.case_count == len(CASES)
    case = there.case_for(trace(case_id="c-refund"))
    assert case is not None and case.query == CASES[0]["query"] and case.answerable is True


def test_a_case_is_validated_when_a_trace_joins_it_and_a_spoiled_row_spoils_only_itself(
    local: LocalStore, caplog: pytest.LogCaptureFixture
) -> None:
    # a row edited by hand after loading: answerable must be a boolean
    local.store.con.execute(
        "UPDATE gold_cases SET raw = json_object('case_id', 'c-bad', 'query', 'x', 'answerable', 'perhaps') "
        "WHERE case_id = 'c-bad'"
    )
    refs = References()
    refs.refresh(local.store.cursor())  # reading the table validates nothing, so nothing fails here
    with caplog.at_level(logging.WARNING, logger="ragfault.evaluate"):
        assert joined(refs, trace(case_id="c-ship")) == "c-ship"
        assert refs.case_for(trace(case_id="c-bad")) is None
        assert refs.case_for(trace(case_id="c-bad")) is None  # remembered: logged once
        assert joined(refs, trace(query="Do you ship to Norway?")) == "c-ship"
    warnings = [r for r in caplog.records if "c-bad" in r.getMessage()]
    assert len(warnings) == 1 and "not valid" in warnings[0].getMessage()


def test_reloading_the_table_drops_what_was_validated_before(local: LocalStore) -> None:
    refs = References()
    refs.refresh(local.store.cursor())
    before = refs.case_for(trace(case_id="c-ship"))
    assert before is not None and before.category is None
    store_gold(local.write, json.dumps({**CASES[2], "category": "shipping"}))
    refs.refresh(local.store.cursor())
    after = refs.case_for(trace(case_id="c-ship"))
    assert after is not None and after.category == "shipping"
