"""The judge sampler's facts of a written batch, taken from the rows the batch was evaluated from and
the rows written for it (``evaluators.service.sampling.written_facts``), are the facts it reads back from the
tables after the write: the scheduler decides the judge tier from the former, reading only feedback
and root attributes."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest

from collector.ingest.span_rows import flatten
from collector.store.schema import batch_to_arrow
from collector.store.verdicts import TraceTables
from evaluators.service.config import EvaluationSettings, evaluator_configs
from evaluators.service.feedback import read_annotations, store_feedback
from evaluators.service.registry import discover
from evaluators.service.runner import Runner, StoreRunner, utcnow
from evaluators.service.running import EvalTables
from evaluators.service.sampling import load_facts, written_facts
from evaluators.service.sampling_settings import SamplingRule, SamplingSettings
from ragfault.local import LocalStore
from tests.collector.otlp_build import new_span_id, new_trace_id, rag_spans, request, span

T0 = datetime(2026, 11, 1, 12, 0, 0)


def _traces() -> list[tuple[list, str]]:
    """Traces of several shapes, each with the service it is exported from."""
    plain = new_trace_id()
    failed = new_trace_id()
    failed_spans = rag_spans(failed)
    failed_spans[1].status.code = failed_spans[1].status.STATUS_CODE_ERROR
    empty = new_trace_id()
    root = new_span_id()
    empty_spans = [
        span(empty, span_id=root, name="ask", attrs={"openinference.span.kind": "CHAIN", "input.value": "q"}),
        span(
            empty,
            parent=root,
            name="retrieve",
            attrs={"openinference.span.kind": "RETRIEVER", "output.value": "[]"},
        ),
    ]
    experiment = new_trace_id()
    experiment_spans = rag_spans(experiment)
    experiment_spans[0].attributes.add(key="ragfault.run_id").value.string_value = "exp-7"
    experiment_spans[0].attributes.add(key="tenant").value.string_value = "acme"
    no_retrieval = new_trace_id()
    tool_only = [span(no_retrieval, name="tool", attrs={"openinference.span.kind": "TOOL", "tool.name": "x"})]
    unrecorded = new_trace_id()  # a retrieval that recorded nothing: unknown, not empty
    unrecorded_spans = [
        span(unrecorded, name="retrieve", attrs={"openinference.span.kind": "RETRIEVER", "input.value": "q"})
    ]
    rated = new_trace_id()
    rated_spans = rag_spans(rated)
    rated_spans.append(
        span(rated, name="rating", attrs={
            "annotations.0.annotation.name": "user_feedback", "annotations.0.annotation.label": "thumbs_down"})
    )  # fmt: skip
    return [
        (rag_spans(plain), "svc-a"),
        (failed_spans, "svc-a"),
        (empty_spans, "svc-b"),
        (experiment_spans, "svc-b"),
        (tool_only, "svc-c"),
        (rated_spans, "svc-a"),
        (unrecorded_spans, "svc-c"),
    ]


@pytest.mark.parametrize(
    "settings",
    [
        SamplingSettings(),
        SamplingSettings(
            rules=[SamplingRule(name="acme", attributes={"tenant": "acme"}, rate=1.0)],
            stale_metrics=("stale_context", "context_recall"),
        ),
    ],
    ids=["defaults", "attribute rule, a metric that counts"],
)
def test_written_facts_are_the_facts_read_back_after_the_write(
    tmp_path: Path, settings: SamplingSettings
) -> None:
    local = LocalStore(str(tmp_path / "w.duckdb"))
    tids = []
    for i, (spans, service) in enumerate(_traces()):
        batch = flatten(request(spans, service=service), received_at=T0 + timedelta(minutes=i))
        local.store.write_spans(local.store.con, batch_to_arrow(batch))
        tids.append(spans[0].trace_id.hex())
    assert local.settle_all() == len(tids)
    # the rating span's feedback, stored as the scheduler does before a batch is evaluated
    rows = read_annotations(local.store.cursor(), tids, settings)
    assert local.write(lambda con: store_feedback(con, rows)).inserted == 1
    specs = discover()
    runner = StoreRunner(
        local.store.cursor(), local.write, Runner(specs, evaluator_configs(EvaluationSettings(), specs))
    )
    seen: list[tuple[TraceTables, EvalTables]] = []
    since = utcnow() - timedelta(seconds=1)
    assert runner.evaluate(tids, on_tables=lambda tables, out: seen.append((tables, out))) == len(tids)
    ((tables, out),) = seen
    # a stale document among the verdicts written for one trace (the cheap tier found none here)
    flag = {
        "trace_id": tids[0], "evaluator": "freshness", "evaluator_version": "1", "tier": "cheap",
        "metric": "stale_context", "status": "ok", "numerator": 1.0, "denominator": 1.0, "value": 1.0,
        "generation": 1, "evaluated_at": utcnow(),
    }  # fmt: skip
    local.store.con.execute(
        f"INSERT INTO evaluations ({', '.join(flag)}) VALUES ({', '.join('$' + k for k in flag)})", flag
    )
    evals = pa.concat_tables(
        [out.evals, pa.Table.from_pylist([flag], schema=out.evals.schema)], promote_options="default"
    )

    known = written_facts(tables, evals, out.log, settings)
    assert sorted(known) == sorted(tids)
    con = local.store.cursor()
    read_back = sorted(load_facts(con, tids, settings, None, since), key=lambda f: f.trace_id)
    from_batch = sorted(load_facts(con, tids, settings, None, since, known), key=lambda f: f.trace_id)
    assert from_batch == read_back
    # the facts say something: every kind of fact is true of some trace and false of another
    by_id = dict(zip(tids, (f for f in sorted(read_back, key=lambda f: tids.index(f.trace_id))), strict=True))
    plain, failed, empty, experiment, no_retrieval, rated, unrecorded = (by_id[t] for t in tids)
    assert plain.stale and not failed.stale
    assert failed.error_count > 0 and plain.error_count == 0
    assert empty.empty_retrieval and not plain.empty_retrieval and not no_retrieval.empty_retrieval
    assert not unrecorded.empty_retrieval  # read back from the store and built from the batch alike
    assert experiment.run_id == "exp-7" and plain.run_id is None
    assert rated.negative_feedback and not plain.negative_feedback
    assert {f.service_name for f in read_back} == {"svc-a", "svc-b", "svc-c"}
    assert plain.route == "query" and empty.route == "ask"
    assert all(f.generation == 1 for f in read_back)
    if settings.rules:
        assert experiment.attributes.get("tenant") == "acme" and "tenant" not in plain.attributes
        assert experiment.attributes.get("service.name") == "svc-b"
    # a trace the batch did not tell about is read back as before
    partial = {t: f for t, f in known.items() if t != tids[2]}
    mixed = sorted(load_facts(con, tids, settings, None, since, partial), key=lambda f: f.trace_id)
    assert mixed == read_back
