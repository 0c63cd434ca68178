"""User feedback and annotations on traces: the ``feedback`` table, its API, and what is read from spans.

Two ways in:

* ``POST /api/v1/feedback`` with ``{trace_id, span_id?, kind: thumbs|score|comment, value, comment,
  user, name?}``. Thumbs take ``up``/``down``, ``true``/``false`` or ``1``/``0``/``-1`` and are stored as
  1 (up) / 0 (down); a score is a number (negative below ``[sampling] negative_score_below``, default
  0.5, i.e. a 0..1 scale). API feedback is HUMAN feedback. Feedback may arrive before its trace.
* From spans, when their trace is evaluated (so a late span re-reads them):
  - OpenInference annotations on the span they describe: ``annotations.<i>.annotation.<field>`` and
    ``evaluations.<i>.evaluation.<field>`` (fields name, score, label, explanation, annotator_kind,
    identifier, metadata); ``trace.annotations.*`` / ``trace.evaluations.*`` describe the whole trace.
    ``session.*`` feedback is not read (a session has no single trace).
  - An ``EVALUATOR`` span (``openinference.span.kind``) carrying those attributes describes its
    target: the span its first link points at (which may sit in another trace), else its parent span,
    else its own trace.
  - GenAI ``gen_ai.evaluation.result`` span events (``gen_ai.evaluation.name``, ``.score.value``,
    ``.score.label``, ``.explanation``) describe the span carrying them.

Negative feedback (thumbs down, a score below the threshold, a label in ``negative_labels``) from an
annotator kind listed in ``[sampling] feedback_annotator_kinds`` (default HUMAN; ``""`` stands for
unspecified) is an always-evaluate trigger; when it arrives after the trace was evaluated, the trace
is evaluated again.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import anyio
import orjson
import pyarrow as pa
from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, ConfigDict, Field, field_validator

from collector.api.routes import protected_router
from collector.components import Context
from collector.store import feedback as store_fb
from collector.store.base import Tx
from collector.store.reader import Window
from evaluators.service.sampling_decision import is_negative
from evaluators.service.sampling_settings import SamplingSettings, load_sampling_settings
from ragfault_core.jsonvalue import loads as loads_json

WriteFn = Callable[[Callable[[Tx], Any]], Any]

FEEDBACK_SCHEMA = pa.schema(
    [
        ("feedback_id", pa.string()), ("trace_id", pa.string()), ("span_id", pa.string()), ("kind", pa.string()),
        ("name", pa.string()), ("value", pa.float64()), ("label", pa.string()), ("comment", pa.string()),
        ("user_id", pa.string()), ("annotator_kind", pa.string()), ("source", pa.string()),
        ("source_trace_id", pa.string()), ("source_span_id", pa.string()), ("identifier", pa.string()),
        ("metadata", pa.string()), ("negative", pa.bool_()), ("created_at", pa.timestamp("us")),
    ]
)  # fmt: skip

_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_HEX16 = re.compile(r"^[0-9a-f]{16}$")
_ANNOTATION_KEY = re.compile(
    r"^(trace\.|session\.)?(annotations|evaluations)\.(\d+)\.(annotation|evaluation)\.(\w+)$"
)
_THUMBS = {"up": 1.0, "thumbs_up": 1.0, "down": 0.0, "thumbs_down": 0.0}


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class FeedbackIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    trace_id: str = Field(..., description="32 hex digits.")
    span_id: str | None = Field(None, description="16 hex digits; omit for feedback on the whole trace.")
    kind: Literal["thumbs", "score", "comment"]
    value: float | bool | str | None = Field(
        None, description="thumbs: up/down/true/false/1/0; score: a number."
    )
    comment: str | None = None
    user: str | None = None
    name: str | None = Field(None, description="Criterion; default user_feedback.")
    metadata: dict[str, Any] | None = None

    @field_validator("trace_id")
    @classmethod
    def _trace(cls, v: str) -> str:
        v = v.strip().lower()
        if not _HEX32.match(v):
            raise ValueError("trace_id must be 32 hex digits")
        return v

    @field_validator("span_id")
    @classmethod
    def _span(cls, v: str | None) -> str | None:
        if v is None:
            return None
        v = v.strip().lower()
        if not _HEX16.match(v):
            raise ValueError("span_id must be 16 hex digits")
        return v

    def numeric(self) -> tuple[float | None, str | None]:
        """(value, label) as stored; raises ValueError when the value does not fit the kind."""
        v = self.value
        if self.kind == "thumbs":
            if isinstance(v, bool):
                return (1.0 if v else 0.0), ("thumbs_up" if v else "thumbs_down")
            if isinstance(v, (int, float)) and v in (1, 0, -1):
                return (1.0 if v > 0 else 0.0), ("thumbs_up" if v > 0 else "thumbs_down")
            if isinstance(v, str) and v.strip().lower() in _THUMBS:
                num = _THUMBS[v.strip().lower()]
                return num, ("thumbs_up" if num else "thumbs_down")
            raise ValueError("thumbs value must be up/down, true/false or 1/0/-1")
        if self.kind == "score":
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError("score value must be a number")
            return float(v), None
        if v is not None and not isinstance(v, str):
            raise ValueError("comment value must be text (or use the comment field)")
        if not (self.comment or v):
            raise ValueError("a comment needs text")
        return None, None


def api_row(body: FeedbackIn, policy: SamplingSettings, now: datetime) -> dict[str, Any]:
    value, label = body.numeric()
    comment = body.comment if body.comment is not None else (body.value if body.kind == "comment" else None)
    return {
        "feedback_id": uuid.uuid4().hex, "trace_id": body.trace_id, "span_id": body.span_id, "kind": body.kind,
        "name": body.name or "user_feedback", "value": value, "label": label, "comment": comment,
        "user_id": body.user, "annotator_kind": "HUMAN", "source": "api", "source_trace_id": None,
        "source_span_id": None, "identifier": None,
        "metadata": orjson.dumps(body.metadata).decode() if body.metadata is not None else None,
        "negative": is_negative(policy, body.kind, value, label), "created_at": now,
    }  # fmt: skip


def to_table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.table(
        [pa.array([r[f.name] for r in rows], f.type) for f in FEEDBACK_SCHEMA], schema=FEEDBACK_SCHEMA
    )


@dataclass
class Stored:
    inserted: int
    requeued: list[str]


def store_feedback(con: Tx, rows: list[dict[str, Any]], requeue: bool = True) -> Stored:
    """Insert feedback (writer thread). Annotation rows have stable ids, so reading a span twice adds
    nothing. New negative feedback on a trace already evaluated marks it for evaluation again."""
    if not rows:
        return Stored(0, [])
    inserted, requeued = store_fb.insert(con, to_table(rows), requeue)
    return Stored(inserted, requeued)


# --- annotations read from spans ----------------------------------------------------------------


def _loads(raw: Any) -> Any:
    if raw is None:
        return None
    try:
        return loads_json(raw)
    except ValueError:
        return None


def _num(v: Any) -> float | None:
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _stable_id(*parts: str) -> str:
    return hashlib.blake2b(":".join(parts).encode(), digest_size=16).hexdigest()


def _annotation_row(
    policy: SamplingSettings,
    fid: str,
    target: tuple[str, str | None],
    obj: dict[str, Any],
    source: str,
    src: tuple[str, str],
    now: datetime,
) -> dict[str, Any] | None:
    name = obj.get("name")
    score, label, explanation = _num(obj.get("score")), obj.get("label"), obj.get("explanation")
    if not isinstance(name, str) or (score is None and label is None and explanation is None):
        return None  # the spec requires a name and one result field
    label = str(label) if label is not None else None
    if label is not None and label.strip().lower() in _THUMBS and score is None:
        kind, score = "thumbs", _THUMBS[label.strip().lower()]
    elif score is not None:
        kind = "score"
    elif label is not None:
        kind = "label"
    else:
        kind = "comment"
    meta = obj.get("metadata")
    return {
        "feedback_id": fid, "trace_id": target[0], "span_id": target[1], "kind": kind, "name": name,
        "value": score, "label": label, "comment": str(explanation) if explanation is not None else None,
        "user_id": None, "annotator_kind": str(obj["annotator_kind"]) if obj.get("annotator_kind") else None,
        "source": source, "source_trace_id": src[0], "source_span_id": src[1],
        "identifier": str(obj["identifier"]) if obj.get("identifier") is not None else None,
        "metadata": meta if isinstance(meta, str) and isinstance(_loads(meta), dict) else None,
        "negative": is_negative(policy, kind, score, label), "created_at": now,
    }  # fmt: skip


def annotations_of_span(
    policy: SamplingSettings,
    trace_id: str,
    span_id: str,
    parent: str | None,
    attrs: dict[str, Any],
    events: Any,
    links: Any,
    now: datetime,
) -> list[dict[str, Any]]:
    """Feedback rows carried by one span (pure)."""
    is_evaluator = str(attrs.get("openinference.span.kind", "")).upper() == "EVALUATOR"
    span_target: tuple[str, str | None] = (trace_id, span_id)
    source = "span_annotation"
    if is_evaluator:
        source = "evaluator_span"
        link = links[0] if isinstance(links, list) and links and isinstance(links[0], dict) else None
        if (
            link
            and _HEX32.match(str(link.get("trace_id", "")))
            and _HEX16.match(str(link.get("span_id", "")))
        ):
            span_target = (link["trace_id"], link["span_id"])
        elif parent:
            span_target = (trace_id, parent)
        else:
            span_target = (trace_id, None)
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for key, value in attrs.items():
        m = _ANNOTATION_KEY.match(key)
        if not m or m.group(1) == "session.":
            continue
        scope = "trace" if m.group(1) else "span"
        groups.setdefault((scope, m.group(2), m.group(3)), {})[m.group(5)] = value
    out = []
    for (scope, term, idx), obj in sorted(groups.items()):
        target = (span_target[0], None) if scope == "trace" else span_target
        fid = _stable_id(trace_id, span_id, scope, term, idx)
        row = _annotation_row(policy, fid, target, obj, source, (trace_id, span_id), now)
        if row is not None:
            out.append(row)
    if isinstance(events, list):
        for i, ev in enumerate(events):
            if not isinstance(ev, dict) or ev.get("name") != "gen_ai.evaluation.result":
                continue
            ea = ev.get("attributes") or {}
            obj = {
                "name": ea.get("gen_ai.evaluation.name"),
                "score": ea.get("gen_ai.evaluation.score.value"),
                "label": ea.get("gen_ai.evaluation.score.label"),
                "explanation": ea.get("gen_ai.evaluation.explanation"),
            }
            row = _annotation_row(
                policy,
                _stable_id(trace_id, span_id, "event", str(i)),
                span_target,
                obj,
                "genai_event",
                (trace_id, span_id),
                now,
            )
            if row is not None:
                out.append(row)
    return out


def read_annotations(
    con: Tx, trace_ids: list[str], policy: SamplingSettings, hint: Window = None
) -> list[dict[str, Any]]:
    """Feedback rows from the spans of these traces: the spans marked at ingest (``spans.feedback``),
    and those stored before spans were marked that a LIKE filter finds; then parsed. ``hint``: the
    range of the traces' ``first_received_at`` read with their ids (``traces_in_range``)."""
    if not trace_ids:
        return []
    now = utcnow()
    # spans are marked where they are decoded (collector.ingest.span_rows.carries_feedback); those stored
    # before that (NULL) are searched as they always were
    rows = store_fb.annotated_spans(con, trace_ids, hint)
    out: list[dict[str, Any]] = []
    for tid, sid, parent, attrs, events, links in rows:
        a = _loads(attrs)
        if isinstance(a, dict):
            out.extend(annotations_of_span(policy, tid, sid, parent, a, _loads(events), _loads(links), now))
    return out


