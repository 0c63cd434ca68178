"""Promoting a live trace to a gold case (issue 41: failures become gold cases).

A reviewer who looked at a live trace (``queries/triage.sql``) confirms or corrects the cause live
attribution suggested and names the gold evidence, the required facts and the expected behaviour.
That becomes an ordinary gold case (``GoldCase``, the schema of the JSONL files) in a dataset of its
own, joined to the trace the way every case is (its ``ragfault.case_id``, else its normalized
question), with a ``gold_promotions`` row saying which trace it came from, who promoted it and when.
The trace is then evaluated again with the case, so ``attribution`` (and through it ``report``,
``compare`` and ``gate``) has a row for it at once; a gate rule ``where = { promoted = true }`` holds
every promoted case to passing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from collector.store import promote as store_promote
from collector.store.base import Tx
from collector.store.references import upsert_gold
from evaluators.gold import EvidenceItem, GoldCase, RequiredFact, case_row
from queries.taxonomy import RootCause
from ragfault_core.errors import PermanentError, RetryableError

WriteFn = Callable[[Callable[[Tx], Any]], Any]
EvaluateFn = Callable[[list[str]], Any]

# the root causes of attribution a reviewer may confirm: all of them (``queries.taxonomy``)
Cause = RootCause
DEFAULT_DATASET = "production"


class UnknownTrace(PermanentError):
    """No stored trace has this id: 404, not 400, for the caller may simply have the wrong one."""

    http_status = 404


class PromoteRequest(BaseModel):
    """A reviewer's verdict on one live trace, in the gold-case fields it becomes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    trace_id: str = Field(..., pattern=r"^[0-9a-fA-F]{32}$", description="The live trace (32 hex digits).")
    cause: Cause = Field(..., description="The root cause the reviewer confirms or corrects.")
    evidence: list[EvidenceItem] = Field(default_factory=list, description="Gold evidence: doc id and quote.")
    required_facts: list[RequiredFact] = Field(default_factory=list)
    expected_behavior: Literal["answer", "refuse", "correct_premise", "clarify"] = "answer"
    answerable: StrictBool | None = Field(
        None, description="Unset: false when the expected behaviour is refuse."
    )
    must_retrieve: StrictBool | None = None
    negative_doc_ids: list[str] = Field(default_factory=list)
    category: str | None = None
    risk: Literal["high", "normal"] = "normal"
    case_id: str | None = Field(
        None,
        min_length=1,
        description="Unset: the trace's ragfault.case_id, else live-<first 16 hex digits>.",
    )
    dataset: str = Field(DEFAULT_DATASET, min_length=1, description="The gold set the case joins.")
    user: str | None = Field(None, description="Who promoted it (stored with the case).")
    notes: str | None = None


def _trace(con: Tx, trace_id: str) -> dict[str, Any]:
    row = store_promote.trace_row(con, trace_id)
    if row is None:
        raise UnknownTrace(f"no trace {trace_id}")
    return row


def build_case(req: PromoteRequest, trace: dict[str, Any]) -> GoldCase:
    """The gold case of a promotion: the trace's question, the reviewer's fields. The case id is
    the one the trace carries when it carries one (else the case would not join it)."""
    if not trace["query_text"]:
        raise PermanentError(
            f"trace {trace['trace_id']} carries no question (insufficient_trace): a gold case needs one"
        )
    carried = trace["case_id"]
    if carried and req.case_id and req.case_id != carried:
        raise PermanentError(
            f"field case_id: the trace carries ragfault.case_id {carried!r}; a case named {req.case_id!r} "
            "would not join it"
        )
    case_id = carried or req.case_id or f"live-{trace['trace_id'][:16]}"
    joined = trace["joined_case"]
    if joined and joined != case_id:
        raise PermanentError(
            f"trace {trace['trace_id']} joins gold case {joined!r} already: correct that case instead"
        )
    answerable = req.answerable if req.answerable is not None else req.expected_behavior != "refuse"
    notes = f"promoted from trace {trace['trace_id']}: {req.cause}" + (f"; {req.notes}" if req.notes else "")
    try:
        return GoldCase(
            case_id=case_id, query=trace["query_text"], answerable=answerable,
            expected_behavior=req.expected_behavior, category=req.category, risk=req.risk,
            must_retrieve=req.must_retrieve, evidence=req.evidence, required_facts=req.required_facts,
            negative_doc_ids=req.negative_doc_ids, notes=notes,
        )  # fmt: skip
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in err["loc"]) or "case"
        raise PermanentError(f"field {field}: {str(err['msg']).removeprefix('Value error, ')}") from exc


def _store(con: Tx, row: dict[str, Any], promotion: dict[str, Any]) -> None:
    upsert_gold(con, [row])
    store_promote.write_promotion(con, promotion)


def promote(
    con: Tx, write: WriteFn, evaluate: EvaluateFn, req: PromoteRequest, now: datetime
) -> dict[str, Any]:
    """Write the gold case of ``req`` and its promotion record, evaluate the trace again with it,
    and return the case with the trace's attribution now. ``con`` reads (a cursor of its own);
    ``write`` runs a function on the writer; ``evaluate`` evaluates traces synchronously."""
    trace_id = req.trace_id.lower()
    trace = _trace(con, trace_id)
    if not trace["settled"]:
        raise RetryableError(f"trace {trace_id} is not assembled yet; promote it once it is", retry_after=5)
    case = build_case(req, trace)
    row = case_row(case, req.dataset, now)
    promotion = {
        "case_id": case.case_id, "trace_id": trace_id, "service_name": trace["service_name"],
        "suggested_cause": trace["suggested_cause"], "cause": req.cause, "promoted_by": req.user,
        "promoted_at": now,
    }  # fmt: skip
    write(lambda w: _store(w, row, promotion))
    evaluate([trace_id])
    root_cause, layers = store_promote.attribution(con, trace_id)
    return {
        "case_id": case.case_id,
        "trace_id": trace_id,
        "dataset": req.dataset,
        "cause": req.cause,
        "suggested_cause": trace["suggested_cause"],
        "root_cause": root_cause,  # attribution's verdict with the case (None: not evaluated)
        "failing_layers": layers,
        "agrees": root_cause == req.cause if root_cause is not None else None,
        "case": orjson.loads(row["raw"]),
    }
