"""The reader registry (``collector.normalize.READERS``): one module per convention, an explicit
detection order, one ``Step``/``Doc`` model whose step types, stages and conventions are ``Literal``
types (mypy rejects a misspelt one; these tests keep the runtime tuples and the maps in step)."""

from __future__ import annotations

import json
from typing import get_args

import pytest

from collector.normalize import (
    CONVENTIONS,
    READERS,
    STAGES,
    STEP_TYPES,
    Convention,
    Stage,
    StepType,
    genai,
    haystack,
    normalize_span,
    openinference,
    traceloop,
)


def test_the_runtime_tuples_are_the_literal_types() -> None:
    assert get_args(StepType) == STEP_TYPES and "retrieval" in STEP_TYPES and "other" in STEP_TYPES
    assert STAGES == get_args(Stage) == ("candidate", "reranked", "context", "rerank_input")
    assert get_args(Convention) == CONVENTIONS


def test_every_map_of_a_reader_names_known_step_types() -> None:
    maps = [
        openinference.KIND_TO_STEP,
        traceloop.KIND_TO_STEP,
        traceloop.REQUEST_TYPE_TO_STEP,
        genai.OPERATION_TO_STEP,
        dict(haystack._TYPE_TO_STEP),
    ]
    for mapping in maps:
        assert set(mapping.values()) <= set(STEP_TYPES), mapping


def test_readers_are_one_per_convention_in_detection_order() -> None:
    names = [r.convention for r in READERS]
    assert names == ["openinference", "traceloop", "haystack", "vercel_ai", "genai"]
    # (``structural``: the layer beneath the readers, ``collector.normalize.shape``)
    assert len(set(names)) == len(names) and set(names) | {"structural", "mapping", "unknown"} == set(
        CONVENTIONS
    )


# one span per convention; each also carries GenAI keys, so only the order decides
SAMPLES: dict[str, dict[str, object]] = {
    "openinference": {"openinference.span.kind": "LLM", "gen_ai.system": "openai", "llm.model_name": "m"},
    "traceloop": {
        "traceloop.span.kind": "task",
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
    },
    "haystack": {
        "haystack.component.type": "OpenAIChatGenerator",
        "haystack.component.output": json.dumps({}),
    },
    "genai": {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
}


@pytest.mark.parametrize("convention", list(SAMPLES))
def test_the_first_reader_that_detects_a_span_reads_it(convention: str) -> None:
    attrs = dict(SAMPLES[convention])
    first = next(r for r in READERS if r.detect(attrs))
    assert first.convention == convention
    step = normalize_span(attrs)
    assert (step.convention, step.step_type) == (convention, "llm")


def test_a_span_of_no_known_convention_is_other() -> None:
    step = normalize_span({"http.method": "GET"})
    assert (step.convention, step.step_type, step.docs) == ("unknown", "other", [])
    assert not any(r.detect({"http.method": "GET"}) for r in READERS)
