"""Mappings without code: the ``[[conventions.mapping]]`` entries of the config file (docs/configuration.md,
``[conventions]``).

A user whose framework no convention reader knows, and whose payloads the structural layer cannot
read by shape, says which attribute holds what: for spans matching a name, an instrumentation scope
or an attribute, this key holds the query, the prompt messages, the answer, the documents (with JSON
paths to each document's id, text and score), and this is the step type. The entries are checked
at startup (``ConventionSettings``: a bad entry is a ``ConfigError`` naming it) and compiled once
into plain picklable tuples (``compile_mappings``) that travel with ``source_keys`` to the decode
workers; ``apply`` runs per span only when some mapping is configured.

Precedence, per field: a mapped field **wins over the structural layer** (a user who names the key
knows better than a guess from the payload's shape) and **fills what the convention reader left
empty**, but never replaces what a reader read: a reader is exact where it applies, and a mapping
written for one version of a framework must not silently override the reader once a later version
adopts a known convention. ``step_type`` counts as empty while it is ``other`` (or was guessed by the
structural layer). A field a reader left empty on purpose is filled too: the user says the key holds
it. Each mapped field is named in ``Step.provenance`` as ``mapping:<entry>@<key>``; a span no reader
claimed gets the convention ``mapping``.

Keys and JSON paths: a field is an attribute key, optionally followed by a JSON path into its value
after ``$`` (``acme.request$.input.question``); a document field is a path into one document of the
list (``body.passage``, ``$.meta.ref``, ``hits[0].id``). Values are unwrapped by the structural rules
(``collector.normalize.structural``) before and after the path: JSON strings, content blocks, message
lists.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from collector.normalize import doclists, documents, structural
from collector.normalize.docvalues import make_doc
from collector.normalize.step import Doc, Stage, Step, StepType
from ragfault_core.errors import ConfigError

_SEGMENT = re.compile(r"\.?([^.\[\]$]+)|\[(\d+)\]")

# one step of a JSON path: a key of an object, or an index of a list
PathStep = str | int


def parse_path(text: str) -> tuple[PathStep, ...]:
    """``$.a.b[0]`` / ``a.b[0]`` -> ``("a", "b", 0)``; ``$`` or '' -> ``()``. Raises ValueError."""
    s = text.strip()
    s = s.removeprefix("$")
    out: list[PathStep] = []
    pos = 0
    while pos < len(s):
        m = _SEGMENT.match(s, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"bad JSON path {text!r} at {s[pos:]!r} (use $.key.key[0])")
        out.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        pos = m.end()
    return tuple(out)


def parse_field(text: str) -> tuple[str, tuple[PathStep, ...]]:
    """``key$.path`` -> the attribute key and the path into its value."""
    key, _, path = text.partition("$")
    if not key.strip():
        raise ValueError(f"{text!r} names no attribute key")
    return key.strip(), parse_path(path)


def _regex(text: str, what: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as exc:
        raise ValueError(f"{what} {text!r} is no regular expression: {exc}") from exc


class MappingRule(BaseModel):
    """One ``[[conventions.mapping]]`` entry: which spans (every matcher given must match) and
    which of their keys hold what."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str | None = Field(None, description="What the entry is called in errors and provenance.")
    span_name: str | None = Field(None, description="Regular expression the span's whole name matches.")
    scope: str | None = Field(
        None, description="Regular expression the whole instrumentation scope name matches."
    )
    attribute: str | None = Field(None, description="An attribute key the span carries.")
    value: str | None = Field(
        None, description="Regular expression the whole value of `attribute` matches (as text)."
    )
    step_type: StepType | None = Field(None, description="The step type of the matching spans.")
    query: str | None = Field(None, description="Key (and $.path) holding the user's question.")
    prompt: str | None = Field(
        None, description="Key (and $.path) holding the prompt: messages or text the model was sent."
    )
    answer: str | None = Field(None, description="Key (and $.path) holding the answer or output.")
    documents: str | None = Field(None, description="Key (and $.path) holding a list of documents.")
    document_id: str | None = Field(None, description="Path to a document's id inside one document.")
    document_text: str | None = Field(None, description="Path to a document's text inside one document.")
    document_score: str | None = Field(None, description="Path to a document's score inside one document.")
    document_metadata: str | None = Field(
        None, description="Path to a document's metadata object inside one document."
    )
    documents_stage: Stage = Field(
        "candidate", description="What the documents are: candidate, reranked, context or rerank_input."
    )

    @model_validator(mode="after")
    def _check(self) -> MappingRule:
        label = f"mapping {self.name!r}" if self.name else "mapping"
        try:
            if not (self.span_name or self.scope or self.attribute):
                raise ValueError("needs span_name, scope or attribute to say which spans it reads")
            if self.value is not None and not self.attribute:
                raise ValueError("value needs attribute")
            if not (self.step_type or self.query or self.prompt or self.answer or self.documents):
                raise ValueError("maps nothing: give step_type, query, prompt, answer or documents")
            doc_paths = (self.document_id, self.document_text, self.document_score, self.document_metadata)
            if any(p is not None for p in doc_paths) and not self.documents:
                raise ValueError("document_* paths need documents")
            for pattern, what in (
                (self.span_name, "span_name"),
                (self.scope, "scope"),
                (self.value, "value"),
            ):
                if pattern is not None:
                    _regex(pattern, what)
            for key in (self.query, self.prompt, self.answer, self.documents):
                if key is not None:
                    parse_field(key)
            for path in doc_paths:
                if path is not None:
                    parse_path(path)
        except ValueError as exc:
            raise ValueError(f"{label}: {exc}") from exc
        return self


