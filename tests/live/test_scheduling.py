"""The live loop on a real server: completion, late spans, triggers over sampling, eval_log reasons."""

from __future__ import annotations

from opentelemetry import trace as otel_trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from evaluators.service.scheduler import EvaluationService
from tests.clock import ManualClock
from tests.live.conftest import DOCS, GOLD
from tests.tracegen import rag_trace
from tests.waiting import wait_until

NO_SAMPLE = "[sampling]\nproduction_rate = 0.0\n"


def test_every_trace_gets_a_cheap_verdict_and_a_logged_judge_decision(live) -> None:
    srv = live(NO_SAMPLE)
    tr = srv.tracer()
    ids = [rag_trace(tr, query=f"q{i}", answer="a", candidates=DOCS) for i in range(5)]
    srv.drain()
    for t in ids:
        assert srv.status(t, "cheap") == ("evaluated", None)
        decision, reason = srv.status(t)
        assert decision == "sampled_out" and reason == "production rate 0"
    assert _metric(srv, "ragfault_traces_waiting_evaluation") == 0
    assert _metric(srv, 'ragfault_sampling_decisions_total{decision="sampled_out"}') == 5


def test_triggers_override_a_zero_rate(live) -> None:
    srv = live(NO_SAMPLE)
    tr = srv.tracer()
    plain = rag_trace(tr, query="q", answer="a", candidates=DOCS)
    failed = rag_trace(tr, query="q", answer="a", candidates=DOCS, error=True)
    empty = rag_trace(tr, query="q", answer="a", candidates=[])
    experiment = rag_trace(tr, query="q", answer="a", candidates=DOCS, run_id="exp-1")
    srv.drain()
    assert srv.status(plain)[0] == "sampled_out"
    for t, trigger in ((failed, "error_status"), (empty, "empty_retrieval")):
        decision, reason = srv.status(t)
        # sampled by the trigger; with no judge configured, filtered at the next step, saying why
        assert (decision, reason) == ("filtered", f"no judge configured (trigger:{trigger})")
    assert srv.status(experiment) == ("filtered", "no judge configured (sampled: experiment rate 1)")


def test_late_span_reevaluates_and_keeps_the_old_verdict_apart(live) -> None:
    srv = live(NO_SAMPLE)
    tr = srv.tracer()
    t = rag_trace(tr, query=GOLD["query"], answer="30 days", candidates=DOCS, case_id="c1")
    srv.drain()
    assert srv.scalar("SELECT max(generation) FROM evaluations WHERE trace_id = $t", t=t) == 1
    assert srv.scalar("SELECT count(*) FROM evaluation_history WHERE trace_id = $t", t=t) == 0
    root_id = srv.scalar("SELECT root_span_id FROM traces WHERE trace_id = $t", t=t)
    parent = SpanContext(int(t, 16), int(root_id, 16), is_remote=True, trace_flags=TraceFlags(1))
    ctx = otel_trace.set_span_in_context(NonRecordingSpan(parent))
    with tr.start_as_current_span(
        "late-tool", context=ctx, attributes={"openinference.span.kind": "TOOL", "tool.name": "x"}
    ):
        pass
    srv.drain()
    assert srv.scalar("SELECT count(*) FROM spans WHERE trace_id = $t", t=t) == 4
    assert srv.sql("SELECT DISTINCT generation FROM evaluations WHERE trace_id = $t", t=t) == [[2]]
    assert srv.sql("SELECT DISTINCT generation FROM evaluation_history WHERE trace_id = $t", t=t) == [[1]]
    assert srv.scalar("SELECT eval_generation FROM traces WHERE trace_id = $t", t=t) == 2
    assert srv.sql(
        "SELECT generation, decision FROM eval_log WHERE trace_id = $t AND tier = 'cheap' ORDER BY generation",
        t=t,
    ) == [[1, "evaluated"], [2, "evaluated"]]


