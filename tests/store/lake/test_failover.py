"""A collector killed with SIGKILL while it holds lake work: the survivor does that work within 10 s
of the kill, exactly once (issue 47). The holder is a real process (``holder_process``) that claims
a trace to settle, evaluate or write the judge's verdicts of, or the maintenance lease, and is then
killed outright; its claims end with its connection to the catalog (``lake.holders``), so no time
has to pass and no expiry is moved. Where the survivor's loop must come round, its clock is the
test's (``tests/clock.py``)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from collector.store import verdicts
from collector.store.lake import claims as lake_claims
from collector.store.lake import holders as lake_holders
from collector.store.lake.store import LakeStore
from collector.store.lease import CatalogLeases
from collector.store.maintenance import LEASE, Maintainer
from queries import load_query
from tests.clock import ManualClock
from tests.pg import Postgres
from tests.store.conftest import Lake
from tests.store.lake.test_claims import (
    SETTLE,
    T0,
    TRACES,
    _evaluate,
    _ingest,
    _judge_batch,
    _settler,
    _write,
)
from tests.store.lake.test_two_collectors import Collector, make_traces
from tests.waiting import wait_equal

TAKEOVER_SECONDS = 10.0  # the survivor finishes a killed holder's work within this of the kill


@contextmanager
def holding(lake: Lake, kind: str, ids: list[str] = ()) -> Iterator[tuple[subprocess.Popen[str], str]]:  # type: ignore[assignment]
    """A process holding ``kind`` of work on ``ids`` (or the maintenance lease); yields it and its
    holder name. Killed on leaving if the test did not."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.store.lake.holder_process", lake.catalog, str(lake.data_path), kind, *ids],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("held "), line
        yield proc, line.removeprefix("held ")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)


def _kill(proc: subprocess.Popen[str], lake: Lake, holder: str) -> float:
    """SIGKILL ``proc``; the moment it was killed (monotonic). Returns once PostgreSQL has ended the
    killed process's session (its backend sees the socket close a moment after the kill, not at
    once), so what the test asks next sees ``holder`` gone; that moment is within the takeover
    time the tests measure from the kill."""
    import psycopg  # (the lake extra's; these tests run only where it is installed)

    proc.kill()
    proc.wait(30)
    killed = time.monotonic()
    state = f"SELECT {lake_holders.state_sql(lake_holders.pg_literal(holder))}"
    with psycopg.connect(lake.catalog, autocommit=True) as pg:
        while (got := pg.execute(state).fetchone()) != ("gone",):
            assert time.monotonic() - killed < TAKEOVER_SECONDS, f"{holder} still {got} after the kill"
            time.sleep(0.02)  # (how often PostgreSQL is asked, not a wait for time to pass)
    return killed


@pytest.fixture
def survivor(lake: Lake) -> Iterator[LakeStore]:
    store = LakeStore(lake.catalog, lake.data_path, extension_repository=False)
    try:
        yield store
    finally:
        store.close()


def _claim_of(store: LakeStore, trace_id: str) -> dict[str, Any]:
    claims = lake_claims.claims_of(store.cursor(), [trace_id])
    assert len(claims) == 1, claims
    return claims[0]


def test_a_killed_collectors_settle_claim_is_settled_by_the_survivor_at_once(
    lake: Lake, survivor: LakeStore
) -> None:
    _ingest(survivor)
    x = TRACES[0]
    with holding(lake, lake_claims.SETTLE, [x]) as (proc, dead):
        assert _settler(survivor).run_once(now=T0 + SETTLE) == 5  # all but the one held
        claim = _claim_of(survivor, x)
        assert (claim["kind"], claim["holder"], claim["holder_state"], claim["held"]) == (
            "settle",
            dead,
            "alive",
            True,
        )
        assert claim["claimed_at"] <= claim["expires_at"]
        killed = _kill(proc, lake, dead)
        assert _settler(survivor).run_once(now=T0 + SETTLE) == 1
        took = time.monotonic() - killed
    assert took < TAKEOVER_SECONDS
    con = survivor.cursor()
    assert con.execute("SELECT count(*) FROM trace_settles WHERE trace_id = ?", [x]).fetchall() == [(1,)]
    assert con.execute("SELECT count(*), count(DISTINCT trace_id) FROM trace_settles").fetchall() == [(6, 6)]
    assert lake_claims.claims_of(con, [x]) == []  # released once committed


