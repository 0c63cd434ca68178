"""LlamaIndex + OpenLLMetry with a custom *completion* LLM (issue 40): the model task that produced the
answer records only its output; the prompt sits in an inner task's ``{"args": ["Context information
is below..."], "kwargs": {...}}``. The answering call's input is the nearest recorded prompt, inner
spans included (``collector.settling.assemble.answer_prompt``): the context is derived from it, evaluators read
it, and the three questions come out right (before, nothing showed what the model saw)."""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import dump, run_app
from tests.frameworks.expect import check_question

pytestmark = pytest.mark.instrumentors


def test_llamaindex_openllmetry_completion_llm(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "llamaindex_app", "complete")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = run.steps(key)
        (answer_span,) = run.rows("SELECT answer_span_id FROM traces WHERE trace_id = $t", t=trace_id)
        (answering,) = [s for s in steps if s["span_id"] == answer_span["answer_span_id"]]
        # the model call's own span holds no prompt; one inside it does, wrapped as a call's arguments
        assert answering["step_type"] == "llm" and answering["input_text"] is None, info
        inner = [s for s in steps if s["parent_span_id"] == answering["span_id"]]
        assert any(
            '"args"' in (s["input_text"] or "") and "Context information" in s["input_text"] for s in inner
        )
        # the context stage comes from that prompt, so retention and over-refusal can be told
        (row,) = run.rows(
            "SELECT status FROM evaluations WHERE trace_id = $t AND metric = 'context_recall'", t=trace_id
        )
        assert row["status"] == "ok", info
        per_span = run.rows(
            "SELECT span_id, list(doc_id ORDER BY position) AS ids FROM step_documents "
            "WHERE trace_id = $t AND stage = 'candidate' GROUP BY span_id",
            t=trace_id,
        )
        assert len(per_span) == 1, per_span
        check_question(run, key, candidates=per_span[0]["ids"])
