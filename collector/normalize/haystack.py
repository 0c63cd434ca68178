"""Haystack's own tracing attributes (``haystack.*``) -> Step.

Haystack 2.x's OpenTelemetry tracer (``haystack.tracing.OpenTelemetryTracer``, content tracing on with
``HAYSTACK_CONTENT_TRACING_ENABLED=true``) writes one ``haystack.pipeline.run`` span with
``haystack.pipeline.input_data`` / ``output_data`` (inputs and outputs by component name) and one
``haystack.component.run`` span per component with ``haystack.component.{name,type,input,output}``,
input and output as JSON of the component's keyword arguments and result: documents as
``{"id", "content", "score", <meta keys flattened>}``, chat messages as ``{"role", "content": [{"text"}],
"meta": {"model", "usage"}}``. The step type comes from the component's class, as Haystack names them.
"""

from __future__ import annotations

from typing import Any

from collector.normalize.docvalues import make_doc
from collector.normalize.messages import json_messages_text, message_text
from collector.normalize.step import Doc, Reader, Stage, Step, StepType
from collector.normalize.values import as_int, as_str, parse_json

# class-name fragments, in the order they are tried (a "ChatGenerator" is a generator)
_TYPE_TO_STEP: tuple[tuple[str, StepType], ...] = (
    ("Retriever", "retrieval"),
    ("Ranker", "rerank"),
    ("Generator", "llm"),
    ("Embedder", "embedding"),
)
_DOC_FIELDS = frozenset(
    ("id", "content", "score", "blob", "embedding", "sparse_embedding", "dataframe", "meta")
)


def detect(attrs: dict[str, Any]) -> bool:
    return "haystack.component.type" in attrs or "haystack.pipeline.input_data" in attrs


def _documents(value: Any, stage: Stage, source_keys: tuple[str, ...]) -> list[Doc]:
    if not isinstance(value, list):
        return []
    docs: list[Doc] = []
    for item in value:
        if not isinstance(item, dict):
            continue
        meta = item.get("meta")
        if not isinstance(meta, dict):  # Document.to_dict() flattens the meta keys into the document
            meta = {k: v for k, v in item.items() if k not in _DOC_FIELDS} or None
        docs.append(
            make_doc(
                stage, len(docs), item.get("id"), item.get("content"), item.get("score"), meta, source_keys
            )
        )
    return docs


def _llm(inputs: dict[str, Any], outputs: dict[str, Any], step: Step) -> None:
    messages = inputs.get("messages")
    if messages is not None:
        step.input_text, step.query_text = json_messages_text(messages)
    elif isinstance(inputs.get("prompt"), str):
        step.input_text = step.query_text = inputs["prompt"]
    replies = outputs.get("replies")
    if not isinstance(replies, list) or not replies:
        return
    texts = [
        r if isinstance(r, str) else message_text(r.get("content")) if isinstance(r, dict) else None
        for r in replies
    ]
    step.output_text = "\n".join(t for t in texts if t) or None
    first = replies[0]
    meta = first.get("meta") if isinstance(first, dict) else None
    if not isinstance(meta, dict):
        metas = outputs.get("meta")
        meta = metas[0] if isinstance(metas, list) and metas and isinstance(metas[0], dict) else None
    if meta:
        step.model = as_str(meta.get("model"))
        usage = meta.get("usage")
        if isinstance(usage, dict):
            step.input_tokens = as_int(usage.get("prompt_tokens"))
            step.output_tokens = as_int(usage.get("completion_tokens"))
            step.total_tokens = as_int(usage.get("total_tokens"))


def read(attrs: dict[str, Any], step: Step, source_keys: tuple[str, ...]) -> None:
    step.convention = "haystack"
    if "haystack.pipeline.input_data" in attrs:
        step.step_type = "chain"
        step.input_text = as_str(attrs.get("haystack.pipeline.input_data"))
        step.output_text = as_str(attrs.get("haystack.pipeline.output_data"))
        return
    ctype = str(attrs.get("haystack.component.type", ""))
    step.step_type = next((t for frag, t in _TYPE_TO_STEP if frag in ctype), "chain")
    raw_in, raw_out = attrs.get("haystack.component.input"), attrs.get("haystack.component.output")
    step.input_text, step.output_text = as_str(raw_in), as_str(raw_out)
    parsed_in, parsed_out = parse_json(raw_in), parse_json(raw_out)
    inputs: dict[str, Any] = parsed_in if isinstance(parsed_in, dict) else {}
    outputs: dict[str, Any] = parsed_out if isinstance(parsed_out, dict) else {}
    if step.step_type == "retrieval":
        step.query_text = as_str(inputs.get("query"))
        step.top_k = as_int(inputs.get("top_k"))
        step.docs = _documents(outputs.get("documents"), "candidate", source_keys)
    elif step.step_type == "rerank":
        step.query_text = as_str(inputs.get("query"))
        step.top_k = as_int(inputs.get("top_k"))
        step.docs = _documents(inputs.get("documents"), "rerank_input", source_keys)
        step.docs += _documents(outputs.get("documents"), "reranked", source_keys)
    elif step.step_type == "llm":
        _llm(inputs, outputs, step)


READER = Reader("haystack", detect, read, ("haystack.",))
