"""The evaluator SDK stays one import: every name a third-party evaluator imported from
``evaluators.base`` still comes from there, as the very object its own module defines, and what
crosses to a worker process (specs, input rows, returned metrics) unpickles in a fresh interpreter."""

from __future__ import annotations

import base64
import importlib
import pickle
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import evaluators.base as sdk
from evaluators.service.registry import discover

ROOT = Path(__file__).resolve().parents[2]

# What ``evaluators.base`` offered before it was split by concern, with where each name lives now.
HOMES = {
    "ContentIndex": "evaluators.content_index",
    "EvalInput": "evaluators.eval_input",
    "EvaluatorSpec": "evaluators.spec",
    "GoldCase": "evaluators.gold",
    "KBDocument": "evaluators.gold",
    "KnowledgeBase": "evaluators.eval_input",
    "Metric": "evaluators.metric",
    "NoConfig": "evaluators.spec",
    "Regexes": "evaluators.spec",
    "Status": "evaluators.metric",
    "StepDoc": "evaluators.trace_view",
    "StepInfo": "evaluators.trace_view",
    "Tier": "evaluators.spec",
    "TraceView": "evaluators.trace_view",
    "cached_property": "evaluators.cached",
    "normalize": "evaluators.text",
    "normalize_doc": "evaluators.text",
    "not_applicable": "evaluators.metric",
    "ratio": "evaluators.metric",
}


def test_every_sdk_name_is_exported_from_base_as_its_home_defines_it() -> None:
    assert sorted(sdk.__all__) == sorted(HOMES)
    for name, home in HOMES.items():
        assert getattr(sdk, name) is getattr(importlib.import_module(home), name), name


def test_what_a_worker_receives_unpickles_in_a_fresh_interpreter() -> None:
    """The pool pickles the specs to its workers and the rows back (``evaluators.service.pool``); a class
    pickles by its module path, which must import in a process that imported nothing before."""
    spec = discover()["live_evidence"]
    doc = sdk.StepDoc("s1", "candidate", 0, "d1", None, "text", 0.5, {"k": "v"}, "span")
    step = sdk.StepInfo("s1", None, "retrieval", "retrieve", datetime(2026, 1, 1), None, 1.0, "OK")
    metric = sdk.ratio("m", 1, 2, span_id="s1", details={"x": [1]})
    payload = base64.b64encode(pickle.dumps((spec, doc, step, metric, sdk.not_applicable("n", "why"))))
    code = (
        "import base64, pickle, sys\n"
        "spec, doc, step, metric, na = pickle.loads(base64.b64decode(sys.stdin.read()))\n"
        "print(type(spec).__module__, spec.name, spec.fn.__module__, spec.config.__name__)\n"
        "print(type(doc).__module__, doc.doc_id, doc.metadata['k'])\n"
        "print(type(step).__module__, step.name, step.start_time.year)\n"
        "print(type(metric).__module__, metric.value, metric.details['x'][0], na.status)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=payload.decode(),
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout.splitlines()
    assert out == [
        "evaluators.spec live_evidence evaluators.builtin.live_evidence Config",
        "evaluators.trace_view d1 v",
        "evaluators.trace_view retrieve 2026",
        "evaluators.metric 0.5 1 not_applicable",
    ]
    assert pickle.loads(pickle.dumps(metric)) == metric and pickle.loads(pickle.dumps(doc)) == doc
