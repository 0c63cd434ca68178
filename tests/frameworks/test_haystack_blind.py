"""Honest when blind (issue 40): Haystack 2's own tracer with content tracing off (its default), beside
OpenLLMetry's Haystack and OpenAI instrumentations. The retriever's span is there, the documents it
returned are not; the prompt and the answer are (the OpenAI call's span).

A retrieval whose output was not recorded is no empty retrieval: no question may come out
``candidate_miss`` (nor any recall of 0 from that step). Every question is ``insufficient_trace``
naming ``retrieval_output``, or a layer the trace does show.
"""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.frameworks.conftest import dump, run_app

pytestmark = pytest.mark.instrumentors


def test_haystack_retrieval_without_content_is_unknown(rf: Server, chat: ChatServer) -> None:
    run = run_app(rf, chat, "haystack_app", "native-openllmetry", group="haystack2")
    for key, trace_id in run.trace_ids.items():
        info = dump(run, key)
        steps = run.steps(key)
        retrievals = [s for s in steps if s["step_type"] == "retrieval"]
        assert retrievals and all(s["output_text"] is None for s in retrievals), info
        assert not run.doc_ids(key, "candidate"), info
        trace = run.trace(key)
        assert trace["query_text"] == scenario.QUESTIONS[key], info
        (row,) = run.rows(
            "SELECT root_cause, case_id, failing_layers, missing_fields, evidence FROM attribution "
            "WHERE trace_id = $t",
            t=trace_id,
        )
        assert row["case_id"] == scenario.CASE_OF[key], row
        assert "candidate_miss" not in row["failing_layers"], (row, info)
        assert row["root_cause"] == "insufficient_trace", (row, info)
        assert "retrieval_output" in row["missing_fields"], (row, info)
        assert "retrieval_output" in row["evidence"], row
        # the unrecorded step's IR rows are not applicable, naming the field: no 0 from it
        step_rows = run.rows(
            "SELECT metric, status, value, reason FROM evaluations WHERE trace_id = $t AND span_id = $s "
            "AND evaluator = 'retrieval'",
            t=trace_id,
            s=retrievals[0]["span_id"],
        )
        assert step_rows, info
        assert {r["status"] for r in step_rows} == {"not_applicable"}, step_rows
        assert all(r["reason"].startswith("missing retrieval_output") for r in step_rows), step_rows
        (recall,) = run.rows(
            "SELECT status, value, reason FROM evaluations WHERE trace_id = $t AND metric = 'candidate_recall'",
            t=trace_id,
        )
        assert recall["status"] == "not_applicable" and recall["value"] is None, recall