def test_judge_sheds_load_when_it_cannot_keep_up(live, tmp_path) -> None:
    from bench.judge_server import JudgeServer

    with JudgeServer(latency=0.3) as judge:
        srv = live(
            "[sampling]\nproduction_rate = 1.0\njudge_queue_max = 1\njudge_batch_size = 1\n"
            'judge_factory = "bench.minimal_judge:build_judge_runner"\n'
            f'[bench_judge]\nbase_url = "{judge.url}"\n',
            settle_seconds=60,  # nothing settles on its own: drain() settles all 20 in one batch
        )
        tr = srv.tracer()
        ids = [rag_trace(tr, query=f"q{i}", answer="a", candidates=DOCS) for i in range(20)]
        srv.drain(timeout=45)
    decisions = [srv.status(t)[0] for t in ids]
    assert set(decisions) <= {"evaluated", "over_budget"}
    assert decisions.count("over_budget") >= 10
    assert decisions.count("evaluated") >= 1
    shed = srv.sql("SELECT reason FROM eval_status WHERE decision = 'over_budget' LIMIT 1")[0][0]
    assert shed.startswith("backlog")
    assert all(srv.status(t, "cheap")[0] == "evaluated" for t in ids)  # the cheap tier still ran on all
    assert judge.requests == decisions.count("evaluated")  # one call per judged trace


def test_the_judge_tier_sheds_traces_that_waited_longer_than_judge_max_wait_seconds(live) -> None:
    """While the judge answers the first trace, the clock moves past ``judge_max_wait_seconds``:
    the traces still queued are shed (``over_budget``, ``backlog: waited ...``), not judged."""

    from bench.judge_server import JudgeServer

    clock = ManualClock()
    with JudgeServer(latency=3.0) as judge:  # holds the first call while the clock is moved
        srv = live(
            "[sampling]\nproduction_rate = 1.0\njudge_batch_size = 1\njudge_max_wait_seconds = 300\n"
            'judge_factory = "bench.minimal_judge:build_judge_runner"\n'
            f'[bench_judge]\nbase_url = "{judge.url}"\n',
            clock=clock,
            settle_seconds=600,
        )
        tr = srv.tracer()
        ids = [rag_trace(tr, query=f"q{i}", answer="a", candidates=DOCS) for i in range(3)]
        srv.settle()
        srv.runtime.find(EvaluationService).wake()
        tier = srv.runtime.find(EvaluationService).judge_tier
        wait_until(lambda: (tier.busy, tier.queue.qsize()), lambda s: s == (True, 2),
                   what="the judge to take the first trace with two queued (busy, queued)", timeout=60, every=0.01)  # fmt: skip
        clock.advance(301)
        srv.drain(timeout=60)
    decisions = {t: srv.status(t) for t in ids}
    judged = [t for t, (d, _) in decisions.items() if d == "evaluated"]
    shed = [r for d, r in decisions.values() if d == "over_budget"]
    assert len(judged) == 1 and len(shed) == 2
    assert all(r.startswith("backlog: waited 301 s > 300 s") for r in shed), shed
    assert judge.requests == 1


