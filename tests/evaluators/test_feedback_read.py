"""Which spans evaluation reads feedback from: the spans marked when they were decoded, and every
span stored before spans were marked."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.proto.trace.v1.trace_pb2 import Span

from collector.ingest.span_rows import carries_feedback, flatten
from collector.store import Store
from collector.store.schema import batch_to_arrow
from evaluators.service.feedback import read_annotations
from evaluators.service.sampling_settings import SamplingSettings
from tests.collector.otlp_build import new_trace_id, request, span


def test_spans_are_marked_by_their_attribute_keys_and_event_names() -> None:
    assert carries_feedback({"annotations.0.annotation.label": "thumbs_down"}, [])
    assert carries_feedback({"trace.evaluations.0.evaluation.score": 0.5}, [])
    assert not carries_feedback({"llm.prompt": "an evaluation. of annotation. words"}, [])
    assert carries_feedback({}, [Span.Event(name="gen_ai.evaluation.result")])
    assert not carries_feedback({}, [Span.Event(name="exception")])


def test_only_marked_spans_are_read_and_unmarked_old_ones_are_searched(tmp_path: Path) -> None:
    store = Store(tmp_path / "fb.duckdb")
    try:
        rated, plain = new_trace_id(), new_trace_id()
        spans = [
            span(rated, name="answer", attrs={"llm.prompt": "no annotation. here, only words"}),
            span(rated, name="rating", attrs={"annotations.0.annotation.name": "user_feedback",
                                              "annotations.0.annotation.label": "thumbs_down"}),
            span(plain, name="answer"),
        ]  # fmt: skip
        store.write_spans(store.con, batch_to_arrow(flatten(request(spans))))
        marked = store.con.execute("SELECT name, feedback FROM spans ORDER BY name, trace_id").fetchall()
        assert sorted(marked) == [("answer", False), ("answer", False), ("rating", True)]
        policy, ids = SamplingSettings(), [rated.hex(), plain.hex()]
        found = read_annotations(store.con, ids, policy)
        assert [(r["trace_id"], r["label"]) for r in found] == [(rated.hex(), "thumbs_down")]

        # the mark decides: an unmarked span is not read
        store.con.execute("UPDATE spans SET feedback = false WHERE name = 'rating'")
        assert read_annotations(store.con, ids, policy) == []
        # a span stored before spans were marked is searched as before
        store.con.execute("UPDATE spans SET feedback = NULL WHERE name = 'rating'")
        assert [r["trace_id"] for r in read_annotations(store.con, ids, policy)] == [rated.hex()]
    finally:
        store.close()