class ConventionSettings(BaseModel):
    """The ``[conventions]`` table."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mapping: tuple[MappingRule, ...] = Field(
        (),
        description="[[conventions.mapping]]: which keys of which spans hold what; every entry that "
        "matches a span applies, in order (a field an earlier one set is kept).",
    )


def load_convention_settings(config_file: str | Path | None) -> ConventionSettings:
    """The ``[conventions]`` table of a config file (a runtime made without a settings tree)."""
    from ragfault_core.settings import explain, load_toml

    data = load_toml(config_file).get("conventions", {})
    try:
        return ConventionSettings(**data)
    except ValidationError as exc:
        raise ConfigError(f"invalid settings: {explain(exc, 'conventions')}") from exc


Field_ = tuple[str, tuple[PathStep, ...]] | None


class Mapping(NamedTuple):
    """One compiled entry: plain picklable data (it is sent to the decode workers)."""

    label: str
    span_name: re.Pattern[str] | None
    scope: re.Pattern[str] | None
    attribute: str | None
    value: re.Pattern[str] | None
    step_type: StepType | None
    query: Field_
    prompt: Field_
    answer: Field_
    documents: Field_
    doc_paths: tuple[tuple[PathStep, ...] | None, ...]  # id, text, score, metadata
    stage: Stage


Mappings = tuple[Mapping, ...]


def compile_mappings(settings: ConventionSettings) -> Mappings:
    """The entries in the form ``apply`` reads (already checked by ``MappingRule``)."""

    def field(text: str | None) -> Field_:
        return parse_field(text) if text is not None else None

    def path(text: str | None) -> tuple[PathStep, ...] | None:
        return parse_path(text) if text is not None else None

    out = []
    for i, r in enumerate(settings.mapping, 1):
        out.append(
            Mapping(
                r.name or f"{i}",
                re.compile(r.span_name) if r.span_name is not None else None,
                re.compile(r.scope) if r.scope is not None else None,
                r.attribute,
                re.compile(r.value) if r.value is not None else None,
                r.step_type,
                field(r.query),
                field(r.prompt),
                field(r.answer),
                field(r.documents),
                (
                    path(r.document_id),
                    path(r.document_text),
                    path(r.document_score),
                    path(r.document_metadata),
                ),
                r.documents_stage,
            )
        )
    return tuple(out)


def matches(m: Mapping, name: str, scope: str | None, attrs: dict[str, Any]) -> bool:
    if m.span_name is not None and not m.span_name.fullmatch(name):
        return False
    if m.scope is not None and not m.scope.fullmatch(scope or ""):
        return False
    if m.attribute is not None:
        v = attrs.get(m.attribute)
        if v is None:
            return False
        if m.value is not None and not m.value.fullmatch(v if isinstance(v, str) else str(v)):
            return False
    return True


def at(value: Any, path: tuple[PathStep, ...]) -> Any:
    """The value at ``path``, JSON strings unwrapped at each step; None where it leads nowhere."""
    v = structural.parsed(value)
    for step in path:
        if isinstance(step, int) and isinstance(v, list) and -len(v) <= step < len(v):
            v = structural.parsed(v[step])
        elif isinstance(step, str) and isinstance(v, dict):
            v = structural.parsed(v.get(step))
        else:
            return None
    return v


def _open(step: Step, field: str, empty: bool) -> bool:
    """A field the mapping may set: empty, or filled by the structural layer."""
    if empty:
        return True
    rule = (step.provenance or {}).get(field, "")
    return rule.startswith("shape:")


def _note(step: Step, field: str, m: Mapping, key: str) -> None:
    if step.provenance is None:
        step.provenance = {}
    step.provenance[field] = f"mapping:{m.label}@{key}"


def apply(
    mappings: Mappings,
    name: str,
    scope: str | None,
    attrs: dict[str, Any],
    step: Step,
    source_keys: tuple[str, ...],
) -> None:
    """Every entry that matches the span fills ``step``, in the order of the file: a field an
    earlier entry set is kept (see the module doc). Never raises on odd values: a key that is absent
    or holds nothing readable leaves the field as it was."""
    for m in mappings:
        if matches(m, name, scope, attrs):
            _apply(m, attrs, step, source_keys)


def _value(attrs: dict[str, Any], f: Field_) -> tuple[str, Any]:
    assert f is not None
    key, path = f
    raw = attrs.get(key)
    if raw is None or raw == "":
        return key, None
    return key, at(raw, path) if path else raw


def _apply(m: Mapping, attrs: dict[str, Any], step: Step, source_keys: tuple[str, ...]) -> None:
    mapped = False
    if m.documents is not None:
        mapped = _map_docs(m, attrs, step, source_keys)
    if m.prompt is not None and _open(step, "input_text", not step.input_text):
        key, v = _value(attrs, m.prompt)
        messages = structural.message_list(v) if v is not None else None
        text = structural.join_messages(messages) if messages else structural.text_of(v)
        if text:
            step.input_text = text
            _note(step, "input_text", m, key)
            mapped = True
            query = structural.last_user_text(messages) if messages else None
            if query and m.query is None and _open(step, "query_text", not step.query_text):
                step.query_text = query
                _note(step, "query_text", m, key)
    if m.query is not None and _open(step, "query_text", not step.query_text):
        key, v = _value(attrs, m.query)
        text = structural.query_of(v) if v is not None else None
        if text:
            step.query_text = text
            _note(step, "query_text", m, key)
            mapped = True
    if m.answer is not None and _open(step, "output_text", not step.output_text):
        key, v = _value(attrs, m.answer)
        messages = structural.message_list(v) if v is not None else None
        if messages:
            said = [x for x in messages if x.role not in ("user", "human", "system")]
            text = structural.join_messages(said or messages)
        else:
            text = structural.text_of(v)
        if text:
            step.output_text = text
            _note(step, "output_text", m, key)
            mapped = True
    if m.step_type is not None and _open(step, "step_type", step.step_type == "other"):
        step.step_type = m.step_type
        _note(step, "step_type", m, "step_type")
        mapped = True
    if mapped and step.convention in ("unknown", "structural"):
        step.convention = "mapping"


def _map_docs(m: Mapping, attrs: dict[str, Any], step: Step, source_keys: tuple[str, ...]) -> bool:
    """The mapped documents, of the entry's stage: over those the structural layer guessed (all
    of them: a guess that took a reranker's output for candidates is wrong as a whole), beside a
    reader's documents of other stages, never over a reader's or an earlier entry's of the same."""
    field = docs_field(m.stage)
    guessed = (step.provenance or {}).get("docs", "").startswith("shape:")
    if not guessed and any(d.stage == m.stage for d in step.docs):
        return False
    key, v = _value(attrs, m.documents)
    docs = _docs(v, m, source_keys) if v is not None else None
    if not docs:
        return False
    if guessed:
        step.docs = []
        assert step.provenance is not None
        del step.provenance["docs"]
    step.docs.extend(docs)
    _note(step, field, m, key)
    return True


