"""OpenLLMetry (Traceloop) attributes -> Step.

``traceloop.span.kind`` (workflow, task, agent, tool) and ``traceloop.entity.{name,input,output}``;
model calls carry GenAI attributes (``gen_ai.prompt.{i}.content`` in older releases,
``gen_ai.input.messages`` in newer). Newer releases also set ``gen_ai.operation.name``, e.g.
``vector_db_retrieve`` for a LangChain retriever whose documents sit only in ``traceloop.entity.output``.
"""

from __future__ import annotations

from typing import Any

from collector.normalize import genai
from collector.normalize.common import Step, as_str, json_docs, parse_json

KIND_TO_STEP = {"workflow": "chain", "task": "chain", "agent": "agent", "tool": "tool"}
REQUEST_TYPE_TO_STEP = {"chat": "llm", "completion": "llm", "embedding": "embedding", "rerank": "rerank"}


def _query_of(entity_input: Any) -> str | None:
    parsed = parse_json(entity_input)
    if isinstance(parsed, dict):
        inputs = parsed.get("inputs", parsed)
        if isinstance(inputs, dict):
            for key in ("query", "input", "question"):
                if isinstance(inputs.get(key), str):
                    return str(inputs[key])
        if isinstance(inputs, str):
            return inputs
    if isinstance(parsed, str):
        return parsed
    return as_str(entity_input)


def read(attrs: dict[str, Any], step: Step, source_keys: tuple[str, ...]) -> None:
    step.convention = "traceloop"
    kind = str(attrs.get("traceloop.span.kind", "")).lower()
    op = str(attrs.get("gen_ai.operation.name", "")).lower()
    request_type = str(attrs.get("llm.request.type", "")).lower()
    if op in genai.OPERATION_TO_STEP:
        step.step_type = genai.OPERATION_TO_STEP[op]
    elif request_type in REQUEST_TYPE_TO_STEP:
        step.step_type = REQUEST_TYPE_TO_STEP[request_type]
    elif kind in KIND_TO_STEP:
        step.step_type = KIND_TO_STEP[kind]
    props = "traceloop.association.properties."
    step.session_id = as_str(attrs.get(props + "session_id")) or step.session_id
    step.user_id = as_str(attrs.get(props + "user_id")) or step.user_id

    entity_in = attrs.get("traceloop.entity.input")
    entity_out = attrs.get("traceloop.entity.output")
    step.input_text = as_str(entity_in)
    step.output_text = as_str(entity_out)
    if step.step_type == "retrieval":
        step.query_text = _query_of(entity_in)
        step.docs = json_docs(entity_out, "candidate", source_keys)
    elif step.step_type == "llm":
        genai.read_llm_io(attrs, step)
    elif step.step_type == "tool":
        step.tool_name = as_str(attrs.get("traceloop.entity.name"))
        step.tool_arguments = as_str(entity_in)
        step.tool_result = as_str(entity_out)
    elif step.step_type in ("chain", "agent"):
        step.query_text = _query_of(entity_in)
