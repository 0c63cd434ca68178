"""Gold cases and the knowledge-base registry (docs/architecture.md, Gold cases and the registry): models, JSONL validation, loading.

A JSONL body is validated whole before anything is stored: a bad line is refused with its line
number and the field at fault, and nothing from that body is loaded.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StrictInt,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from ragfault_core.errors import PermanentError
from ragfault_core.textnorm import normalize


class Evidence(BaseModel):
    """One piece of gold evidence: a document id and, ideally, a quote of its text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc_id: str | None = None
    quote: str | None = None
    chunk_id: str | None = None
    grade: StrictInt = Field(1, ge=0, le=10, description="Graded relevance; nDCG gain is 2^grade - 1.")

    @model_validator(mode="after")
    def _some_key(self) -> Evidence:
        if not (self.doc_id or self.quote or self.chunk_id):
            raise ValueError("evidence needs at least one of doc_id, quote, chunk_id")
        return self


class AnyOf(BaseModel):
    """Alternatives that each suffice: counted as one evidence unit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    any_of: list[Evidence] = Field(..., min_length=1)


class RequiredFact(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    text: str = Field(..., min_length=1)
    aliases: list[str] = Field(default_factory=list)


def _evidence_kind(value: Any) -> str:
    if isinstance(value, AnyOf) or (isinstance(value, dict) and "any_of" in value):
        return "any_of"
    return "evidence"


EvidenceItem = Annotated[
    Annotated[Evidence, Tag("evidence")] | Annotated[AnyOf, Tag("any_of")],
    Discriminator(_evidence_kind),
]


def _as_timestamp(value: Any) -> Any:
    if isinstance(value, date) and not isinstance(value, datetime):
        return datetime(value.year, value.month, value.day)
    return value


class GoldCase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    case_id: str = Field(..., min_length=1)
    query: str = Field(..., min_length=1)
    # strict: a bad field is refused, not coerced ("yes", "false" and 1 are not booleans here)
    answerable: StrictBool = True
    expected_behavior: Literal["answer", "refuse", "correct_premise", "clarify"] = "answer"
    category: str | None = None
    risk: Literal["high", "normal"] = "normal"
    must_retrieve: StrictBool | None = None
    evidence: list[EvidenceItem] = Field(default_factory=list)
    required_facts: list[RequiredFact] = Field(default_factory=list)
    negative_doc_ids: list[str] = Field(default_factory=list)
    user_scope: list[str] | None = None
    as_of: datetime | None = None
    notes: str | None = None
    reliance: Literal["strong", "supplementary"] | None = Field(
        None,
        description=(
            "strong: the answer must rest on the knowledge base (policy, prices); supplementary: the "
            "knowledge base helps. Unset: the default of the case's category ([experiments] reliance)."
        ),
    )

    _norm_as_of = field_validator("as_of", mode="before")(classmethod(lambda cls, v: _parse_date(v)))

    @model_validator(mode="after")
    def _consistent(self) -> GoldCase:
        if not self.answerable and self.expected_behavior == "answer":
            raise ValueError("an unanswerable case cannot expect behavior 'answer'")
        return self


class KBDocument(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    doc_id: str = Field(..., min_length=1)
    version: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    acl: list[str] | None = None
    title: str | None = None
    content: str | None = None
    metadata: dict[str, Any] | None = None

    _dates = field_validator("valid_from", "valid_to", mode="before")(
        classmethod(lambda cls, v: _parse_date(v))
    )

    @model_validator(mode="after")
    def _order(self) -> KBDocument:
        if self.valid_from and self.valid_to and self.valid_to < self.valid_from:
            raise ValueError("valid_to is before valid_from")
        return self


def _parse_date(value: Any) -> Any:
    if isinstance(value, str) and len(value) == 10:
        try:
            return _as_timestamp(date.fromisoformat(value))
        except ValueError:
            return value
    return _as_timestamp(value)


def parse_jsonl(text: str | bytes, model: type[BaseModel], key: str) -> list[Any]:
    """Validate every line; raise PermanentError naming the first bad line and field."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PermanentError(f"body is not UTF-8: {exc}") from exc
    items: list[Any] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise PermanentError(f"line {lineno}: invalid JSON ({exc})") from exc
        if not isinstance(obj, dict):
            raise PermanentError(f"line {lineno}: expected a JSON object")
        try:
            item = model.model_validate(obj)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            field = _field_path(err["loc"])
            raise PermanentError(f"line {lineno}: field {field}{_given(err)}: {_allowed(err)}") from exc
        ident = getattr(item, key)
        if ident in seen:
            raise PermanentError(
                f"line {lineno}: field {key}: duplicate {ident!r} (first on line {seen[ident]})"
            )
        seen[ident] = lineno
        items.append(item)
    return items


def _given(err: Any) -> str:
    """`` = <value>`` for an error about one value (not for a missing or unknown field)."""
    if err.get("type") in ("missing", "extra_forbidden") or isinstance(err.get("input"), dict):
        return ""
    return f" = {orjson.dumps(err.get('input'), default=str).decode()}"


def _allowed(err: Any) -> str:
    kind, ctx = err.get("type", ""), err.get("ctx") or {}
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "bool_type":
        return "must be true or false"
    if "expected" in ctx:
        return f"allowed: {ctx['expected']}"
    msg = str(err.get("msg", "invalid"))
    return msg.removeprefix("Value error, ")


def _field_path(loc: tuple[Any, ...]) -> str:
    """The user's field path of a validation error, without pydantic's union tags and labels."""
    parts: list[str] = []
    for i, p in enumerate(loc):
        if isinstance(p, str) and not p.isidentifier():
            continue  # e.g. 'function-after[...]'
        if (
            i >= 2
            and loc[i - 2] == "evidence"
            and isinstance(loc[i - 1], int)
            and p in ("evidence", "any_of")
        ):
            continue  # the discriminator tag, not a field
        parts.append(str(p))
    return ".".join(parts) or "(line)"


def case_row(case: GoldCase, dataset: str | None, loaded_at: datetime) -> dict[str, Any]:
    dump = case.model_dump(mode="json", exclude_none=True)
    return {
        "case_id": case.case_id,
        "query": case.query,
        "query_norm": normalize(case.query),
        "answerable": case.answerable,
        "expected_behavior": case.expected_behavior,
        "category": case.category,
        "risk": case.risk,
        "must_retrieve": case.must_retrieve,
        "evidence": orjson.dumps(dump.get("evidence", [])).decode(),
        "required_facts": orjson.dumps(dump.get("required_facts", [])).decode(),
        "negative_doc_ids": list(case.negative_doc_ids),
        "user_scope": list(case.user_scope) if case.user_scope is not None else None,
        "as_of": case.as_of,
        "notes": case.notes,
        "dataset": dataset,
        "loaded_at": loaded_at,
        "raw": orjson.dumps(dump).decode(),
    }


def kb_row(doc: KBDocument, loaded_at: datetime) -> dict[str, Any]:
    return {
        "doc_id": doc.doc_id,
        "version": doc.version,
        "valid_from": doc.valid_from,
        "valid_to": doc.valid_to,
        "superseded_by": doc.superseded_by,
        "acl": list(doc.acl) if doc.acl is not None else None,
        "title": doc.title,
        "content": doc.content,
        "metadata": orjson.dumps(doc.metadata).decode() if doc.metadata is not None else None,
        "loaded_at": loaded_at,
    }
