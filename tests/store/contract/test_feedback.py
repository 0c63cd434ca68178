"""The feedback operations (``collector.store.feedback``) on every backend."""

from __future__ import annotations

from typing import Any

from evaluators.service.feedback import to_table
from tests.store.contract.stored import T0, add_trace, is_lake, needs_tables, rows


def _row(feedback_id: str, trace_id: str, negative: bool) -> dict[str, object]:
    return {
        "feedback_id": feedback_id, "trace_id": trace_id, "span_id": None, "kind": "thumbs", "name": "user",
        "value": 0.0 if negative else 1.0, "label": None, "comment": None, "user_id": "u1",
        "annotator_kind": "HUMAN", "source": "api", "source_trace_id": None, "source_span_id": None,
        "identifier": None, "metadata": None, "negative": negative, "created_at": T0,
    }  # fmt: skip


def test_feedback_is_stored_once_and_negative_feedback_requeues_an_evaluated_trace(backend: Any) -> None:
    needs_tables(backend, "feedback.insert", "feedback", "traces")
    from collector.store import feedback

    add_trace(backend, "a" * 32)
    add_trace(backend, "b" * 32)
    if is_lake(backend):  # (traces is a view there: its evaluation state is appended)
        backend.con.execute(
            "INSERT INTO trace_evals (trace_id, event, evaluated_spans) VALUES ($t, 'loaded', 3)",
            {"t": "a" * 32},
        )
    else:
        backend.con.execute(
            "UPDATE traces SET evaluated_spans = assembled_spans WHERE trace_id = $t", {"t": "a" * 32}
        )
    table = to_table([_row("f1", "a" * 32, True), _row("f2", "b" * 32, True), _row("f3", "a" * 32, False)])
    assert feedback.insert(backend.con, table) == (3, ["a" * 32])  # b was never evaluated: nothing to redo
    assert feedback.insert(backend.con, table) == (0, [])  # the same ids again add nothing
    assert rows(backend, "SELECT count(*) FROM feedback") == [(3,)]
    con = backend.cursor()
    assert feedback.trace_known(con, "a" * 32) and not feedback.trace_known(con, "f" * 32)
    result = feedback.of_trace(con, "a" * 32)
    assert [r[result.columns.index("feedback_id")] for r in result.rows] == ["f1", "f3"]
    con.close()


def test_annotated_spans_are_those_marked_or_carrying_a_marker(backend: Any) -> None:
    needs_tables(backend, "feedback.annotated_spans", "spans", "traces")
    from collector.ingest.span_rows import FEEDBACK_KEYS
    from collector.store import feedback

    add_trace(backend, "a" * 32, spans=1)  # (on a lake, its root span: the trace's row comes from its spans)
    key = sorted(FEEDBACK_KEYS)[0]
    cols = "trace_id, span_id, name, start_time, end_time, received_at, attributes, feedback"
    for span_id, attrs, marked in (("s1", "{}", True), ("s2", f'{{"{key}": 1}}', None), ("s3", "{}", None)):
        backend.con.execute(
            f"INSERT INTO {'span_rows' if is_lake(backend) else 'spans'} ({cols}) VALUES ($t, $s, 'x', $at, $at, $at, $a, $m)",
            {"t": "a" * 32, "s": span_id, "at": T0, "a": attrs, "m": marked},
        )
    con = backend.cursor()
    found = sorted(r[1] for r in feedback.annotated_spans(con, ["a" * 32], (T0, T0)))
    assert found == ["s1", "s2"]
    con.close()
