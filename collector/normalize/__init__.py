"""Spans -> steps and step documents, per convention (docs/architecture.md, Conventions and readers).

``normalize_span`` picks the convention reader by the attributes a span carries, then applies the
project's own ``ragfault.*`` attributes, which any convention may add. Unknown conventions are not an
error: the span is kept losslessly in ``spans``; the structural layer (``collector.normalize.shape``)
reads what it can by the shape of its payloads, and what it cannot read stays a step of type ``other``.
"""

from __future__ import annotations

from typing import Any

from collector.normalize import (
    events,
    genai,
    haystack,
    mapping,
    openinference,
    redacted,
    shape,
    traceloop,
    vercel,
)
from collector.normalize import provenance as prov
from collector.normalize.docvalues import DEFAULT_SOURCE_KEYS, json_docs, openinference_docs, tool_docs
from collector.normalize.mapping import Mappings
from collector.normalize.step import (
    CONVENTIONS,
    STAGES,
    STEP_TYPES,
    Convention,
    Doc,
    Reader,
    Stage,
    Step,
    StepType,
)
from collector.normalize.values import as_str, as_str_list, key_blob, parse_json

__all__ = [
    "CONVENTIONS",
    "DEFAULT_SOURCE_KEYS",
    "READERS",
    "STAGES",
    "STEP_TYPES",
    "Convention",
    "Doc",
    "Reader",
    "Stage",
    "Step",
    "StepType",
    "normalize_span",
]

_BAGGAGE_PREFIXES = ("", "traceloop.association.properties.", "baggage.")


def _first(attrs: dict[str, Any], names: tuple[str, ...]) -> Any:
    for prefix in _BAGGAGE_PREFIXES:
        for name in names:
            v = attrs.get(prefix + name)
            if v is not None and v != "":
                return v
    return None


def _metadata(attrs: dict[str, Any]) -> dict[str, Any] | None:
    """The OpenInference ``metadata`` attribute (a JSON object string), parsed."""
    meta = attrs.get("metadata")
    if meta is None:
        return None
    parsed = parse_json(meta)
    return parsed if isinstance(parsed, dict) else None


def _metadata_value(meta: dict[str, Any] | None, key: str) -> Any:
    """``ragfault.case_id`` from metadata: a dotted key, or nested ``{"ragfault": {"case_id": ..}}``."""
    if not meta:
        return None
    v = meta.get(key)
    if v is None and "." in key:
        head, _, rest = key.partition(".")
        inner = meta.get(head)
        v = inner.get(rest) if isinstance(inner, dict) else None
    return v if v != "" else None


# The convention readers in detection order: the first whose ``detect`` accepts a span reads it.
# OpenInference first (its ``read`` is also given the span's key blob: the hot path). A framework's
# own attributes come before the generic ones (Haystack's spans carry no GenAI keys, but OpenLLMetry's
# do, so Traceloop precedes GenAI). A new convention is a module with ``detect``, ``read`` and
# ``READER``, a ``Convention`` name in ``common``, and a line here.
READERS: tuple[Reader, ...] = (
    openinference.READER,
    traceloop.READER,
    haystack.READER,
    vercel.READER,  # its model-call spans carry gen_ai.system too
    genai.READER,
)
_AFTER_OPENINFERENCE = READERS[1:]


def normalize_span(
    attrs: dict[str, Any],
    source_keys: tuple[str, ...] = DEFAULT_SOURCE_KEYS,
    keys: str | None = None,
    mappings: Mappings = (),
    name: str = "",
    scope: str | None = None,
    extra: dict[str, Any] | None = None,
) -> Step:
    """Read one span's attributes into a ``Step`` (never raises on odd values). ``keys`` is the
    attributes' ``key_blob`` when the caller has it; ``mappings`` the compiled
    ``[[conventions.mapping]]`` entries, matched against the span's ``name`` and ``scope``;
    ``extra`` what the span's events and log records hold (``collector.normalize.events.attributes``),
    read by the structural layer only, under the span's own attributes.

    Each field set is named in ``Step.provenance`` (``collector.normalize.provenance``): the
    structural layer and the mappings name theirs by rule and key, the project's own attributes as
    ``ragfault``, and what is left was the reader's, named by its convention."""
    step = Step()
    if keys is None:
        keys = key_blob(attrs)
    owns: tuple[str, ...] = ()
    if "openinference.span.kind" in attrs:  # openinference.detect, inline
        openinference.read(attrs, step, source_keys, keys)
        owns = openinference.READER.owns
    else:
        for reader in _AFTER_OPENINFERENCE:
            if reader.detect(attrs):
                reader.read(attrs, step, source_keys)
                owns = reader.owns
                break

    # A placeholder where the instrumentation hid content is no content (``collector.normalize.redacted``).
    redacted.clear(step)

    # An agent's search tool that returns documents retrieved them: they are candidates of the tool step.
    if step.step_type == "tool" and not step.docs and step.tool_result:
        step.docs = tool_docs(step.tool_result, source_keys)
        if step.docs:
            prov.note(step, "docs", "shape:tool_documents@tool_result")

    # The structural layer: what the reader left empty, read by the shape of the payloads (the
    # span's events and log records after its attributes). It names each field it fills.
    if extra:
        shape.fill({**attrs, **{k: v for k, v in extra.items() if k not in attrs}}, step, source_keys, owns)
        if step.convention not in ("unknown", "structural"):
            events.fill_documents(step, extra, source_keys)
    else:
        shape.fill(attrs, step, source_keys, owns)
    # The user's mappings: over the structural layer, under the reader (``collector.normalize.mapping``).
    if mappings:
        mapping.apply(mappings, name, scope, attrs, step, source_keys)

    # The project's own attributes (docs/architecture.md, Conventions and readers), on top of any convention.
    meta = _metadata(attrs)
    step.case_id = as_str(_first(attrs, ("ragfault.case_id",))) or as_str(
        _metadata_value(meta, "ragfault.case_id")
    )
    step.run_id = as_str(_first(attrs, ("ragfault.run_id",))) or as_str(
        _metadata_value(meta, "ragfault.run_id")
    )
    step.run_group = as_str(_first(attrs, ("ragfault.run_group",))) or as_str(
        _metadata_value(meta, "ragfault.run_group")
    )
    step.baseline_of = as_str(_first(attrs, ("ragfault.baseline_of",))) or as_str(
        _metadata_value(meta, "ragfault.baseline_of")
    )
    step.user_scope = as_str_list(_first(attrs, ("ragfault.user_scope",))) or as_str_list(
        _metadata_value(meta, "ragfault.user_scope")
    )
    step.citations = as_str_list(attrs.get("ragfault.answer.citations"))
    # The final context: flattened (OpenInference style), or one JSON list like gen_ai.retrieval.documents.
    context: list[Doc] = openinference_docs(
        attrs, "ragfault.context.documents.", "context", source_keys, keys
    )
    if not context and attrs.get("ragfault.context.documents") is not None:
        context = json_docs(attrs["ragfault.context.documents"], "context", source_keys)
    if context:
        step.docs.extend(context)
        prov.note(step, "docs.context", prov.OWN)
    prov.complete(step)
    return step
