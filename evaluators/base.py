"""The evaluator SDK: what an evaluator sees and returns, in one import.

An evaluator is a pure function ``fn(inp: EvalInput, config) -> list[Metric]`` plus an
``EvaluatorSpec``. It does no I/O and reads no clock: the runner loads the trace, its gold case and
the knowledge base into an ``EvalInput`` and writes the returned metrics to ``evaluations``.

Status rules (docs/architecture.md, Evaluators and metrics): a metric with an empty denominator is ``not_applicable`` — never 0, never 1.

Third-party evaluators import from here; the names live in one module per concern:
``evaluators.spec`` (the spec and what a config model may use), ``evaluators.trace_view`` (the
trace, its steps and their documents), ``evaluators.eval_input`` (the input and the registry),
``evaluators.metric`` (the rows returned), ``evaluators.cached`` and ``evaluators.text`` (helpers).
"""

from __future__ import annotations

from evaluators.cached import cached_property
from evaluators.content_index import ContentIndex
from evaluators.eval_input import EvalInput, KnowledgeBase
from evaluators.gold import GoldCase, KBDocument
from evaluators.metric import Metric, Status, not_applicable, ratio
from evaluators.spec import EvaluatorSpec, NoConfig, Regexes, Tier
from evaluators.text import normalize, normalize_doc
from evaluators.trace_view import StepDoc, StepInfo, TraceView

__all__ = [
    "ContentIndex",
    "EvalInput",
    "EvaluatorSpec",
    "GoldCase",
    "KBDocument",
    "KnowledgeBase",
    "Metric",
    "NoConfig",
    "Regexes",
    "Status",
    "StepDoc",
    "StepInfo",
    "Tier",
    "TraceView",
    "cached_property",
    "normalize",
    "normalize_doc",
    "not_applicable",
    "ratio",
]
