"""Settling and evaluation claimed per trace across collectors (``collector.store.lake.claims``): two
stores on one lake (two holders, as two collector processes are) never settle or evaluate the same
trace at once, a trace settled or evaluated by one is not done again by the other, the claims of a
collector that is gone are free at once, and those of one alive but stuck once they expire (expiry
is moved in the catalog database, not waited for)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pyarrow as pa
import pytest

from collector.ingest.batch import ArrowBatch
from collector.settling.settle import Settler
from collector.store import settling, verdicts
from collector.store.lake import claims as lake_claims
from collector.store.lake.store import LakeStore
from tests.pg import Postgres
from tests.store.conftest import Lake
from tests.store.contract.build import spans_batch
from tests.waiting import wait_until

T0 = datetime(2026, 3, 2, 12, 0, 0)
SETTLE = timedelta(seconds=2)
TRACES = [f"{i:02x}" * 16 for i in range(1, 7)]


@pytest.fixture
def stores(lake: Lake) -> Iterator[list[LakeStore]]:
    opened = [LakeStore(lake.catalog, lake.data_path, extension_repository=False) for _ in range(2)]
    try:
        yield opened
    finally:
        for s in opened:
            s.close()


def _ingest(store: LakeStore) -> None:
    con = store.cursor()
    for t in TRACES:
        store.write_spans(con, spans_batch(bytes.fromhex(t), T0, T0))


def _ready(store: LakeStore, limit: int = 4) -> list[str]:
    now = T0 + SETTLE
    rows = settling.ready_traces(
        store.cursor(), settled=now - SETTLE, expired=now - timedelta(minutes=1), limit=limit
    )
    return [r.trace_id for r in rows]


def _expire(postgres: Postgres, lake: Lake, holder: str) -> None:
    """What time does to a dead holder's claims: they are past their expiry."""
    db = lake.catalog.rsplit("/", 1)[1]
    postgres.query(
        db,
        f"UPDATE {lake_claims.TABLE} SET expires_at = now() - interval '1 second' "
        f"WHERE holder = {lake_claims.pg_literal(holder)}",
    )


def _settler(store: LakeStore) -> Settler:
    con = store.cursor()
    return Settler(
        store.cursor(), lambda job: job(con), settle_seconds=SETTLE.total_seconds(), max_wait_seconds=60
    )


def test_two_collectors_settle_each_trace_once(stores: list[LakeStore]) -> None:
    a, b = stores
    _ingest(a)
    first = _ready(a)  # a claims the four oldest
    assert len(first) == 4
    second = _ready(b, 10)
    assert len(second) == 2 and set(second).isdisjoint(first)  # b gets only what a does not hold
    held = lake_claims.holders(a.cursor(), lake_claims.SETTLE)
    assert {t for t, h in held.items() if h == lake_claims.me(a.cursor())[0]} == set(first)  # type: ignore[index]
    # each settles what it holds; then nothing is left for either
    assert _settler(a).run_once(now=T0 + SETTLE) == 4  # (a round claims again what it holds: its own)
    assert _settler(b).run_once(now=T0 + SETTLE) == 2
    assert _ready(a) == [] and _ready(b) == []
    con = a.cursor()
    assert con.execute("SELECT count(*), count(DISTINCT trace_id) FROM trace_settles").fetchall() == [(6, 6)]
    assert con.execute("SELECT count(*) FROM traces WHERE settled_at IS NULL").fetchall() == [(0,)]
    assert lake_claims.holders(con, lake_claims.SETTLE) == {}  # released once committed


def _claim_rows(postgres: Postgres, lake: Lake) -> set[tuple[str, str, str]]:
    """(trace id, holder, taken_from) of every claim row, read in the catalog database."""
    db = lake.catalog.rsplit("/", 1)[1]
    out = postgres.query(db, f"SELECT trace_id, holder, coalesce(taken_from, '') FROM {lake_claims.TABLE}")
    return {tuple(line.split("|")) for line in out.splitlines() if line}  # type: ignore[misc]


def test_a_gone_collectors_claims_are_free_at_once_and_say_whom_they_were_taken_from(
    stores: list[LakeStore], lake: Lake, postgres: Postgres
) -> None:
    """A collector's claims live as long as its presence in the catalog: closed (as a killed
    process's connection is), they are free at once, no expiry waited for."""
    a, b = stores
    _ingest(a)
    dead = _ready(a)  # a claims four, and is gone before settling them
    holder = lake_claims.me(a.cursor())
    assert holder is not None and len(dead) == 4
    b_holder = lake_claims.me(b.cursor())
    assert b_holder is not None
    assert lake_claims.claims_of(b.cursor(), dead)[0]["holder_state"] == "alive"
    a.close()
    assert {c["holder_state"] for c in lake_claims.claims_of(b.cursor(), dead)} == {"gone"}
    assert lake_claims.holders(b.cursor(), lake_claims.SETTLE) == {}  # none held any more
    assert {(k, t) for k, t, _ in lake_claims.freed(b.cursor())} == {(lake_claims.SETTLE, t) for t in dead}
    assert sorted(_ready(b, 10)) == sorted(TRACES)
    taken = {t: (h, f) for t, h, f in _claim_rows(postgres, lake)}
    assert {t: taken[t] for t in dead} == {t: (b_holder[0], holder[0]) for t in dead}
    assert lake_claims.freed(b.cursor()) == set()
    assert _settler(b).run_once(now=T0 + SETTLE) == 6
    con = b.cursor()
    assert con.execute("SELECT count(*), count(DISTINCT trace_id) FROM trace_settles").fetchall() == [(6, 6)]
    assert _claim_rows(postgres, lake) == set()  # released once committed


