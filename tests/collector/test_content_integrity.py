"""Trace integrity: a GenAI content event fills a span only from the service that sent the span (or
a trusted one), a forged one changes nothing and is counted, and a trace re-opened again and again
is settled again at most max_resettles_per_minute times a minute. Real SDK exporters, a real
server; the settler's clock is a test clock (no sleeps decide anything)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from opentelemetry._logs import LogRecord
from opentelemetry.trace import NonRecordingSpan, SpanContext, set_span_in_context

from collector.settling.settle import ResettleLimit, utcnow
from tests.clock import ManualClock
from tests.collector.test_content_events import ANSWER, DOCS, details_record, send_logs, send_trace
from tests.conftest import Server, StartServer
from tests.otel_helpers import http_provider

VICTIM = "content-events"  # the service send_trace sends its spans as
REFUSED = "ragfault_content_events_refused_total"
DEFERRED = "ragfault_resettles_deferred_total"
FORGED = "Annual members get 7 days only."


@pytest.fixture(scope="module")
def srv(start_module_server: StartServer) -> Server:
    return start_module_server(trusted_content_sources=("log-shipper",), max_resettles_per_minute=2)


def forged_choice() -> LogRecord:
    return LogRecord(
        event_name="gen_ai.choice",
        body={"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": FORGED}},
    )


def state(srv: Server, ctx: SpanContext) -> dict[str, object]:
    """What a forged record must not change: the answer, the chat step's output, and the counts that
    decide whether the trace settles (and is evaluated) again."""
    row = srv.sql(
        "SELECT t.answer_text, s.output_text, t.content_events, t.assembled_spans, t.span_count, t.settled_at "
        "FROM traces t JOIN steps s ON s.trace_id = t.trace_id AND s.span_id = $s WHERE t.trace_id = $t",
        t=format(ctx.trace_id, "032x"),
        s=format(ctx.span_id, "016x"),
    )[0]
    keys = ("answer", "output", "events", "assembled", "spans", "settled_at")
    return dict(zip(keys, row, strict=True))


def refused(srv: Server) -> float:
    return srv.runtime.metrics.get(REFUSED)


def settled_trace(srv: Server, service: str = VICTIM) -> SpanContext:
    """A trace whose chat span got its answer from its own service's content event, settled."""
    ctx = send_trace(srv, service=service)
    send_logs(srv, ctx, [details_record(DOCS)], service=service)
    srv.settle()
    assert state(srv, ctx)["answer"] == ANSWER
    return ctx


def test_a_forged_event_after_the_trace_settled_changes_nothing_and_is_counted(srv: Server) -> None:
    ctx = settled_trace(srv)
    before, count = state(srv, ctx), refused(srv)

    send_logs(srv, ctx, [forged_choice(), forged_choice()], service="attacker")
    stored = srv.scalar(
        "SELECT count(*) FROM log_records WHERE trace_id = $t AND service_name = 'attacker'",
        t=format(ctx.trace_id, "032x"),
    )
    assert stored == 2  # stored, as logs are, but they do not re-open the trace
    assert refused(srv) - count == 2
    assert srv.settle() == 0  # nothing to settle again: no settle round, no evaluation
    assert state(srv, ctx) == before


def test_a_forged_event_before_the_first_settle_is_kept_out_and_counted(srv: Server) -> None:
    ctx = send_trace(srv)
    send_logs(srv, ctx, [details_record(DOCS)])
    send_logs(srv, ctx, [forged_choice()], service="attacker")
    count = refused(srv)
    srv.settle()
    t = state(srv, ctx)
    assert t["answer"] == ANSWER and t["output"] == ANSWER  # the victim's own content only
    assert refused(srv) - count == 1
    # the trace's own settle counted it once: settling again (nothing new) counts nothing more
    assert srv.settle() == 0 and refused(srv) - count == 1


