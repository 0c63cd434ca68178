"""``[[conventions.mapping]]`` on one span (``collector.normalize.mapping``): what it reads, what it
may override (the structural layer's guesses) and what not (a convention reader's fields)."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest

from collector.normalize import normalize_span
from collector.normalize.mapping import ConventionSettings, compile_mappings, parse_path


def _mappings(*entries: dict[str, Any]) -> Any:
    return compile_mappings(ConventionSettings.model_validate({"mapping": list(entries)}))


def test_paths_read_as_written_and_bad_ones_are_refused() -> None:
    assert parse_path("$.a.b[2].c") == ("a", "b", 2, "c")
    assert parse_path("a[0]") == ("a", 0)
    assert parse_path("$") == ()
    with pytest.raises(ValueError, match="bad JSON path"):
        parse_path("a..b[")


def test_documents_by_paths_with_their_ids_and_scores() -> None:
    m = _mappings({
        "name": "hits", "span_name": r"search\..*", "step_type": "retrieval", "query": "svc.in$.q",
        "documents": "svc.out$.page.hits", "document_id": "ref", "document_text": "body.v.passage",
        "document_score": "rel",
    })  # fmt: skip
    attrs = {
        "svc.in": json.dumps({"q": "how long to wait"}),
        "svc.out": json.dumps({"page": {"hits": [
            {"ref": "a", "body": {"v": {"passage": "Wait 30 seconds."}}, "rel": 0.9},
            {"ref": "b", "body": {"v": {"passage": "Logs are kept."}}, "rel": 0.5},
        ]}}),
    }  # fmt: skip
    assert (
        normalize_span(attrs).convention == "unknown"
    )  # nothing to read by shape (the text two objects deep)
    step = normalize_span(attrs, mappings=m, name="search.vector", scope=None)
    assert (step.step_type, step.convention, step.query_text) == ("retrieval", "mapping", "how long to wait")
    assert [(d.stage, d.doc_id, d.content, d.score) for d in step.docs] == [
        ("candidate", "a", "Wait 30 seconds.", 0.9),
        ("candidate", "b", "Logs are kept.", 0.5),
    ]
    assert step.provenance == {
        "docs": "mapping:hits@svc.out", "query_text": "mapping:hits@svc.in", "step_type": "mapping:hits@step_type",
    }  # fmt: skip
    assert normalize_span(attrs, mappings=m, name="other").convention == "unknown"  # the name must match


def test_scope_and_attribute_matchers() -> None:
    m = _mappings({"scope": "acme-sdk", "attribute": "acme.kind", "value": "llm", "answer": "acme.said"})
    attrs = {"acme.kind": "llm", "acme.said": "Wait thirty seconds."}
    assert normalize_span(attrs, mappings=m, name="x", scope="acme-sdk").output_text == "Wait thirty seconds."
    assert normalize_span(attrs, mappings=m, name="x", scope="other").output_text is None
    assert (
        normalize_span({**attrs, "acme.kind": "tool"}, mappings=m, name="x", scope="acme-sdk").output_text
        is None
    )


def test_a_mapping_wins_over_the_structural_layer_but_not_over_a_reader() -> None:
    m = _mappings({"span_name": ".*", "answer": "acme.final", "prompt": "acme.sent", "step_type": "tool"})
    # the structural layer reads this span's output by its key's words; the mapping says otherwise
    blind = {"acme.output": "A guess from the key name.", "acme.final": "The answer the user saw."}
    step = normalize_span(blind, mappings=m, name="s")
    assert step.output_text == "The answer the user saw." and step.provenance is not None
    assert step.provenance["output_text"] == "mapping:1@acme.final"
    # a GenAI model call: the reader's output and type stay; what it left empty is filled
    genai = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "Read."}]}]
        ),
        "acme.final": "Not this.",
        "acme.sent": "The prompt the reader did not see.",
    }
    step = normalize_span(genai, mappings=m, name="chat m")
    assert (step.step_type, step.output_text, step.convention) == ("llm", "Read.", "genai")
    assert step.input_text == "The prompt the reader did not see."


def test_every_matching_entry_applies_in_order_and_the_first_keeps_its_fields() -> None:
    items = json.dumps([{"id": "a", "text": "one two"}, {"id": "b", "text": "three four"}])
    kept = json.dumps([{"id": "b", "text": "three four"}])
    m = _mappings(
        {"span_name": "rr", "step_type": "rerank", "documents": "kept", "documents_stage": "reranked"},
        {"span_name": "rr", "documents": "pool", "documents_stage": "rerank_input", "step_type": "retrieval"},
    )
    step = normalize_span({"pool": items, "kept": kept}, mappings=m, name="rr")
    assert step.step_type == "rerank"
    assert [(d.stage, d.doc_id) for d in step.docs] == [
        ("reranked", "b"),
        ("rerank_input", "a"),
        ("rerank_input", "b"),
    ]


def test_odd_values_leave_the_field_as_it_was() -> None:
    m = _mappings({"span_name": ".*", "documents": "d$.x[3]", "query": "q$.a.b", "answer": "a"})
    for attrs in ({"d": "not json", "q": 3, "a": ""}, {"d": "[1, 2]", "q": "{}", "a": "[]"}, {}):
        step = normalize_span(attrs, mappings=m, name="s")
        assert (step.docs, step.query_text, step.output_text, step.convention) == ([], None, None, "unknown")


def test_compiled_mappings_cross_a_process_boundary() -> None:
    m = _mappings({"name": "n", "span_name": "a.*", "query": "q$.x"})
    assert pickle.loads(pickle.dumps(m)) == m