def test_a_stuck_collectors_claims_are_taken_over_once_they_expire(
    stores: list[LakeStore], lake: Lake, postgres: Postgres
) -> None:
    """A holder alive but not finishing (stuck) keeps its claims until they expire (expiry is moved
    in the catalog database, not waited for)."""
    a, b = stores
    _ingest(a)
    stuck = _ready(a)
    holder = lake_claims.me(a.cursor())
    assert holder is not None
    assert _settler(b).run_once(now=T0 + SETTLE) == 2  # only the two a does not hold
    assert _ready(b) == [] and lake_claims.freed(b.cursor()) == set()
    _expire(postgres, lake, holder[0])
    assert {t for _, t, _ in lake_claims.freed(b.cursor())} == set(stuck)
    assert sorted(_ready(b)) == sorted(stuck)
    assert _settler(b).run_once(now=T0 + SETTLE) == 4
    con = b.cursor()
    assert con.execute("SELECT count(*), count(DISTINCT trace_id) FROM trace_settles").fetchall() == [(6, 6)]


def test_collectors_that_start_together_on_a_new_catalog_all_make_the_claims_table(
    lake: Lake, postgres: Postgres
) -> None:
    """PostgreSQL's ``CREATE TABLE IF NOT EXISTS`` fails on its unique index of type names when
    another session creates the same table and commits meanwhile: the moment two collectors start on
    a new catalog. Here the other session holds the table uncommitted while a store opens, and commits
    once the store's create waits on it; the store opens, on the table the other made."""
    db = lake.catalog.rsplit("/", 1)[1]
    with postgres.session(db) as other:
        assert other.stdin is not None and other.stdout is not None
        other.stdin.write(f"BEGIN;\n{lake_claims._CREATE};\n\\echo created\n")
        assert other.stdout.readline().strip() == "created"
        opened: list[LakeStore | BaseException] = []

        def open_store() -> None:
            try:
                opened.append(LakeStore(lake.catalog, lake.data_path, extension_repository=False))
            except BaseException as exc:
                opened.append(exc)

        thread = threading.Thread(target=open_store)
        thread.start()
        waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
        # (sessions waiting on a lock) until the create waits on the other session, or has ended
        wait_until(lambda: postgres.query(db, waiting).strip(), lambda n: n == "1" or not thread.is_alive(),
                   what="the store's create to wait on the other session", timeout=60)  # fmt: skip
        other.stdin.write("COMMIT;\n")
        other.stdin.flush()
        thread.join(60)
    assert len(opened) == 1
    store = opened[0]
    assert isinstance(store, LakeStore), store
    try:
        assert lake_claims.me(store.cursor()) is not None
        assert postgres.query(db, f"SELECT count(*) FROM {lake_claims.TABLE}").strip() == "0"
    finally:
        store.close()


def _evaluate(store: LakeStore, n: int) -> list[str]:
    """One cheap-tier round: claim up to ``n`` waiting traces and write a verdict for each."""
    from tests.store.contract.test_verdicts import _batch

    con = store.cursor()
    picked = verdicts.pending(con, n)
    ids = [t for t, _, _ in picked]
    if ids:
        tables, _ = verdicts.fetch_traces(con, ids)
        gens = dict(
            zip(
                tables.traces.column("trace_id").to_pylist(),
                tables.traces.column("generation").to_pylist(),
                strict=True,
            )
        )
        assert set(gens.values()) == {0}
        b = _batch(ids, 1, 0.5, T0 + timedelta(hours=1))
        verdicts.write_verdicts(con, b["evals"], b["log"], b["ran"], b["done"], T0 + timedelta(hours=1))
    return ids


