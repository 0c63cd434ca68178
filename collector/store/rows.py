"""The rows the store's reads return, typed: one named tuple per statement's ``returns`` line, so a
caller reads ``row.attributes`` (or unpacks it, or indexes it, as before) and the type checker knows
what each field holds. JSON columns come back as the text DuckDB stores; times as ``datetime``."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple


class ContentEventRow(NamedTuple):
    """A GenAI content event: a log record of a known event name that names its span
    (``content.event_records``)."""

    trace_id: str
    span_id: str
    event_name: str
    attributes: str | None
    body: str | None
    time_unix_nano: int | None
    service_name: str | None


class LogRecordRow(NamedTuple):
    """Any other log record that names its span (``content.span_records``): its name may be unset."""

    trace_id: str
    span_id: str
    event_name: str | None
    attributes: str | None
    body: str | None
    time_unix_nano: int | None
    service_name: str | None


class SpanEventsRow(NamedTuple):
    """A stored span as content events fill it (``content.event_spans``)."""

    trace_id: str
    span_id: str
    attributes: str | None
    events: str | None
    service_name: str | None
    name: str | None
    scope_name: str | None


class AnnotatedSpan(NamedTuple):
    """A span that carries feedback (``feedback.annotated_spans``)."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    attributes: str | None
    events: str | None
    links: str | None


class KBRow(NamedTuple):
    """A stored knowledge-base document (``references.kb_rows``); ``metadata`` is JSON text."""

    doc_id: str
    version: str | None
    valid_from: datetime | None
    valid_to: datetime | None
    superseded_by: str | None
    acl: list[str] | None
    title: str | None
    content: str | None
    metadata: str | None


class LoadStamp(NamedTuple):
    """How many gold cases and documents are stored and when each was last loaded: it changes with
    every load (``references.stamp``)."""

    cases: int
    cases_loaded_at: datetime | None
    documents: int
    documents_loaded_at: datetime | None


class HumanLabel(NamedTuple):
    """A human label of a judged item (``judging.human_labels``); ``item`` is '' for a whole trace."""

    trace_id: str
    metric: str
    item: str
    label: str
    anchor: bool | None


class JudgeVerdictRow(NamedTuple):
    """The latest verdict of an item by one judge version (``judging.latest_verdicts``)."""

    trace_id: str
    metric: str
    item: str
    label: str
    model: str
    prompt_version: str
    source: str | None


class JudgeVersion(NamedTuple):
    """A judge version seen, and whether it is trusted (``judging.versions``)."""

    model: str
    prompt_version: str
    first_seen: datetime | None
    anchors_scored_at: datetime | None
    trusted: bool | None
