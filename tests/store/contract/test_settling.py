"""Settling on every backend: a trace is ready once its spans have been quiet for the settle delay (the
times are the test's, not a clock's), shows in the backlog meanwhile, and once settled its row, steps
and derived context are stored and it waits no more until a late span comes."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from collector.ingest.span_rows import flatten
from collector.settling.settle import Settler
from collector.store import references, settling
from collector.store.schema import batch_to_arrow
from evaluators.gold import KBDocument, kb_row
from tests.collector.otlp_build import new_span_id, request, span
from tests.store.contract.build import content_event_batch, spans_batch
from tests.store.contract.conftest import requires

T0 = datetime(2026, 3, 2, 12, 0, 0)
SETTLE = timedelta(seconds=2)
MAX_WAIT = timedelta(seconds=60)
TRACE = "0a" * 16


def _ready(store: Any, now: datetime) -> list[settling.Waiting]:
    return settling.ready_traces(store.cursor(), settled=now - SETTLE, expired=now - MAX_WAIT, limit=100)


def _backlog(store: Any, now: datetime) -> tuple[int, datetime | None]:
    return settling.ready_backlog(
        store.cursor(),
        settled=now - SETTLE,
        expired=now - MAX_WAIT,
        settle=SETTLE,
        max_wait=MAX_WAIT,
        recent=now - timedelta(hours=1),
    )


def test_a_trace_is_ready_after_the_settle_delay_and_not_before(backend: Any) -> None:
    requires(backend, "settling")
    backend.write_spans(backend.cursor(), spans_batch(bytes.fromhex(TRACE), T0, T0))
    soon = T0 + SETTLE / 2
    assert _ready(backend, soon) == []
    assert _backlog(backend, soon) == (0, None)
    assert settling.any_waiting(backend.cursor(), soon - timedelta(hours=1))  # waiting, not ready
    later = T0 + SETTLE
    assert _ready(backend, later) == [settling.Waiting(TRACE, 3, T0, T0, settled_before=False)]
    assert _backlog(backend, later + timedelta(seconds=5)) == (1, T0 + SETTLE)  # ready since T0 + SETTLE
    # recent: a round that looks only at traces received lately does not see older ones
    old = settling.ready_traces(
        backend.cursor(), settled=later - SETTLE, expired=later - MAX_WAIT, limit=100, recent=T0 + SETTLE
    )
    assert old == []


def test_a_settled_trace_has_its_row_steps_and_context_and_waits_no_more(backend: Any) -> None:
    requires(backend, "settling")
    con = backend.cursor()
    backend.write_spans(con, spans_batch(bytes.fromhex(TRACE), T0, T0))
    settler = Settler(
        backend.cursor(), lambda job: job(con), settle_seconds=SETTLE.total_seconds(), max_wait_seconds=60
    )
    at = T0 + SETTLE + timedelta(seconds=1)
    steps, docs = settling.load_trace_parts(backend.cursor(), [TRACE])
    assert sorted(s.step_type for s in steps[TRACE]) == ["chain", "llm", "retrieval"]
    assert [d.content for d in docs[TRACE]] == ["Refunds take 30 days."]
    assert settler.run_once(now=at) == 1
    row = con.execute(
        "SELECT query_text, answer_text, assembled_spans, settled_at FROM traces WHERE trace_id = ?", [TRACE]
    ).fetchall()
    assert row == [("refund?", "Refunds take 30 days.", 3, at)]
    derived = con.execute(
        "SELECT stage, content, received_at FROM step_documents WHERE trace_id = ? AND source = 'derived'",
        [TRACE],
    ).fetchall()
    assert derived == [("context", "Refunds take 30 days.", T0)]
    assert _ready(backend, at + timedelta(hours=1)) == []
    assert not settling.any_waiting(backend.cursor(), T0 - timedelta(hours=1))
    # settling again (a forced round, nothing new) finds nothing, and the derived context stays once
    assert settler.run_once(force=True) == 0
    assert con.execute("SELECT count(*) FROM step_documents WHERE source = 'derived'").fetchall() == [(1,)]


def test_a_late_span_opens_a_settled_trace_again(backend: Any) -> None:
    requires(backend, "settling")
    con = backend.cursor()
    backend.write_spans(con, spans_batch(bytes.fromhex(TRACE), T0, T0))
    settler = Settler(
        backend.cursor(), lambda job: job(con), settle_seconds=SETTLE.total_seconds(), max_wait_seconds=60
    )
    assert settler.run_once(now=T0 + SETTLE) == 1
    late = T0 + timedelta(seconds=30)
    extra = span(bytes.fromhex(TRACE), span_id=new_span_id(), parent=b"\x00" * 7 + b"\x01", name="late")
    assert backend.write_spans(con, batch_to_arrow(flatten(request([extra], "shop"), received_at=late))) == 1
    assert _ready(backend, late + SETTLE) == [settling.Waiting(TRACE, 4, T0, late, settled_before=True)]
    assert settler.run_once(now=late + SETTLE) == 1
    assert con.execute("SELECT assembled_spans, settled_at FROM traces").fetchall() == [(4, late + SETTLE)]
    # the derived context is replaced, not added to, and is dated inside the trace's new window
    derived = con.execute(
        "SELECT content, received_at FROM step_documents WHERE source = 'derived'"
    ).fetchall()
    assert derived == [("Refunds take 30 days.", late)]


def test_a_content_event_after_the_trace_settled_opens_it_again_and_fills_its_step(backend: Any) -> None:
    requires(backend, "settling")
    requires(backend, "write_signals")
    con = backend.cursor()
    backend.write_spans(con, spans_batch(bytes.fromhex(TRACE), T0, T0))
    # a model call whose span carries no messages: its instrumentor sends them as log records
    chat = span(bytes.fromhex(TRACE), span_id=new_span_id(), parent=b"\x00" * 7 + b"\x01", name="chat m1",
                attrs={"gen_ai.operation.name": "chat", "gen_ai.request.model": "m1"})  # fmt: skip
    backend.write_spans(con, batch_to_arrow(flatten(request([chat], "shop"), received_at=T0)))
    llm = chat.span_id.hex()
    settler = Settler(
        backend.cursor(), lambda job: job(con), settle_seconds=SETTLE.total_seconds(), max_wait_seconds=60
    )
    assert settler.run_once(now=T0 + SETTLE) == 1
    late = T0 + timedelta(seconds=30)
    event = content_event_batch(TRACE, llm, late, late, answer="Refunds take 14 days now.")
    assert backend.write_signals(con, event) == (1, 0)
    assert backend.write_signals(con, event) == (0, 0)  # sent again: counted once
    assert con.execute("SELECT content_events, last_received_at FROM traces").fetchall() == [(1, late)]
    assert _ready(backend, late + SETTLE) == [settling.Waiting(TRACE, 5, T0, late)]
    assert settler.run_once(now=late + SETTLE) == 1
    step = "SELECT output_text FROM steps WHERE trace_id = ? AND span_id = ?"
    assert con.execute(step, [TRACE, llm]).fetchall() == [("Refunds take 14 days now.",)]
    # where each field came from: the reader's fields at ingest, the filled one from the log record
    where = "SELECT provenance FROM steps WHERE trace_id = ? AND span_id = ?"
    assert json.loads(con.execute(where, [TRACE, llm]).fetchall()[0][0]) == {
        "step_type": "genai",
        "model": "genai",
        "output_text": "genai@log_records",
    }
    assert con.execute("SELECT assembled_spans FROM traces").fetchall() == [(5,)]
    assert _ready(backend, late + timedelta(hours=1)) == []


def test_documents_sent_without_text_take_the_registrys_when_their_trace_settles(backend: Any) -> None:
    requires(backend, "settling")
    references.upsert_kb(
        backend.con, [kb_row(KBDocument(doc_id="kb-7", content="Refunds take 30 days."), T0)]
    )
    tid = bytes.fromhex(TRACE)
    root = new_span_id()
    textless = {"openinference.span.kind": "RETRIEVER", "retrieval.documents.0.document.id": "kb-7"}
    spans = [
        span(tid, span_id=root, name="query", attrs={"openinference.span.kind": "CHAIN", "input.value": "refund?"}),
        span(tid, parent=root, name="retrieve", attrs=textless),
    ]  # fmt: skip
    con = backend.cursor()
    backend.write_spans(con, batch_to_arrow(flatten(request(spans, "shop"), received_at=T0)))
    read = "SELECT doc_id, content, content_source FROM step_documents WHERE source = 'span'"
    assert con.execute(read).fetchall() == [("kb-7", None, None)]
    settler = Settler(
        backend.cursor(), lambda job: job(con), settle_seconds=SETTLE.total_seconds(), max_wait_seconds=60
    )
    assert settler.run_once(now=T0 + SETTLE) == 1
    assert con.execute(read).fetchall() == [("kb-7", "Refunds take 30 days.", "registry")]