# --- the API -------------------------------------------------------------------------------------


def router(ctx: Context, wake: Callable[[], None] = lambda: None) -> APIRouter:
    """``POST /feedback``; ``wake``: tells the evaluation service that feedback re-queued traces
    (the evaluation component passes its service's, ``evaluators.service.component``)."""
    r = protected_router(ctx)
    policy: SamplingSettings = ctx.table("sampling", load_sampling_settings)

    def write(fn: Callable[[Tx], Any]) -> Any:
        return ctx.writer.call(fn, timeout=120)

    @r.post("/feedback", summary="Record user feedback on a trace or span (thumbs, score, comment)")
    async def post_feedback(body: FeedbackIn) -> dict[str, Any]:
        try:
            row = api_row(body, policy, utcnow())
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from exc

        def work() -> tuple[Stored, bool]:
            stored = write(lambda con: store_feedback(con, [row]))
            con = ctx.store.cursor()
            try:
                known = store_fb.trace_known(con, body.trace_id)
            finally:
                con.close()
            return stored, known

        stored, known = await anyio.to_thread.run_sync(work)
        ctx.metrics.inc("ragfault_feedback_total", stored.inserted, source="api")
        if stored.requeued:
            wake()
        return {
            "feedback_id": row["feedback_id"], "negative": row["negative"], "trace_known": known,
            "reevaluating": bool(stored.requeued),
        }  # fmt: skip

    @r.get("/feedback", summary="Feedback on one trace")
    async def get_feedback(trace_id: str) -> dict[str, Any]:
        def load() -> dict[str, Any]:
            con = ctx.store.cursor()
            try:
                return store_fb.of_trace(con, trace_id.lower()).as_dict()
            finally:
                con.close()

        return await anyio.to_thread.run_sync(load)

    return r
