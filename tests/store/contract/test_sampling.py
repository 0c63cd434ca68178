"""What the sampler reads (``collector.store.sampling``) on every backend."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from collector.store import sampling
from tests.store.contract.stored import T0, add_trace, is_lake, needs_tables


def test_fact_rows_say_which_traces_retrieved_nothing_were_flagged_or_got_negative_feedback(
    backend: Any,
) -> None:
    needs_tables(
        backend, "sampling.fact_rows", "traces", "steps", "step_documents", "evaluations", "feedback"
    )
    add_trace(backend, "a" * 32, documents=[("d1", "text")])
    add_trace(backend, "b" * 32)  # a retrieval that returned nothing
    con = backend.con
    verdict_table = "evaluation_rows" if is_lake(backend) else "evaluations"  # (a view on a lake)
    for t, at in (("a" * 32, T0), ("a" * 32, T0 + timedelta(hours=2))):
        con.execute(
            f"INSERT INTO {verdict_table} (trace_id, evaluator, evaluator_version, tier, metric, numerator, status, "
            "generation, evaluated_at) VALUES ($t, 'freshness', '1', 'cheap', 'stale_context', 1, 'ok', 1, $at)",
            {"t": t, "at": at},
        )
    con.execute(
        "INSERT INTO feedback (feedback_id, trace_id, kind, negative, annotator_kind, source, created_at) "
        "VALUES ('f1', $t, 'thumbs', true, NULL, 'api', $at), ('f2', $t2, 'thumbs', true, 'LLM', 'api', $at)",
        {"t": "b" * 32, "t2": "a" * 32, "at": T0},
    )
    cur = backend.cursor()
    rows = sampling.fact_rows(cur, ["a" * 32, "b" * 32], ["stale_context"], ["HUMAN"], True, (T0, T0))
    assert sorted(r[0] for r in rows.traces) == ["a" * 32, "b" * 32]
    assert rows.empty_retrieval == {"b" * 32}
    assert rows.flagged == {"a" * 32: {"stale_context"}}
    assert rows.negative == {"b" * 32}  # no kind counts as HUMAN; the LLM's is not asked for
    # only the verdicts written since: the round's own
    later = sampling.fact_rows(
        cur, ["a" * 32], ["stale_context"], ["HUMAN"], False, None, T0 + timedelta(hours=3)
    )
    assert later.flagged == {}
    cur.close()