def test_a_killed_collectors_evaluate_claim_is_evaluated_by_the_survivor_at_once(
    lake: Lake, survivor: LakeStore
) -> None:
    _ingest(survivor)
    assert _settler(survivor).run_once(now=T0 + SETTLE) == 6
    x = TRACES[0]
    with holding(lake, lake_claims.EVALUATE, [x]) as (proc, dead):
        assert sorted(_evaluate(survivor, 10)) == sorted(TRACES[1:])
        assert _evaluate(survivor, 10) == []  # x is held: the round skips it
        assert _claim_of(survivor, x)["holder_state"] == "alive"
        killed = _kill(proc, lake, dead)
        # what wakes the evaluation loop: the claim it skipped is free now
        assert lake_claims.freed(survivor.cursor()) == {(lake_claims.EVALUATE, x, dead)}
        assert _claim_of(survivor, x)["holder_state"] == "gone"
        assert _evaluate(survivor, 10) == [x]
        took = time.monotonic() - killed
    assert took < TAKEOVER_SECONDS
    con = survivor.cursor()
    assert con.execute(
        "SELECT count(*), min(generation), max(generation) FROM evaluation_rows WHERE trace_id = ?", [x]
    ).fetchall() == [(1, 1, 1)]
    assert verdicts.backlog(con) == (0, None)


def test_a_killed_collectors_judge_claim_lets_the_survivor_write_the_verdicts_once(
    lake: Lake, survivor: LakeStore
) -> None:
    _ingest(survivor)
    assert _settler(survivor).run_once(now=T0 + SETTLE) == 6
    assert len(_evaluate(survivor, 10)) == 6
    x = TRACES[0]
    later = T0 + timedelta(hours=2)
    judged = "SELECT count(*) FROM evaluation_rows WHERE trace_id = ? AND tier = 'judge'"
    con = survivor.cursor()
    with holding(lake, lake_claims.JUDGE, [x]) as (proc, dead):
        _write(survivor, _judge_batch([x], 2, later), later)  # held by the other: left out
        assert con.execute(judged, [x]).fetchall() == [(0,)]
        killed = _kill(proc, lake, dead)
        _write(survivor, _judge_batch([x], 2, later), later)
        took = time.monotonic() - killed
    assert took < TAKEOVER_SECONDS
    assert con.execute(judged, [x]).fetchall() == [(1,)]
    current = "SELECT evaluator, generation FROM evaluations WHERE trace_id = ? ORDER BY evaluator"
    assert con.execute(current, [x]).fetchall() == [("answer_support", 1), ("judge_answer_support", 2)]
    assert lake_claims.holders(con, lake_claims.JUDGE) == {}


def test_a_killed_collectors_maintenance_lease_is_taken_and_run_by_the_survivor(
    lake: Lake, survivor: LakeStore
) -> None:
    clock = ManualClock()
    leases = CatalogLeases(lake.catalog, extension_repository=False)
    runs: list[str] = []

    def run(store: LakeStore, keep: float) -> dict[str, Any]:
        from collector.store.maintenance import maintain

        runs.append(leases.holder)
        return maintain(store, keep)

    interval = 600.0
    maintainer = Maintainer(
        survivor, leases, interval_seconds=interval, keep_snapshots_seconds=3600, run=run, wait=clock.wait
    )
    with holding(lake, "lease") as (proc, dead):
        maintainer.start()
        try:
            clock.wait_for_waits(1)
            clock.tick(interval)  # its turn: the other holds the lease, so it asks again soon
            assert runs == []
            state = leases.state(LEASE)
            assert state is not None and state[0] == dead and state[3] == "alive"
            killed = _kill(proc, lake, dead)
            clock.tick(maintainer.recheck)
            took = time.monotonic() - killed
            assert runs == [leases.holder]  # once
            waits = clock.waits
            clock.advance(interval - 1)  # then not again before its interval ...
            assert clock.waits == waits and len(runs) == 1
            clock.tick(1)  # ... and again at it
            assert runs == [leases.holder] * 2
        finally:
            maintainer.stop()  # (closes the leases)
    assert took < TAKEOVER_SECONDS
    assert maintainer.last is not None and maintainer.last["duplicates_deleted"]["span_rows"] == 0


def test_a_lease_taken_from_a_killed_holder_records_whom_from(lake: Lake) -> None:
    leases = CatalogLeases(lake.catalog, extension_repository=False)
    try:
        with holding(lake, "lease") as (proc, dead):
            assert not leases.claim(LEASE, 60) and not leases.free(LEASE)
            _kill(proc, lake, dead)
            assert leases.free(LEASE)
            assert leases.claim(LEASE, 60)
        state = leases.state(LEASE)
        assert state is not None
        holder, since, until, alive, taken_from = state
        assert (holder, alive, taken_from) == (leases.holder, "alive", dead)
        assert until - since == timedelta(seconds=60)
    finally:
        leases.close()


def _wait_for(c: Any, sql: str, want: object, timeout: float = 120) -> None:
    wait_equal(lambda: c.sql(sql), want, what=sql, timeout=timeout, every=0.1)


