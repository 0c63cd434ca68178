"""Looking a batch's traces up in ``traces`` within the range their first spans were received in.

Fetching a batch, writing its verdicts, reading its feedback and the judge sampler's facts look the
traces up by id, which scans the whole table; with the range of their ``first_received_at`` (read
with the ids by the scheduler and ``ragfault evaluate``, and taken from the fetched rows for the
write) the scan skips the row groups outside it (``collector.store.reader.traces_in_range``).
A trace outside the range given (its first span was received earlier than when its id was read)
must still be found: these tests give ranges that leave traces out."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from collector.ingest.span_rows import flatten
from collector.store.schema import batch_to_arrow
from evaluators.service.config import EvaluationSettings, evaluator_configs
from evaluators.service.feedback import read_annotations
from evaluators.service.registry import discover
from evaluators.service.runner import (
    Runner,
    StoreRunner,
    evaluate_tables,
    fetch_with_window,
    utcnow,
    write_job,
)
from evaluators.service.sampling import load_facts
from evaluators.service.sampling_settings import SamplingSettings
from ragfault.local import LocalStore
from tests.collector.otlp_build import new_trace_id, rag_spans, request, span

T0 = datetime(2026, 11, 1, 12, 0, 0)


@pytest.fixture
def store(tmp_path: Path) -> tuple[LocalStore, StoreRunner, list[str]]:
    local = LocalStore(str(tmp_path / "w.duckdb"))
    tids = []
    for h in range(3):  # received an hour apart
        tid = new_trace_id()
        batch = flatten(request(rag_spans(tid)), received_at=T0 + timedelta(hours=h))
        local.store.write_spans(local.store.con, batch_to_arrow(batch))
        tids.append(tid.hex())
    assert local.settle_all() == 3
    specs = discover()
    runner = StoreRunner(
        local.store.cursor(), local.write, Runner(specs, evaluator_configs(EvaluationSettings(), specs))
    )
    return local, runner, tids


def generations(local: LocalStore) -> dict[str, tuple[int, bool]]:
    rows = local.store.con.execute(
        "SELECT trace_id, eval_generation, evaluated_spans = assembled_spans FROM traces"
    ).fetchall()
    return {t: (g, ok) for t, g, ok in rows}


def test_fetch_finds_traces_outside_the_range_given(store: tuple[LocalStore, StoreRunner, list[str]]) -> None:
    local, _, tids = store
    middle = T0 + timedelta(hours=1)
    tables, window = fetch_with_window(local.store.cursor(), tids, (middle, middle))
    assert sorted(tables.traces.column("trace_id").to_pylist()) == sorted(tids)
    assert tables.steps.num_rows == 6
    assert window == (T0, T0 + timedelta(hours=2))  # the range of the rows fetched, for the write
    # a missing id is just missing
    tables, _ = fetch_with_window(local.store.cursor(), [tids[0], "0" * 32], (T0, T0))
    assert tables.traces.column("trace_id").to_pylist() == [tids[0]]


def test_received_times_that_leave_traces_out_still_evaluate_every_trace_once(
    store: tuple[LocalStore, StoreRunner, list[str]],
) -> None:
    local, runner, tids = store
    wrong = dict.fromkeys(tids, T0 + timedelta(hours=1))  # right for one trace only
    assert runner.evaluate(tids, wrong) == 3
    assert generations(local) == dict.fromkeys(tids, (1, True))
    rows = local.store.con.execute("SELECT count(*) FROM evaluations").fetchall()[0][0]
    assert rows > 0
    # again: the first verdicts of all three move to history, none is left twice
    assert runner.evaluate_many(tids, batch=2, received=wrong) == 3
    assert generations(local) == dict.fromkeys(tids, (2, True))
    con = local.store.con
    assert con.execute("SELECT count(*) FROM evaluations").fetchall()[0][0] == rows
    assert con.execute("SELECT count(DISTINCT trace_id) FROM evaluation_history").fetchall()[0][0] == 3


def test_write_with_a_range_that_leaves_traces_out(store: tuple[LocalStore, StoreRunner, list[str]]) -> None:
    local, runner, tids = store
    cur = local.store.cursor()
    runner.refs.refresh(cur)
    first = T0 + timedelta(hours=2)
    for generation in (1, 2):
        tables, _ = fetch_with_window(cur, tids)
        now = utcnow()
        out = evaluate_tables(runner.runner, runner.refs, tables, now, ())
        local.write(write_job(out, now, (first, first)))  # only the last trace is in this range
        assert generations(local) == dict.fromkeys(tids, (generation, True))
    history = local.store.con.execute("SELECT DISTINCT trace_id FROM evaluation_history").fetchall()
    assert sorted(t for (t,) in history) == sorted(tids)


def test_a_trace_evaluated_before_outside_the_range_has_its_verdicts_moved(
    store: tuple[LocalStore, StoreRunner, list[str]],
) -> None:
    local, runner, tids = store
    cur = local.store.cursor()
    con = local.store.con
    assert runner.evaluate([tids[0]]) == 1
    before = con.execute("SELECT count(*) FROM evaluations").fetchall()[0][0]
    last = T0 + timedelta(hours=2)
    tables, _ = fetch_with_window(cur, tids)
    now = utcnow()
    out = evaluate_tables(runner.runner, runner.refs, tables, now, ())
    local.write(write_job(out, now, (last, last)))  # in range: the last trace, never evaluated
    assert con.execute("SELECT count(*) FROM evaluations").fetchall()[0][0] == 3 * before
    assert con.execute("SELECT count(*) FROM evaluation_history").fetchall()[0][0] == before
    assert generations(local) == {tids[0]: (2, True), tids[1]: (1, True), tids[2]: (1, True)}


def test_feedback_and_sampling_facts_find_traces_outside_the_range_given(tmp_path: Path) -> None:
    local = LocalStore(str(tmp_path / "f.duckdb"))
    rated = new_trace_id()
    rating = span(rated, name="rating", attrs={
        "annotations.0.annotation.name": "user_feedback", "annotations.0.annotation.label": "thumbs_down"})  # fmt: skip
    tids = [rated.hex()]
    local.store.write_spans(local.store.con, batch_to_arrow(flatten(request([rating]), received_at=T0)))
    for h in (1, 2):
        tid = new_trace_id()
        batch = flatten(request(rag_spans(tid)), received_at=T0 + timedelta(hours=h))
        local.store.write_spans(local.store.con, batch_to_arrow(batch))
        tids.append(tid.hex())
    local.settle_all()
    last = T0 + timedelta(hours=2)
    con = local.store.cursor()
    found = read_annotations(con, tids, SamplingSettings(), (last, last))
    assert [(r["trace_id"], r["label"]) for r in found] == [(rated.hex(), "thumbs_down")]
    facts = load_facts(con, tids, SamplingSettings(), (last, last))
    assert sorted(f.trace_id for f in facts) == sorted(tids)


def test_sampling_flags_are_read_from_the_verdicts_written_since_the_round_began(
    store: tuple[LocalStore, StoreRunner, list[str]],
) -> None:
    local, runner, tids = store
    con = local.store.con
    written = utcnow()
    runner.evaluate(tids)
    # a stale flag among this round's verdicts, and one left from long ago
    con.execute(
        "INSERT INTO evaluations (trace_id, evaluator, evaluator_version, tier, metric, status, numerator, "
        "denominator, value, generation, evaluated_at) VALUES "
        "($a, 'freshness', '1', 'cheap', 'stale_context', 'ok', 1, 1, 1, 1, $now), "
        "($b, 'freshness', '1', 'cheap', 'permission_violations', 'ok', 1, 1, 1, 1, $old)",
        {"a": tids[0], "b": tids[1], "now": utcnow(), "old": written - timedelta(days=3)},
    )
    facts = {f.trace_id: f for f in load_facts(local.store.cursor(), tids, SamplingSettings(), None, written)}
    assert facts[tids[0]].stale and not facts[tids[1]].forbidden
    facts = {f.trace_id: f for f in load_facts(local.store.cursor(), tids, SamplingSettings())}
    assert facts[tids[0]].stale and facts[tids[1]].forbidden  # without a time: every row
