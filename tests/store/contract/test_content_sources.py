"""Content events on every backend fill a span only from the span's own service or a trusted one: a
record naming another service's span changes nothing and is counted, and does not even re-open the
settled trace (a lake's ingest looks the span up as the file's does); a trusted source's record
fills the span."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from collector.ingest.span_rows import flatten
from collector.settling.settle import Settler
from collector.store.content import ContentSources
from collector.store.schema import batch_to_arrow
from tests.collector.otlp_build import new_span_id, request, span
from tests.store.contract.build import content_event_batch, spans_batch
from tests.store.contract.conftest import requires

T0 = datetime(2026, 3, 2, 12, 0, 0)
SETTLE = timedelta(seconds=2)
TRACE = "0d" * 16
OUTPUT = "SELECT output_text FROM steps WHERE trace_id = ? AND span_id = ?"


def test_only_the_spans_own_service_or_a_trusted_one_fills_it(backend: Any) -> None:
    requires(backend, "settling")
    requires(backend, "write_signals")
    refused: list[int] = []
    sources = ContentSources(frozenset({"shipper"}), refused.append)
    backend.content_sources = sources
    con = backend.cursor()
    backend.write_spans(con, spans_batch(bytes.fromhex(TRACE), T0, T0))
    chat = span(bytes.fromhex(TRACE), span_id=new_span_id(), parent=b"\x00" * 7 + b"\x01", name="chat m1",
                attrs={"gen_ai.operation.name": "chat", "gen_ai.request.model": "m1"})  # fmt: skip
    backend.write_spans(con, batch_to_arrow(flatten(request([chat], "shop"), received_at=T0)))
    llm = chat.span_id.hex()
    settler = Settler(
        backend.cursor(), lambda job: job(con), settle_seconds=SETTLE.total_seconds(), max_wait_seconds=60,
        content_sources=sources,
    )  # fmt: skip

    # before the first settle: the attacker's record is left out (and counted), the own one fills
    at = T0 + timedelta(milliseconds=10)
    backend.write_signals(con, content_event_batch(TRACE, llm, at, at, answer="Forged.", service="attacker"))
    backend.write_signals(con, content_event_batch(TRACE, llm, at, at, answer="Own answer."))
    assert settler.run_once(now=at + SETTLE) == 1
    assert con.execute(OUTPUT, [TRACE, llm]).fetchall() == [("Own answer.",)]
    assert sum(refused) == 1

    # after it settled: another forged record changes nothing
    late = T0 + timedelta(seconds=30)
    forged = content_event_batch(TRACE, llm, late, late, answer="Forged again.", service="attacker")
    assert backend.write_signals(con, forged) == (1, 0)  # stored, as logs are
    assert settler.run_once(now=late + SETTLE) == 0  # it does not re-open the trace at all
    assert con.execute(OUTPUT, [TRACE, llm]).fetchall() == [("Own answer.",)]
    assert sum(refused) == 2
    assert con.execute("SELECT content_events, last_received_at FROM traces").fetchall() == [(2, at)]

    # a trusted source's record re-opens the trace and fills the span
    later = late + timedelta(seconds=30)
    backend.write_signals(
        con, content_event_batch(TRACE, llm, later, later, answer="Shipped.", service="shipper")
    )
    assert settler.run_once(now=later + SETTLE) == 1
    assert con.execute(OUTPUT, [TRACE, llm]).fetchall() == [("Own answer.\nShipped.",)]