def test_a_collector_takes_over_a_killed_holders_traces_and_says_who_held_them(
    lake: Lake, tmp_path: Path
) -> None:
    """A real collector beside two killed holders (one holding traces to settle, one traces to
    evaluate): before the kill ``why_no_score`` and the trace view name the holder, alive; after it
    the collector's loops settle and evaluate those traces within 10 s (its evaluation loop is woken
    by the freed claims, not by its 30 s idle poll), each once."""
    traces = make_traces(8)
    ids = [format(t[0].context.trace_id, "032x") for t in traces]  # type: ignore[union-attr]
    settle_held, evaluate_held = ids[:2], ids[2:4]
    config = tmp_path / "lake.toml"
    config.write_text("[evaluation]\nworkers = 0\n", encoding="utf-8")
    env = {"RAGFAULT_SETTLE_SECONDS": "1"}
    c = Collector(lake, tmp_path / "collector.log", env, ("--config", str(config)))
    try:
        c.wait_ready()
        with (
            holding(lake, lake_claims.SETTLE, settle_held) as (settler, settle_holder),
            holding(lake, lake_claims.EVALUATE, evaluate_held) as (evaluator, evaluate_holder),
        ):
            spans = [s for t in traces for s in t]
            assert OTLPSpanExporter(endpoint=f"{c.url}/v1/traces", timeout=60).export(spans) is (
                SpanExportResult.SUCCESS
            )
            evaluated = "SELECT count(*) FROM traces WHERE eval_generation > 0"
            _wait_for(c, evaluated, [[len(ids) - 4]])  # all but the four held
            why = load_query("why_no_score").sql
            columns = (
                "trace_id, decision, claim, claim_holder, claim_holder_state, claimed_at < claim_expires_at"
            )
            for x, decision, kind, holder in [
                *((x, "not_settled", "settle", settle_holder) for x in settle_held),
                *((x, "pending", "evaluate", evaluate_holder) for x in evaluate_held),
            ]:
                assert c.sql(f"SELECT {columns} FROM ({why})", trace_id=x) == [
                    [x, decision, kind, holder, "alive", True]
                ]
            view = httpx.get(f"{c.url}/api/v1/traces/{evaluate_held[0]}/view", timeout=60).json()
            assert [(k["kind"], k["holder"], k["holder_state"]) for k in view["claims"]] == [
                ("evaluate", evaluate_holder, "alive")
            ]
            # the evaluate holder first: nothing is settled meanwhile that could wake the loop
            killed = _kill(evaluator, lake, evaluate_holder)
            _wait_for(c, evaluated, [[len(ids) - 2]], timeout=60)
            took = [time.monotonic() - killed]
            killed = _kill(settler, lake, settle_holder)
            _wait_for(c, evaluated, [[len(ids)]], timeout=60)
            took.append(time.monotonic() - killed)
        assert max(took) < TAKEOVER_SECONDS, took
        assert c.sql("SELECT trace_id FROM trace_settles GROUP BY ALL HAVING count(*) > 1") == []
        assert c.sql("SELECT DISTINCT eval_generation FROM traces") == [[1]]
        assert c.sql("SELECT count(*) FROM trace_claims") == [[0]]
        assert "without a wake-up" not in c.log.read_text()
    finally:
        c.stop()


def test_the_claims_a_killed_holder_left_are_told_to_the_loops_once(lake: Lake, survivor: LakeStore) -> None:
    """What wakes a loop that skipped held traces: at each beat of its presence the store tells its
    ``claim_listeners`` the kinds of the claims that became free since (here the beat is run by the
    test instead of its thread)."""
    told: list[set[str]] = []
    survivor.claim_listeners.append(told.append)
    with holding(lake, lake_claims.EVALUATE, TRACES[:2]) as (proc, dead):
        survivor._watch_claims()
        assert told == []  # held, and its holder alive
        _kill(proc, lake, dead)
        survivor._watch_claims()
        assert told == [{lake_claims.EVALUATE}]
        survivor._watch_claims()
        assert told == [{lake_claims.EVALUATE}]  # once


def test_a_presence_whose_session_was_cut_takes_its_lock_again(lake: Lake, postgres: Postgres) -> None:
    """A holder whose own session ends (the catalog restarted, a network cut) is gone for the others
    until its next beat opens a session and takes its lock again."""
    leases = CatalogLeases(lake.catalog, extension_repository=False, beat_seconds=0)
    other = CatalogLeases(lake.catalog, extension_repository=False, beat_seconds=0)
    try:
        assert other.presence.alive(leases.holder) is True
        key = leases.presence.lock_key
        postgres.query(
            lake.catalog.rsplit("/", 1)[1],
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
            f"AND ((classid::int8 << 32) | objid::int8) = {key}",
        )
        assert other.presence.alive(leases.holder) is False
        assert leases.presence.beat()
        assert other.presence.alive(leases.holder) is True
    finally:
        leases.close()
        other.close()
