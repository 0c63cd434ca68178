"""The judge tier's records (``collector.store.judging``) on every backend."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from collector.store import judging
from tests.store.contract.stored import T0, needs_tables, rows

TABLES = ("judge_cache", "judge_calls", "judge_verdicts", "judge_versions", "human_labels", "eval_log")


def _verdict(trace_id: str, label: str, source: str, at: object, claim: str = "c") -> tuple[object, ...]:
    return (trace_id, None, "judge_answer_support", claim, claim, label, None, "m", "v1", source, at)


def _call(at: object, tokens: int, cost: float) -> tuple[object, ...]:
    return (at, "claims", "m", "v1", 1, "ok", 200, tokens, 0, False, cost, 12.0, None, "k1")


def test_a_run_records_cache_calls_verdicts_and_the_version(backend: Any) -> None:
    needs_tables(backend, "judging.write_run", *TABLES)
    con = backend.cursor()
    cache = ("k1", "claims", "m", "v1", None, None, '{"claims": []}', T0)
    judging.write_run(
        backend.con, cache_rows=[cache], calls=[_call(T0, 100, 0.01), _call(T0 + timedelta(minutes=2), 50, 0.02)],
        verdicts=[_verdict("a" * 32, "supported", "run", T0)], model="m", prompt_version="v1",
        anchors=False, over_budget=["b" * 32], now=T0,
    )  # fmt: skip
    judging.write_run(
        backend.con, cache_rows=[cache], calls=[], verdicts=[], model="m", prompt_version="v1",
        anchors=False, over_budget=[], now=T0,
    )  # fmt: skip
    # (a cached key and a version seen again are kept once)
    assert (
        judging.cached_response(con, "k1") == '{"claims": []}' and judging.cached_response(con, "k2") is None
    )
    spent = judging.recent_spend(con, T0 - timedelta(minutes=1))
    assert [r[1:] for r in spent] == [(100, 0.01), (50, 0.02)]
    assert spent[1][0] - spent[0][0] == 120.0  # epoch seconds
    assert [r[1:] for r in judging.recent_spend(con, T0 + timedelta(minutes=1))] == [(50, 0.02)]
    assert rows(backend, "SELECT model, prompt_version, trusted FROM judge_versions") == [("m", "v1", False)]
    assert rows(backend, "SELECT trace_id, decision, reason FROM eval_log") == [
        ("b" * 32, "over_budget", "budget")
    ]
    con.close()


def test_an_anchor_run_replaces_the_versions_anchor_verdicts(backend: Any) -> None:
    needs_tables(backend, "judging.write_run (anchors)", *TABLES)
    con = backend.cursor()
    judging.insert_labels(
        backend.con,
        [("a" * 32, None, "judge_answer_support", "c", "c", "supported", "ann", True, None, T0),
         ("b" * 32, None, "judge_answer_support", "c", "c", "unsupported", "ann", False, None, T0)],
    )  # fmt: skip
    assert judging.anchor_traces(con) == ["a" * 32]
    for label, at in (("unsupported", T0), ("supported", T0 + timedelta(minutes=1))):
        judging.write_run(
            backend.con, cache_rows=[], calls=[], verdicts=[_verdict("a" * 32, label, "anchor", at)],
            model="m", prompt_version="v1", anchors=True, over_budget=[], now=at,
        )  # fmt: skip
    assert judging.anchors_scored(con, "m", "v1") == 1 and judging.anchors_scored(con, "m", "v2") == 0
    assert [r[3] for r in judging.latest_verdicts(con, anchor_only=True)] == ["supported"]
    assert judging.versions(con)[0][3] == T0 + timedelta(minutes=1)  # anchors_scored_at
    assert sorted(r[3] for r in judging.human_labels(con)) == ["supported", "unsupported"]
    judging.trust(backend.con, "m", "v2", '{"drifted": false}', T0)
    assert [(r[1], r[4]) for r in judging.versions(con)] == [("v1", False), ("v2", True)]
    con.close()