def test_a_forged_event_alone_leaves_the_step_empty(srv: Server) -> None:
    ctx = send_trace(srv)
    send_logs(srv, ctx, [forged_choice()], service="attacker")
    srv.settle()
    t = state(srv, ctx)
    assert t["answer"] is None and t["output"] is None


def test_a_trusted_source_fills_any_service_span_before_and_after_the_settle(srv: Server) -> None:
    early = send_trace(srv)
    send_logs(srv, early, [details_record(DOCS)], service="log-shipper")
    srv.settle()
    assert state(srv, early)["answer"] == ANSWER

    late = send_trace(srv)
    srv.settle()
    assert state(srv, late)["answer"] is None
    count = refused(srv)
    send_logs(srv, late, [details_record(DOCS)], service="log-shipper")
    assert state(srv, late)["events"] == 1  # it re-opens the trace
    srv.settle()
    assert state(srv, late)["answer"] == ANSWER
    assert refused(srv) == count


def test_the_own_service_still_re_opens_a_settled_trace(srv: Server) -> None:
    ctx = send_trace(srv)
    srv.settle()
    send_logs(srv, ctx, [details_record(DOCS)])
    assert state(srv, ctx)["events"] == 1
    srv.settle()
    assert state(srv, ctx)["answer"] == ANSWER


def late_span(srv: Server, ctx: SpanContext, n: int) -> None:
    """A span of the trace sent after it settled (a real exporter, the trace's own service)."""
    provider = http_provider(srv.url, service=VICTIM)
    parent = set_span_in_context(NonRecordingSpan(ctx))
    with provider.get_tracer("tests").start_as_current_span(f"late {n}", context=parent):
        pass
    provider.shutdown()


def test_a_trace_re_opened_again_and_again_is_rate_limited(srv: Server) -> None:
    settler = srv.runtime.settler
    assert settler is not None
    clock = ManualClock(start=time.monotonic())
    settler.clock = clock.monotonic
    try:
        ctx = send_trace(srv)
        srv.settle()  # its first settle (the server's loop may have been first): no re-settle
        tid = format(ctx.trace_id, "032x")
        later = utcnow() + timedelta(minutes=1)  # every late span is complete by then

        def reassembled() -> bool:
            t = state(srv, ctx)
            return t["assembled"] == t["spans"] + t["events"]  # type: ignore[operator]

        deferred = srv.runtime.metrics.get(DEFERRED)
        for n in range(2):  # two re-settles in the minute are allowed
            late_span(srv, ctx, n)
            settler.run_once(now=later)  # (or the server's loop was first)
            assert reassembled(), n
            clock.advance(10)
        late_span(srv, ctx, 2)  # the third within the minute waits
        for _ in range(3):  # however often a round looks (the server's loop looks too)
            settler.run_once(now=later)
            assert not reassembled()
        assert srv.runtime.metrics.get(DEFERRED) - deferred == 1  # counted once, not each round
        assert srv.scalar("SELECT span_count FROM traces WHERE trace_id = $t", t=tid) == 3 + 3

        clock.advance(40)  # the first re-settle leaves the minute
        settler.run_once(now=later)
        assert reassembled()
        # a forced round (a command settling a file) is not limited
        late_span(srv, ctx, 3)
        late_span(srv, ctx, 4)
        assert srv.settle() >= 1 and reassembled()
    finally:
        settler.clock = time.monotonic


def test_the_limit_forgets_re_settles_that_left_the_minute() -> None:
    limit = ResettleLimit(2, window=60)
    for t in (0.0, 10.0):
        assert limit.allows("a", t)
        limit.record("a", t)
    assert not limit.allows("a", 20.0) and limit.allows("b", 20.0)
    limit.deferred.add("a")
    assert limit.allows("a", 60.0)  # the re-settle at 0 left the window
    limit.record("a", 60.0)
    assert "a" not in limit.deferred
    limit.deferred.add("gone")  # held back, then deleted (retention): not kept once its window passed
    assert limit.allows("a", 500.0)
    assert limit.deferred == set() and not limit._counts and not limit._order  # memory of the minute only
