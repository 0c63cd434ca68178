"""DSPy with ``openinference-instrumentation-dspy``, offline (its own environment): a program of three
modules, ``Search`` (the ``TOP_K`` best documents as objects), ``FitBudget`` (the first ``BUDGET``)
and a ``dspy.Predict`` answering from them (see ``apps/dspy_app.py``).

DSPy's modules are OpenInference CHAIN spans with their inputs and outputs as JSON. No reader
knows them: a module whose output *is* a document list retrieved it (a retrieval), one given
documents and returning documents cut them (a rerank, where the budget's cut is named), and the
answering prompt is the model call's, inside the predictor and its adapter.
"""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import dump, run_app
from tests.frameworks.expect import KEYWORD_CANDIDATES, check_all

pytestmark = pytest.mark.instrumentors


def test_dspy_openinference(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "dspy_app", group="dspy")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = {s["name"]: s for s in run.steps(key)}
        assert steps["Search.forward"]["step_type"] == "retrieval", info
        assert steps["FitBudget.forward"]["step_type"] == "rerank", info
        assert steps["LM.__call__"]["step_type"] == "llm", info
        assert run.doc_ids(key, "candidate") == KEYWORD_CANDIDATES[key], info
        assert run.doc_ids(key, "reranked") == KEYWORD_CANDIDATES[key][:1], info
        calls = run.rows(
            "SELECT value FROM evaluations WHERE trace_id = $t AND metric = 'retrieval_calls' AND span_id IS NULL",
            t=trace_id,
        )
        assert calls == [{"value": 1.0}], info
    check_all(run, candidates=KEYWORD_CANDIDATES)
