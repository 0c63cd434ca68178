"""The references operations (``collector.store.references``) on every backend: gold cases and
knowledge-base documents loaded, read back, the traces they join, and textless documents refilled."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from collector.store import references, settling, verdicts
from evaluators.gold import GoldCase, KBDocument, case_row, kb_row
from evaluators.text import normalize
from tests.store.contract.conftest import requires
from tests.store.contract.stored import T0, add_trace, evaluated, needs_tables, rows

TABLES = ("gold_cases", "kb_documents", "kb_changes", "traces", "step_documents")


def _case(case_id: str, query: str) -> dict[str, object]:
    return case_row(GoldCase.model_validate({"case_id": case_id, "query": query}), "set", T0)


def _doc(doc_id: str, content: str, version: str = "1") -> dict[str, object]:
    return kb_row(KBDocument.model_validate({"doc_id": doc_id, "content": content, "version": version}), T0)


def test_a_reloaded_case_replaces_the_stored_one_and_the_stamp_changes(backend: Any) -> None:
    needs_tables(backend, "references.upsert_gold", *TABLES)
    con = backend.cursor()
    empty = references.stamp(con)
    references.upsert_gold(backend.con, [_case("c1", "How long is the refund window?"), _case("c2", "Ship?")])
    loaded = references.stamp(con)
    assert loaded != empty and loaded[0] == 2
    references.upsert_gold(backend.con, [_case("c1", "How long is the return window?")])
    assert sorted((r[0], r[2]) for r in references.gold_rows(con)) == [
        ("c1", "How long is the return window?"),
        ("c2", "Ship?"),
    ]
    assert dict((r[0], r[1]) for r in references.gold_rows(con))["c1"] == normalize(
        "How long is the return window?"
    )
    con.close()


def test_cases_join_settled_traces_by_id_or_by_normalized_query(backend: Any) -> None:
    needs_tables(backend, "references.traces_for_cases", *TABLES)
    references.upsert_gold(backend.con, [_case("c1", "How long is the refund window?")])
    add_trace(backend, "a" * 32, case_id="c1", query="other words")
    add_trace(backend, "b" * 32, query="how long is the REFUND window")  # joined by its normalized query
    add_trace(backend, "c" * 32, case_id="c1", settled=False)
    con = backend.cursor()
    assert sorted(references.traces_for_cases(con, ["c1"])) == ["a" * 32, "b" * 32]
    assert references.traces_for_cases(con, ["nope"]) == []
    con.close()


def test_a_kb_reload_records_its_changes(backend: Any) -> None:
    needs_tables(backend, "references.upsert_kb", *TABLES)
    assert references.upsert_kb(backend.con, [_doc("d1", "Refunds within 30 days.")]) == []
    assert rows(backend, "SELECT count(*) FROM kb_changes") == [(0,)]  # a first load changes nothing
    references.upsert_kb(
        backend.con, [_doc("d1", "Refunds within 14 days.", "2"), _doc("d2", "Ships in 2 days.")]
    )
    assert rows(
        backend, "SELECT doc_id, change, old_version, new_version FROM kb_changes ORDER BY doc_id"
    ) == [
        ("d1", "content,version", "1", "2"),
        ("d2", "added", None, "1"),
    ]
    con = backend.cursor()
    assert sorted((r[0], r[7]) for r in references.kb_rows(con)) == [
        ("d1", "Refunds within 14 days."),
        ("d2", "Ships in 2 days."),
    ]
    con.close()


def test_loading_documents_fills_the_textless_documents_of_settled_traces_and_reassembles_them(
    backend: Any,
) -> None:
    requires(backend, "refill_textless")
    needs_tables(backend, "references.upsert_kb (refill_textless)", *TABLES)
    add_trace(backend, "a" * 32, documents=[("d1", None), ("d2", ""), ("d3", "own text")])
    add_trace(backend, "b" * 32, documents=[("d9", None)])
    add_trace(backend, "c" * 32, settled=False, at=T0 + timedelta(minutes=1), documents=[("d1", None)])
    evaluated(backend)
    refilled = references.upsert_kb(
        backend.con,
        [_doc("d1", "Refunds within 30 days."), _doc("d2", "Ships in 2 days."), _doc("d3", "kb text")],
    )
    assert refilled == ["a" * 32]
    assert rows(
        backend,
        "SELECT trace_id, doc_id, content, content_source FROM step_documents ORDER BY trace_id, doc_id",
    ) == [
        ("a" * 32, "d1", "Refunds within 30 days.", "registry"),
        ("a" * 32, "d2", "Ships in 2 days.", "registry"),
        ("a" * 32, "d3", "own text", None),  # it had text: left as sent
        ("b" * 32, "d9", None, None),  # not in the registry
        ("c" * 32, "d1", None, None),  # not settled: it takes the text when it settles
    ]
    # the refilled trace waits to be assembled again (its derived context may now find the
    # documents), and to be evaluated once it is; the others are as they were
    assert rows(
        backend,
        "SELECT trace_id, settled_at IS NULL, assembled_spans IS NULL, evaluated_spans IS NULL "
        "FROM traces ORDER BY trace_id",
    ) == [("a" * 32, False, True, True), ("b" * 32, False, False, False), ("c" * 32, True, True, True)]
    assert verdicts.pending(backend.cursor(), 10) == []  # not evaluated before it is assembled again
    # a forced settle round (the CLI's, or a test draining the server) takes it up again too, as the
    # loop's round does: a marked trace is waiting, not assembled
    forced = sorted(w.trace_id for w in settling.waiting_traces(backend.cursor(), 10))
    assert forced == ["a" * 32, "c" * 32]