def test_two_collectors_evaluate_each_trace_once_per_generation(
    stores: list[LakeStore], lake: Lake, postgres: Postgres
) -> None:
    a, b = stores
    _ingest(a)
    assert _settler(a).run_once(now=T0 + SETTLE) == 6
    held = verdicts.pending(a.cursor(), 2)  # a claims two and is stuck
    holder = lake_claims.me(a.cursor())
    assert holder is not None and len(held) == 2
    done = _evaluate(b, 10)
    assert len(done) == 4 and {t for t, _, _ in held}.isdisjoint(done)
    assert _evaluate(b, 10) == []
    _expire(postgres, lake, holder[0])
    assert sorted(_evaluate(b, 10)) == sorted(t for t, _, _ in held)
    con = b.cursor()
    rows: Any = con.execute(
        "SELECT count(*), count(DISTINCT trace_id), min(eval_generation), max(eval_generation) FROM traces"
    ).fetchall()
    assert rows == [(6, 6, 1, 1)]
    assert con.execute("SELECT count(*), count(DISTINCT trace_id) FROM evaluations").fetchall() == [(6, 6)]
    assert con.execute("SELECT count(*) FROM evaluation_history").fetchall() == [(0,)]
    assert verdicts.backlog(con) == (0, None)


def test_a_round_claims_at_most_its_cap_so_two_collectors_share_a_backlog(lake: Lake) -> None:
    capped = [
        LakeStore(lake.catalog, lake.data_path, extension_repository=False, claim_max_traces=2)
        for _ in range(2)
    ]
    try:
        a, b = capped
        a.write_spans(a.cursor(), ArrowBatch.merge([spans_batch(bytes.fromhex(t), T0, T0) for t in TRACES]))
        first, second = _ready(a, 10), _ready(b, 10)  # each looks at all six
        assert len(first) == 2 and len(second) == 2 and set(first).isdisjoint(second)
        # the cheap tier likewise (the six settled, as a settle round leaves them): each round takes
        # two, the oldest the other does not hold
        a.con.execute(
            "INSERT INTO trace_settles (trace_id, settle_id, assembled_spans, settled_at) "
            "SELECT trace_id, 's', span_count, $at FROM traces",
            {"at": T0 + SETTLE},
        )
        picked_a = verdicts.pending(a.cursor(), 10)
        picked_b = verdicts.pending(b.cursor(), 10)
        assert len(picked_a) == 2 and len(picked_b) == 2
        assert {t for t, _, _ in picked_a}.isdisjoint(t for t, _, _ in picked_b)
    finally:
        for s in capped:
            s.close()


def _judge_batch(trace_ids: list[str], gen: int, now: datetime) -> dict[str, Any]:
    """A judge-tier batch: one ``judge_answer_support`` verdict a trace, of generation ``gen``."""
    from tests.store.contract.test_verdicts import _batch

    b = _batch(trace_ids, gen, 0.9, now)
    evals = b["evals"]
    for name, value in (
        ("evaluator", "judge_answer_support"),
        ("tier", "judge"),
        ("metric", "answer_support"),
    ):
        at = evals.schema.get_field_index(name)
        evals = evals.set_column(at, evals.schema.field(at), pa.array([value] * evals.num_rows, pa.string()))
    b["evals"] = evals
    b["ran"] = pa.table({"trace_id": trace_ids, "evaluator": ["judge_answer_support"] * len(trace_ids)})
    return b


def _write(store: LakeStore, b: dict[str, Any], now: datetime) -> None:
    verdicts.write_verdicts(store.cursor(), b["evals"], b["log"], b["ran"], b["done"], now)


def test_a_judge_write_is_kept_while_another_collector_holds_the_trace_for_the_cheap_tier(
    stores: list[LakeStore],
) -> None:
    from tests.store.contract.test_verdicts import _batch

    a, b = stores
    _ingest(a)
    assert _settler(a).run_once(now=T0 + SETTLE) == 6
    assert len(_evaluate(a, 10)) == 6  # generation 1, the cheap tier's
    x = TRACES[0]
    # a's judge tier judged x at generation 1; meanwhile x waits for the cheap tier again, and b's
    # round holds it (fetched at generation 1)
    assert verdicts.requeue(b.cursor(), [x]) == [x]
    assert [t for t, _, _ in verdicts.pending(b.cursor(), 10)] == [x]
    later = T0 + timedelta(hours=2)
    _write(a, _judge_batch([x], 2, later), later)
    con = a.cursor()
    current = "SELECT evaluator, generation FROM evaluations WHERE trace_id = ? ORDER BY evaluator"
    assert con.execute(current, [x]).fetchall() == [("answer_support", 1), ("judge_answer_support", 2)]
    assert lake_claims.holders(con, lake_claims.JUDGE) == {}  # released once committed
    # b's round, fetched before the judge wrote, is left out (a second set of generation 2), and x
    # still waits for the cheap tier: b's next round evaluates it after the judge's generation
    _write(b, _batch([x], 2, 0.4, later), later)
    assert con.execute(current, [x]).fetchall() == [("answer_support", 1), ("judge_answer_support", 2)]
    assert [t for t, _, _ in verdicts.pending(b.cursor(), 10)] == [x]
    _write(b, _batch([x], 3, 0.4, later), later)
    assert con.execute(current, [x]).fetchall() == [("answer_support", 3), ("judge_answer_support", 2)]
    assert con.execute("SELECT eval_generation FROM traces WHERE trace_id = ?", [x]).fetchall() == [(3,)]
    assert verdicts.backlog(con) == (0, None)
