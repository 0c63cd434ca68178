"""Retrieval decision and the trace's cost counters (layer ``no_retrieval``; docs/architecture.md, Attribution order).

- ``retrieval_decision`` (trace): label ``{must}×{did}`` with must ∈ ``must_retrieve`` | ``may_skip``
  | ``unknown`` (the case's ``must_retrieve`` true / false / null, or no case) and did ∈
  ``retrieved`` | ``skipped``; value and numerator = retrieval calls. ``passed`` unless the case must
  retrieve and no retrieval ran. Retrieval calls are retrieval steps, plus tool steps whose tool
  name matches one of ``retrieval_tools`` or whose result listed documents (an agent's search tool
  is a retrieval; one that wraps a retrieval step or another retrieving tool, or hands on the
  documents of one, is that step's call, counted once: ``TraceView.passed_through``). When no
  retrieval call was traced but the trace shows that one ran (``_trace_needs.untraced_retrieval``:
  the answering LLM's prompt holds evidence or registry text), the row is not applicable with label
  ``{must}×untraced`` and a reason naming the missing ``retrieval_step``. When no retrieval call was
  traced and nothing says what the answering model saw (no LLM input, no context documents), a case
  that must retrieve gets a not-applicable row labelled ``must_retrieve×unknown`` naming the missing
  ``answer_llm_input``: an untraced retrieval would leave no sign, so "never searched" cannot be told.
- Value rows: ``retrieval_calls``, ``tool_calls``, ``llm_calls``, ``total_tokens`` (sum over LLM
  steps of the total, else input + output; not applicable when no LLM step reports tokens),
  ``latency_ms`` (the root span's duration, else the trace's span; not applicable without times),
  ``tool_errors`` (tool steps with status ERROR).
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from evaluators.builtin import _trace_needs as needs
from evaluators.eval_input import EvalInput
from evaluators.metric import Metric, not_applicable
from evaluators.spec import EvaluatorSpec, Regexes
from evaluators.trace_view import StepInfo


class Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    retrieval_tools: Regexes = Field(
        ("retriev", "search", "knowledge_base", "vector"),
        description="Regexes (case-insensitive) on tool names whose calls count as retrieval.",
    )


def _value(metric: str, value: float, **details: object) -> Metric:
    return Metric(metric, value=float(value), numerator=float(value), details=details or None)


def _tokens(step: StepInfo) -> int | None:
    if step.total_tokens is not None:
        return step.total_tokens
    if step.input_tokens is not None or step.output_tokens is not None:
        return (step.input_tokens or 0) + (step.output_tokens or 0)
    return None


@lru_cache(maxsize=64)
def _tool_pattern(retrieval_tools: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern for the tool names that count as retrieval (compiled once per configuration)."""
    if not retrieval_tools:
        return None
    return re.compile("|".join(f"(?:{p})" for p in retrieval_tools), re.I)


def evaluate(inp: EvalInput, config: Config) -> list[Metric]:
    trace = inp.trace
    tools = trace.steps_of("tool")
    pattern = _tool_pattern(config.retrieval_tools) if tools else None
    returned_docs = {t.span_id for t in trace.retrieving_tools}

    def is_retrieval(t: StepInfo) -> bool:
        if t.span_id in trace.retrieval_wrappers:  # it wraps a retrieval step, counted already
            return False
        if t.span_id in trace.retrieval_callers and t.span_id not in returned_docs:
            return False  # it calls a retrieving tool and lists no documents of its own
        return t.span_id in returned_docs or (
            pattern is not None and bool(pattern.search(t.tool_name or t.name or ""))
        )

    retrieval_tools = [t for t in tools if is_retrieval(t)]
    retrieval_steps = len(trace.retrieval_steps)
    calls = retrieval_steps + len(retrieval_tools)

    case = inp.case
    if case is None or case.must_retrieve is None:
        must = "unknown"
    else:
        must = "must_retrieve" if case.must_retrieve else "may_skip"
    did = "retrieved" if calls else "skipped"
    details = {
        "must_retrieve": case.must_retrieve if case is not None else None,
        "retrieval_steps": retrieval_steps,
        "retrieval_tool_calls": [t.tool_name or t.name for t in retrieval_tools],
    }
    untraced = needs.untraced_retrieval(inp) if not calls else None
    if untraced:  # the app retrieved, it did not trace it: whether it skipped retrieval cannot be said
        decision = Metric(
            "retrieval_decision",
            "not_applicable",
            label=f"{must}×untraced",
            reason=needs.reason(needs.RETRIEVAL_STEP, untraced),
            details={**details, "missing_fields": [needs.RETRIEVAL_STEP]},
        )
    elif not calls and must == "must_retrieve" and not needs.has_context_stage(inp):
        # nothing traced says what the model saw: a retrieval the app did not trace would leave no
        # sign, so "it never searched" cannot be told from "its search was not traced"
        decision = Metric(
            "retrieval_decision",
            "not_applicable",
            label=f"{must}×unknown",
            reason=needs.reason(
                needs.ANSWER_LLM_INPUT,
                "no retrieval was traced and neither the answering LLM's input nor context documents "
                "were, so whether the app searched cannot be told",
            ),
            details={**details, "missing_fields": [needs.ANSWER_LLM_INPUT]},
        )
    else:
        decision = Metric(
            "retrieval_decision",
            value=float(calls),
            numerator=float(calls),
            passed=not (must == "must_retrieve" and did == "skipped"),
            label=f"{must}×{did}",
            details=details,
        )
    out = [
        decision,
        _value("retrieval_calls", calls),
        _value("tool_calls", len(tools)),
    ]
    llms = trace.steps_of("llm")
    out.append(_value("llm_calls", len(llms)))
    toks = [t for t in (_tokens(s) for s in llms) if t is not None]
    out.append(
        _value("total_tokens", sum(toks)) if toks else not_applicable("total_tokens", "no token counts")
    )
    root = next((s for s in trace.steps if s.is_root and s.duration_ms is not None), None)
    if root is not None:
        out.append(_value("latency_ms", root.duration_ms or 0.0, source="root span"))
    elif trace.start_time is not None and trace.end_time is not None:
        ms = (trace.end_time - trace.start_time).total_seconds() * 1000.0
        out.append(_value("latency_ms", ms, source="trace span"))
    else:
        out.append(not_applicable("latency_ms", "no span times"))
    errors = [t.tool_name or t.name for t in tools if (t.status_code or "").upper() == "ERROR"]
    out.append(_value("tool_errors", len(errors), tools=errors) if errors else _value("tool_errors", 0))
    return out


SPEC = EvaluatorSpec(
    name="retrieval_decision",
    version="1",
    fn=evaluate,
    config=Config,
    applies_to=("trace",),
    tier="cheap",
    needs_case=False,
    description="Whether the trace retrieved when it had to, and its call, token and latency counters.",
)
