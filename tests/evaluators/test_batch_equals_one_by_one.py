"""Settling and evaluating many traces at once gives the rows of doing it one trace at a time: what a
batch reads in one pass (its steps and documents, the first row of each text, the views of every
trace) must never mix one trace's rows into another's."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from collector.normalize import DEFAULT_SOURCE_KEYS
from collector.settling.settle import Settler
from evaluators.service.config import EvaluationSettings, evaluator_configs
from evaluators.service.registry import discover
from evaluators.service.runner import Runner, StoreRunner
from ragfault.local import LocalStore
from tests.evaluators.bench_traces import store_bench_traces

TRACES = 48


@pytest.fixture(scope="module")
def base_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bench's traces (a quarter of them without document ids, some documents sent without
    text), their gold cases and the registry, stored and not settled yet."""
    path = tmp_path_factory.mktemp("batch") / "base.duckdb"
    local = LocalStore(str(path))
    try:
        store_bench_traces(local, seed=11, traces=TRACES, per_request=16, dataset="t")
    finally:
        local.close()
    return path


def _copy(base: Path, tmp_path: Path, name: str) -> LocalStore:
    path = tmp_path / name
    shutil.copy(base, path)
    return LocalStore(str(path))


def _runner(local: LocalStore) -> StoreRunner:
    specs = discover()
    runner = Runner(specs, evaluator_configs(EvaluationSettings(), specs))
    return StoreRunner(local.store.cursor(), local.write, runner, DEFAULT_SOURCE_KEYS)


def _ids(local: LocalStore) -> list[str]:
    rows = local.store.con.execute(
        "SELECT trace_id FROM traces ORDER BY first_received_at, trace_id"
    ).fetchall()
    return [r[0] for r in rows]


def _verdicts(local: LocalStore) -> list[tuple[Any, ...]]:
    return sorted(
        local.store.con.execute(
            "SELECT trace_id, span_id, case_id, run_id, evaluator, evaluator_version, tier, metric, value, "
            "numerator, denominator, status, reason, passed, label, details::VARCHAR, generation FROM evaluations"
        ).fetchall(),
        key=repr,
    )


def _settled(local: LocalStore) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    con = local.store.con
    traces = con.execute(
        "SELECT trace_id, query_text, query_norm, answer_text, answer_span_id, user_scope, assembled_spans "
        "FROM traces ORDER BY trace_id"
    ).fetchall()
    docs = con.execute(
        "SELECT trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata::VARCHAR, source, "
        "content_source FROM step_documents ORDER BY ALL"
    ).fetchall()
    return traces, docs


def _settle(local: LocalStore, limit: int) -> int:
    settler = Settler(
        local.store.cursor(), local.write, settle_seconds=1, max_wait_seconds=1, batch_limit=limit
    )
    rounds = 0
    while settler.run_once(force=True):
        rounds += 1
    return rounds


@pytest.fixture(scope="module")
def settled_db(base_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("settled") / "settled.duckdb"
    shutil.copy(base_db, path)
    local = LocalStore(str(path))
    try:
        assert _settle(local, 10_000) == 1
    finally:
        local.close()
    return path


def test_one_round_settles_as_rounds_of_one_trace(base_db: Path, settled_db: Path, tmp_path: Path) -> None:
    one = _copy(base_db, tmp_path, "one.duckdb")
    try:
        assert _settle(one, 1) == TRACES
        by_one = _settled(one)
    finally:
        one.close()
    batch = LocalStore(str(settled_db))
    try:
        in_one_round = _settled(batch)
    finally:
        batch.close()
    traces, docs = in_one_round
    assert all(t[1] and t[3] for t in traces)  # every trace has its query and answer
    assert sum(d[9] == "derived" for d in docs) >= TRACES  # a derived context for every trace
    assert any(d[10] == "registry" for d in docs)  # documents sent without text took the registry's
    assert by_one == in_one_round


def test_a_batch_writes_the_verdicts_of_one_trace_at_a_time(settled_db: Path, tmp_path: Path) -> None:
    batch, one = _copy(settled_db, tmp_path, "batch.duckdb"), _copy(settled_db, tmp_path, "one.duckdb")
    try:
        ids = _ids(batch)
        assert _runner(batch).evaluate_many(ids, batch=TRACES) == TRACES
        assert _runner(one).evaluate_many(ids, batch=1) == TRACES
        rows = _verdicts(batch)
        assert len(rows) > TRACES * 40
        assert {r[11] for r in rows} >= {"ok", "not_applicable"}
        assert rows == _verdicts(one)
        log = "SELECT trace_id, tier, evaluator, decision, reason, generation FROM eval_log ORDER BY ALL"
        assert batch.store.con.execute(log).fetchall() == one.store.con.execute(log).fetchall()
    finally:
        batch.close()
        one.close()