def test_a_long_backlog_is_evaluated_by_worker_processes_with_the_same_rows(live) -> None:
    """More than one batch waiting: the server hands the batches to its worker pool. Evaluating the
    same traces again in the server process (the API) gives the same verdicts. Idle workers stop
    after POOL_IDLE_SECONDS, not before."""
    from evaluators.service import scheduler

    clock = ManualClock()
    srv = live(NO_SAMPLE + "[evaluation]\nbatch_size = 2\nworkers = 1\n", clock=clock, settle_seconds=600)
    tr = srv.tracer()
    ids = [
        rag_trace(tr, query=GOLD["query"], answer=f"{n} days", candidates=DOCS, case_id="c1")
        for n in (7, 30) * 4
    ]
    srv.drain(timeout=120)  # settles all eight at once: one round of two batches plus one
    assert _pool_starts(srv) == 1
    assert srv.scalar("SELECT count(DISTINCT trace_id) FROM evaluations WHERE generation = 1") == 8
    r = srv.http.post("/api/v1/evaluate", json={"trace_ids": ids})
    assert r.status_code == 200, r.text
    diff = srv.scalar(
        """
        WITH a AS (SELECT trace_id, evaluator, metric, span_id, status, value, numerator, denominator, passed,
                          details FROM evaluation_history WHERE generation = 1),
             b AS (SELECT trace_id, evaluator, metric, span_id, status, value, numerator, denominator, passed,
                          details FROM evaluations WHERE generation = 2)
        SELECT count(*) FROM ((SELECT * FROM a EXCEPT ALL SELECT * FROM b) UNION ALL
                              (SELECT * FROM b EXCEPT ALL SELECT * FROM a))
        """
    )
    assert diff == 0
    assert srv.scalar("SELECT count(*) FROM evaluations WHERE generation = 2") > 8 * 20
    # the verdicts differ where the answers do: 30 days is supported, 7 days is not
    assert (
        srv.scalar(
            "SELECT count(DISTINCT passed) FROM evaluations WHERE evaluator = 'answer_support' AND passed IS NOT NULL"
        )
        == 2
    )
    svc = srv.runtime.find(EvaluationService)
    pool = svc._pool
    assert pool is not None
    workers = pool.worker_processes()
    assert workers
    srv.parked()
    clock.tick(scheduler.IDLE_TICK_SECONDS)  # idle for less than POOL_IDLE_SECONDS: the workers stay
    assert svc._pool is pool and pool.usable
    clock.tick(scheduler.POOL_IDLE_SECONDS)
    assert svc._pool is None
    for w in workers:
        w.join(30)
        assert not w.is_alive()


def test_a_backlog_of_several_groups_and_rounds_is_evaluated_and_logged_once(live, monkeypatch) -> None:
    """With workers, traces are picked a group at a time while the workers still evaluate the last
    group: none is picked twice or left out, and each gets its eval_log rows once."""
    from evaluators.service import scheduler as service

    monkeypatch.setattr(service, "GROUP_BATCHES", 1)  # groups of 2 batches of 2 traces
    monkeypatch.setattr(service, "ROUND_GROUPS", 2)  # rounds of 8 traces
    srv = live(NO_SAMPLE + "[evaluation]\nbatch_size = 2\nworkers = 1\n", settle_seconds=600)
    tr = srv.tracer()
    ids = [rag_trace(tr, query=f"q{i}", answer="a", candidates=DOCS) for i in range(21)]
    srv.drain(timeout=120)  # settles all 21 at once: 6 groups in 3 rounds
    assert _pool_starts(srv) == 1
    rows = srv.sql(
        "SELECT trace_id, eval_generation, evaluated_spans = assembled_spans FROM traces ORDER BY trace_id"
    )
    assert rows == [[t, 1, True] for t in sorted(ids)]
    assert srv.scalar("SELECT count(DISTINCT trace_id) FROM evaluations WHERE generation = 1") == 21
    assert srv.scalar("SELECT count(*) FROM evaluation_history") == 0
    logged = srv.sql(
        "SELECT tier, decision, count(*), count(DISTINCT trace_id) FROM eval_log GROUP BY ALL ORDER BY 1"
    )
    assert logged == [["cheap", "evaluated", 21, 21], ["judge", "sampled_out", 21, 21]]