def docs_field(stage: Stage) -> str:
    """The provenance key of a stage's documents: ``docs`` for candidates (as the structural layer
    writes it), ``docs.<stage>`` for the others."""
    return "docs" if stage == "candidate" else f"docs.{stage}"


def _docs(value: Any, m: Mapping, source_keys: tuple[str, ...]) -> list[Doc] | None:
    """The documents of the list at the mapped key: each field by its path where one is given,
    else by the structural layer's usual fields (``text``, ``content``, ``id`` ...)."""
    items = structural.parsed(value)
    if isinstance(items, dict):  # an object holding one list of documents
        lists = [x for x in (structural.parsed(y) for y in items.values()) if isinstance(x, list)]
        items = lists[0] if len(lists) == 1 else None
    if not isinstance(items, list) or not items:
        return None
    id_path, text_path, score_path, meta_path = m.doc_paths
    bodies = [doclists.doc_body(item) for item in items]
    # fields without a path: the usual names, else inferred from the list (the mapping says these
    # are documents, so no passage length is asked of the text)
    found = [b for b in bodies if b is not None]
    fields = documents.infer(found, strict=False) or documents.USUAL
    docs: list[Doc] = []
    for item, body in zip(items, bodies, strict=True):
        if body is None:
            text = structural.text_of(item) if text_path is None else at(item, text_path)
            body = {}
        else:
            text = at(item, text_path) if text_path is not None else documents.text(body, fields)
        if not isinstance(text, str) or not text.strip():
            continue  # no text where the mapping says: not a document
        raw_id = at(item, id_path) if id_path is not None else documents.ident(body, fields)
        score = at(item, score_path) if score_path is not None else documents.score(body, fields)
        meta = at(item, meta_path) if meta_path is not None else documents.metadata(body)
        docs.append(make_doc(m.stage, len(docs), raw_id, text, score, meta, source_keys))
    return docs or None
