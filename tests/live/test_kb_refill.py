"""A knowledge base loaded after traces settled: their textless documents (the GenAI spec's
``{id, score}``) take the registry text and the traces are evaluated again."""

from __future__ import annotations

import json
from typing import Any

KB = [
    {"doc_id": "kb-refund", "content": "Refunds are possible within 30 days."},
    {"doc_id": "kb-shipping", "content": "Orders ship within 2 business days."},
]


CASE = {
    "case_id": "refund-window",
    "query": "refund?",
    "evidence": [{"quote": "within 30 days"}],  # found only in a document's text
}


def _textless_trace(tracer: Any, doc_ids: list[str]) -> str:
    """A retrieval of documents sent as ``{id, score}`` and the LLM call that answered from them."""
    with tracer.start_as_current_span("answer", attributes={"ragfault.case_id": CASE["case_id"]}) as root:
        with tracer.start_as_current_span("retrieve") as r:
            r.set_attribute("gen_ai.operation.name", "retrieval")
            r.set_attribute("gen_ai.retrieval.query.text", "refund?")
            r.set_attribute(
                "gen_ai.retrieval.documents",
                json.dumps([{"id": d, "score": 0.9 - i / 10} for i, d in enumerate(doc_ids)]),
            )
        with tracer.start_as_current_span("chat") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute(
                "gen_ai.input.messages",
                json.dumps(
                    [{"role": "user", "content": "Context: Refunds are possible within 30 days.\nrefund?"}]
                ),
            )
            chat.set_attribute(
                "gen_ai.output.messages",
                json.dumps([{"role": "assistant", "content": "Refunds are possible within 30 days."}]),
            )
    return format(root.get_span_context().trace_id, "032x")


def test_a_kb_loaded_after_settling_fills_textless_documents_and_changes_the_verdicts(live) -> None:
    srv = live("[sampling]\nproduction_rate = 0.0\n")
    assert srv.http.post("/api/v1/gold", content=json.dumps(CASE)).json()["loaded"] == 1
    tr = srv.tracer("kb-later")
    known = _textless_trace(tr, ["kb-refund", "kb-shipping"])
    unknown = _textless_trace(tr, ["not-in-the-kb"])
    srv.drain()

    def docs(t: str) -> list[list[Any]]:
        return srv.sql(
            "SELECT doc_id, content, content_source FROM step_documents WHERE trace_id = $t "
            "AND stage = 'candidate' ORDER BY position",
            t=t,
        )

    def verdict(t: str) -> dict[str, Any]:
        """The trace's generation, and its sufficiency and candidate-recall rows (a failed sufficiency
        row is what attribution turns into ``insufficient_trace``)."""
        out: dict[str, Any] = {
            "generation": srv.scalar("SELECT eval_generation FROM traces WHERE trace_id = $t", t=t)
        }
        for metric, status, value, missing in srv.sql(
            "SELECT metric, status, value, details->>'$.missing_fields' FROM evaluations WHERE trace_id = $t "
            "AND metric IN ('trace_sufficiency', 'candidate_recall')",
            t=t,
        ):
            out[metric] = (status, value, json.loads(missing) if metric == "trace_sufficiency" else None)
        return out

    assert docs(known) == [["kb-refund", None, None], ["kb-shipping", None, None]]
    contexts = "SELECT count(*) FROM step_documents WHERE trace_id = $t AND stage = 'context'"
    assert srv.scalar(contexts, t=known) == 0  # no text: nothing to find in the prompt
    before = verdict(known)
    assert before == {
        "generation": 1,
        "trace_sufficiency": ("ok", 2 / 3, ["document_text"]),  # insufficient: the documents have no text
        "candidate_recall": ("not_applicable", None, None),
    }
    assert verdict(unknown) == before

    r = srv.http.post("/api/v1/kb", content="\n".join(json.dumps(d) for d in KB))
    assert r.status_code == 200, r.text
    assert r.json() == {"loaded": 2, "reevaluating": 1}  # the trace whose documents took text
    srv.drain()

    assert docs(known) == [
        ["kb-refund", KB[0]["content"], "registry"],
        ["kb-shipping", KB[1]["content"], "registry"],
    ]
    # assembled again: the prompt's context is found among the documents that now have text
    assert srv.sql(
        "SELECT doc_id, content, source FROM step_documents WHERE trace_id = $t AND stage = 'context'",
        t=known,
    ) == [["kb-refund", KB[0]["content"], "derived"]]
    assert verdict(known) == {
        "generation": 2,
        "trace_sufficiency": ("ok", 1.0, []),
        "candidate_recall": ("ok", 1.0, None),  # the gold quote is found in the text the KB gave
    }
    history = srv.scalar(
        "SELECT count(*) FROM evaluation_history WHERE trace_id = $t AND generation = 1", t=known
    )
    assert history > 0  # the verdicts made without the text are kept apart
    # a document the registry does not know is left as sent, and its trace is not evaluated again
    assert docs(unknown) == [["not-in-the-kb", None, None]]
    assert verdict(unknown) == before