def test_a_round_that_fails_logs_its_unwritten_traces_as_errors_and_keeps_the_written(
    live, monkeypatch
) -> None:
    from evaluators.service import scheduler as service
    from evaluators.service.runner import StoreRunner

    monkeypatch.setattr(service, "GROUP_BATCHES", 1)
    monkeypatch.setattr(service, "ROUND_GROUPS", 2)
    writes = {"n": 0}
    real_write = StoreRunner._write

    def failing_write(self, out, now, window=None):  # noqa: ANN001, ANN202
        writes["n"] += 1
        if writes["n"] == 2:
            raise RuntimeError("disk full")
        return real_write(self, out, now, window)

    monkeypatch.setattr(StoreRunner, "_write", failing_write)
    srv = live(NO_SAMPLE + "[evaluation]\nbatch_size = 2\nworkers = 1\n", settle_seconds=600)
    tr = srv.tracer()
    ids = [rag_trace(tr, query=f"q{i}", answer="a", candidates=DOCS) for i in range(8)]
    srv.drain(timeout=120)
    cheap = dict(srv.sql("SELECT trace_id, decision FROM eval_log WHERE tier = 'cheap'"))
    assert sorted(cheap) == sorted(ids)  # every trace logged once, none left waiting
    written = [t for t, d in cheap.items() if d == "evaluated"]
    failed = [t for t, d in cheap.items() if d == "error"]
    assert len(written) >= 2 and len(failed) >= 2 and len(written) + len(failed) == 8
    reasons = {r[0] for r in srv.sql("SELECT reason FROM eval_log WHERE decision = 'error'")}
    assert reasons == {"RuntimeError: disk full"}
    judged = {r[0] for r in srv.sql("SELECT trace_id FROM eval_log WHERE tier = 'judge'")}
    assert set(written) <= judged and not judged & set(failed)
    assert (
        srv.scalar("SELECT count(*) FROM traces WHERE evaluated_spans IS DISTINCT FROM assembled_spans") == 0
    )
    assert _metric(srv, "ragfault_evaluation_failures_total") == 1


def test_an_idle_loop_does_not_scan_for_waiting_traces_until_woken(live, monkeypatch) -> None:
    from evaluators.service import scheduler

    clock = ManualClock()
    srv = live(NO_SAMPLE, clock=clock)
    svc = srv.runtime.find(EvaluationService)
    srv.drain()
    srv.parked()
    looked: list[float] = []
    real_pending = svc._pending

    def counting(n):  # noqa: ANN001, ANN202
        looked.append(clock.monotonic())
        return real_pending(n)

    monkeypatch.setattr(svc, "_pending", counting)
    assert 3 * scheduler.IDLE_TICK_SECONDS < scheduler.IDLE_POLL_SECONDS
    for _ in range(3):  # three ticks of the loop, nothing waiting, nothing woke it
        clock.tick(scheduler.IDLE_TICK_SECONDS)
    assert looked == []
    clock.tick(scheduler.IDLE_POLL_SECONDS)  # unwoken, it still looks once every IDLE_POLL_SECONDS
    assert len(looked) == 1
    tr = srv.tracer()
    t = rag_trace(tr, query="q", answer="a", candidates=DOCS)
    srv.drain()  # settles and wakes it: no time need pass
    assert len(looked) > 1 and srv.status(t, "cheap") == ("evaluated", None)


def test_the_idle_poll_evaluates_what_waited_without_a_wake_up_and_says_so(live, caplog) -> None:
    """Every path that makes a trace wait wakes the loop; one that did not would leave the trace
    for up to IDLE_POLL_SECONDS, and the poll that finds it logs that it happened."""
    import logging

    from evaluators.service import scheduler

    clock = ManualClock()
    srv = live(NO_SAMPLE, clock=clock)
    tr = srv.tracer()
    t = rag_trace(tr, query="q", answer="a", candidates=DOCS)
    srv.drain()
    srv.parked()
    caplog.set_level(logging.INFO, logger="ragfault.evaluate")
    requeue = "UPDATE traces SET evaluated_spans = NULL WHERE trace_id = $t"  # behind the loop's back
    srv.runtime.writer.call(lambda con: con.execute(requeue, {"t": t}), timeout=60)
    clock.tick(scheduler.IDLE_TICK_SECONDS)
    assert srv.scalar("SELECT eval_generation FROM traces WHERE trace_id = $t", t=t) == 1
    assert "without a wake-up" not in caplog.text
    clock.tick(scheduler.IDLE_POLL_SECONDS)
    assert srv.scalar("SELECT eval_generation FROM traces WHERE trace_id = $t", t=t) == 2
    assert "1 traces were found waiting without a wake-up" in caplog.text


