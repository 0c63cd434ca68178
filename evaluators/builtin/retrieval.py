"""Candidate-stage IR metrics (docs/architecture.md, Evaluators and metrics): recall@k, hit@k, precision@k, MRR, nDCG@k.

Per retrieval step (``span_id`` = the step) and per trace (``span_id`` NULL):
- ``recall@k``: distinct evidence units (an any_of group is one unit) in the top k / units; the
  trace row takes the union of every retrieval step's top k.
- ``hit@k``: 1 when any unit is in the top k.
- ``precision@k``: distinct units in the top k / k.
- ``mrr``: 1 / rank of the first candidate matching a unit, 0 when none does.
- ``ndcg@k``: gains 2^grade - 1, log2 discount, ideal ranking from all gold units (ranx
  ``ndcg_burges``; trec_eval ``ndcg_cut`` with binary grades). A unit counts once, at its first match.
- ``candidate_recall`` (trace): units among all candidates, no cut-off. Not applicable, naming the
  missing field, when the trace retrieved without tracing it (``retrieval_step``), when a unit was
  not found while a retrieval step recorded no output (``retrieval_output``), or when a unit
  was not found while some candidates carry neither text nor a registry entry (``document_text``).
A retrieval step whose output was not recorded is no empty retrieval: its rows are not applicable
(``retrieval_output``) and it counts in no mean; the trace's recall@k and hit@k are too when a unit
was not found elsewhere, and whenever ``candidate_recall`` cannot tell either (no retrieval traced
while one ran, or nothing retrieved and nothing of the prompt seen): never a 0 from what the trace
does not show.
  ``passed`` when every unit is found, bar units a search agent's search listed (``surfaced``) and
  it never opened: those fail the layer ``not_opened`` (``evaluators.builtin.search``) instead.
Trace rows of precision@k, mrr and ndcg@k are the mean over the trace's retrieval steps (numerator:
sum, denominator: steps). Everything is not applicable without a gold case or without evidence.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evaluators.builtin import _trace_needs as needs
from evaluators.builtin import search
from evaluators.eval_input import EvalInput
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.spec import EvaluatorSpec


class Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    ks: tuple[int, ...] = Field((1, 3, 5, 10), description="Cut-offs for the @k metrics.")

    @field_validator("ks")
    @classmethod
    def _positive(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        if not v or any(k <= 0 for k in v):
            raise ValueError("ks must be positive integers")
        return tuple(sorted(set(v)))


_IDEAL: dict[tuple[tuple[int, ...], tuple[int, ...]], dict[int, float]] = {}


def _ideal_dcg(grades: tuple[int, ...], ks: tuple[int, ...]) -> dict[int, float]:
    """The ideal DCG at each cut-off for these unit grades (highest first): gains 2^grade−1, log2
    discount, from all gold units. The same few grade lists come back case after case, so the values
    are kept (bounded)."""
    key = (grades, ks)
    found = _IDEAL.get(key)
    if found is None:
        if len(_IDEAL) >= 1024:
            _IDEAL.clear()
        gains = [2**g - 1 for g in grades]
        found = _IDEAL[key] = {k: sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k])) for k in ks}
    return found


_NAMES: dict[tuple[int, ...], dict[int, tuple[str, str, str, str]]] = {}


def _names(ks: tuple[int, ...]) -> dict[int, tuple[str, str, str, str]]:
    """recall@k, hit@k, precision@k and ndcg@k for each cut-off (kept per list of cut-offs)."""
    found = _NAMES.get(ks)
    if found is None:
        if len(_NAMES) >= 64:
            _NAMES.clear()
        found = _NAMES[ks] = {k: (f"recall@{k}", f"hit@{k}", f"precision@{k}", f"ndcg@{k}") for k in ks}
    return found


def evaluate(inp: EvalInput, config: Config) -> list[Metric]:
    ks = config.ks
    names_at = _names(ks)
    if inp.case is None or not inp.matching.units:
        reason = "no gold case" if inp.case is None else "no gold evidence"
        names = [n for k in ks for n in names_at[k]] + ["mrr", "candidate_recall"]
        return [not_applicable(n, reason) for n in names]
    units = inp.matching.units
    grades = {u.index: u.grade for u in units}
    n_units = len(units)
    out: list[Metric] = []
    union_topk: dict[int, set[int]] = {k: set() for k in ks}
    step_values: dict[str, list[float]] = {
        n: [] for n in [names_at[k][2] for k in ks] + ["mrr"] + [names_at[k][3] for k in ks]
    }

    ideal = _ideal_dcg(tuple(sorted(grades.values(), reverse=True)), ks)
    units_of_doc = inp.matching.units_of_doc
    unrecorded = {s.span_id for s in needs.unrecorded_retrievals(inp)}
    for step, docs in inp.trace.candidates_by_step:
        if step.span_id in unrecorded:  # what it returned is unknown: no 0 from it
            out += _unrecorded_step(step.span_id, ks, names_at)
            continue
        # the ranks where units are matched for the first time, with those units (most ranks match
        # none); each cut-off then adds up the hits above it, in rank order
        hits: list[tuple[int, set[int]]] = []
        seen: set[int] = set()
        for i, d in enumerate(docs):
            units_here = units_of_doc(d)
            if units_here and not units_here <= seen:
                new = units_here - seen
                seen |= new
                hits.append((i, set(new)))
        sid = step.span_id
        for k in ks:
            found: set[int] = set()
            dcg = 0.0
            for i, new_units in hits:
                if i >= k:
                    break
                found |= new_units
                dcg += max(2 ** grades[u] - 1 for u in new_units) / math.log2(i + 2)
            idcg = ideal[k]
            nd = dcg / idcg if idcg > 0 else 0.0
            union_topk[k] |= found
            recall_k, hit_k, precision_k, ndcg_k = names_at[k]
            out.append(ratio(recall_k, len(found), n_units, span_id=sid, passed=len(found) == n_units))
            out.append(ratio(hit_k, 1 if found else 0, 1, span_id=sid, passed=bool(found)))
            out.append(ratio(precision_k, len(found), k, span_id=sid))
            out.append(ratio(ndcg_k, nd, 1, span_id=sid))
            step_values[precision_k].append(len(found) / k)
            step_values[ndcg_k].append(nd)
        rank = hits[0][0] + 1 if hits else None
        rr = 1.0 / rank if rank else 0.0
        out.append(ratio("mrr", rr, 1, span_id=sid, details={"first_relevant_rank": rank}))
        step_values["mrr"].append(rr)

    blind = _retrieval_unseen(inp)
    for k in ks:
        found = union_topk[k]
        missed = [inp.matching.unit(u).label for u in range(n_units) if u not in found]
        recall_k, hit_k = names_at[k][:2]
        if blind is not None:  # whether anything was retrieved cannot be told: no 0 from it
            out += [needs.missing(n, blind[0], why=blind[1]) for n in (recall_k, hit_k)]
            continue
        if missed and unrecorded:  # the missed units may be among the unrecorded documents
            why = needs.unrecorded_why(inp)
            out += [needs.missing(n, needs.RETRIEVAL_OUTPUT, why=why) for n in (recall_k, hit_k)]
            continue
        out.append(
            ratio(recall_k, len(found), n_units, passed=len(found) == n_units, details={"missed": missed})
        )
        out.append(ratio(hit_k, 1 if found else 0, 1, passed=bool(found)))
    for name, values in step_values.items():
        out.append(
            ratio(
                name,
                sum(values),
                len(values),
                label="macro over retrieval steps",
                na_reason="no retrieval step",
            )
        )
    out.append(candidate_recall(inp))
    return out


def _unrecorded_step(
    span_id: str, ks: tuple[int, ...], names_at: dict[int, tuple[str, str, str, str]]
) -> list[Metric]:
    """The rows of a retrieval step whose output was not recorded: each not applicable, naming it."""
    why = needs.WHY[needs.RETRIEVAL_OUTPUT]
    names = [n for k in ks for n in names_at[k]] + ["mrr"]
    return [needs.missing(n, needs.RETRIEVAL_OUTPUT, span_id, why) for n in names]


def _retrieval_unseen(inp: EvalInput) -> tuple[str, str] | None:
    """(missing field, why) when the trace cannot tell what was retrieved at all: it retrieved
    without tracing it, or it shows no retrieval and nothing of what the model saw (a retrieval the
    app did not trace, or a span no reader could read, would leave no sign). None otherwise."""
    untraced = needs.untraced_retrieval(inp)
    if untraced:
        return needs.RETRIEVAL_STEP, untraced
    trace = inp.trace
    if not (
        trace.candidates or trace.retrieval_steps or trace.retrieving_tools
    ) and not needs.has_context_stage(inp):
        return needs.ANSWER_LLM_INPUT, needs.NO_RETRIEVAL_SEEN
    return None


def candidate_recall(inp: EvalInput) -> Metric:
    """Units among all candidates / units (the layer ``candidate_miss``); not applicable when the
    trace cannot tell (a retrieval that was not traced, documents without text hiding a unit)."""
    blind = _retrieval_unseen(inp)
    if blind is not None:
        return needs.missing("candidate_recall", blind[0], why=blind[1])
    m = inp.matching
    found_all = m.in_candidates
    missed = [u for u in range(len(m.units)) if u not in found_all]
    surfaced = search.surfaced_not_opened(inp) if missed else set()
    if set(missed) - surfaced and needs.unrecorded_retrievals(inp):
        return needs.missing("candidate_recall", needs.RETRIEVAL_OUTPUT, why=needs.unrecorded_why(inp))
    if set(missed) - surfaced and needs.unverifiable_units(inp)[0]:
        return needs.missing("candidate_recall", needs.DOCUMENT_TEXT)
    details: dict[str, object] = {
        "missed": [m.unit(u).describe() for u in missed if u not in surfaced],
        "retrieval_steps": len(inp.trace.retrieval_steps),
    }
    if surfaced:  # listed by a search, never opened: layer not_opened, no retrieval miss
        details["surfaced_not_opened"] = [m.unit(u).label for u in sorted(surfaced)]
    return ratio(
        "candidate_recall",
        len(found_all),
        len(m.units),
        passed=not (set(missed) - surfaced),
        details=details,
    )


SPEC = EvaluatorSpec(
    name="retrieval",
    version="1",
    fn=evaluate,
    config=Config,
    applies_to=("retrieval", "trace"),
    tier="cheap",
    needs_case=True,
    description="Candidate recall, hit, precision, MRR and nDCG against the gold evidence.",
)