def test_the_api_reevaluates_the_traces_a_filter_selects(live) -> None:
    srv = live(NO_SAMPLE)
    tr = srv.tracer()
    chosen = [rag_trace(tr, query=f"q{i}", answer="a", candidates=DOCS, run_id="exp-2") for i in range(3)]
    other = rag_trace(tr, query="q", answer="a", candidates=DOCS)
    srv.drain()
    r = srv.http.post("/api/v1/evaluate", json={"run_id": "exp-2"})
    assert r.status_code == 200, r.text
    assert r.json() == {"evaluated": 3}
    for t in chosen:
        assert srv.scalar("SELECT eval_generation FROM traces WHERE trace_id = $t", t=t) == 2
    assert srv.scalar("SELECT eval_generation FROM traces WHERE trace_id = $t", t=other) == 1


def _pool_starts(srv) -> float:  # noqa: ANN001
    """How many times the server started its worker pool."""
    return _metric(srv, "ragfault_evaluation_pool_starts_total")


def test_steady_traffic_goes_to_the_workers(live) -> None:
    """Short rounds (a batch or less waiting) are evaluated in the server process only while fewer
    than a batch of traces were evaluated in the last POOL_RATE_SECONDS: steady traffic, settled a
    few traces a round, goes to the workers and keeps the evaluators off the server's GIL."""
    # the clock stands still: every round is within the last POOL_RATE_SECONDS
    srv = live(
        NO_SAMPLE + "[evaluation]\nbatch_size = 2\nworkers = 1\n", clock=ManualClock(), settle_seconds=600
    )
    tr = srv.tracer()
    for i in range(2):  # two rounds of one trace: two traces in the window, not more than a batch
        rag_trace(tr, query=f"q{i}", answer="a", candidates=DOCS)
        srv.drain(timeout=60)
    assert _pool_starts(srv) == 0
    rag_trace(tr, query="q2", answer="a", candidates=DOCS)  # a third: more than a batch in the window
    srv.drain(timeout=120)
    assert _pool_starts(srv) == 1
    assert srv.scalar("SELECT count(DISTINCT trace_id) FROM evaluations") == 3


def test_a_trickle_is_evaluated_in_the_server_process(live) -> None:
    from evaluators.service import scheduler

    clock = ManualClock()
    srv = live(NO_SAMPLE + "[evaluation]\nbatch_size = 2\nworkers = 1\n", clock=clock, settle_seconds=600)
    tr = srv.tracer()
    for i in range(3):
        rag_trace(tr, query=f"q{i}", answer="a", candidates=DOCS)
        srv.drain(timeout=60)
        clock.advance(scheduler.POOL_RATE_SECONDS + 1)  # rounds far apart: none recent
    assert _pool_starts(srv) == 0
    assert srv.scalar("SELECT count(DISTINCT trace_id) FROM evaluations") == 3


def _metric(srv, series: str) -> float:  # noqa: ANN001
    """The value of one series (name and labels, as printed) on the server's ``/metrics``."""
    lines = srv.http.get("/metrics").text.splitlines()
    values = [float(ln.rsplit(" ", 1)[1]) for ln in lines if ln.rsplit(" ", 1)[0] == series]
    assert len(values) == 1, f"{series} appears {len(values)} times on /metrics"
    return values[0]


def test_the_judge_paces_on_the_service_s_clock(live) -> None:
    """The default judge factory is given the evaluation service's clock: the judge's rate limiter
    and retry pauses run on a test's manual clock, as the service's rounds do."""
    clock = ManualClock()
    srv = live(NO_SAMPLE + '[judge]\nbase_url = "http://127.0.0.1:9"\nmodel = "m"\n', clock=clock)
    svc = srv.runtime.find(EvaluationService)
    assert svc is not None and svc.judge is not None
    assert svc.judge.client.clock is clock
    assert svc.judge.client.limiter.clock is clock
