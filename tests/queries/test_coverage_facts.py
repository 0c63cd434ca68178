"""``coverage`` counts each trace's fields from the ``trace_coverage`` view (on a file store, facts kept per
trace) and looks the registry up itself; it must give what its former form, which read every step and
document (``bench/reference/coverage.sql``), gives, on the cases only the registry decides: candidates
without text whose ids the registry has (by doc id or by chunk id) or has not, a candidate with no id at
all, and ``[doc-id]`` markers naming a document of the trace (by id or by a metadata key), one of the
registry, or nothing. A registry loaded after the facts were computed counts at once. Each test runs
with every write flushing its changed traces' facts (from the tables, or from their rows kept once for
the flush) and with none flushing (the view computes them): ``stored.FLUSH_MODES``."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bench.same_results import references
from collector.ingest.span_rows import flatten
from collector.normalize import DEFAULT_SOURCE_KEYS
from collector.settling.settle import Settler
from collector.store import Store
from collector.store import references as refs
from collector.store.schema import batch_to_arrow
from evaluators.gold import KBDocument, kb_row
from queries import all_queries
from tests.collector.otlp_build import new_span_id, request, span
from tests.store.contract.build import ns
from tests.store.contract.stored import FLUSH_MODES, T0, rows, set_flushing


@pytest.fixture(params=FLUSH_MODES)
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    set_flushing(monkeypatch, str(request.param))
    s = Store(tmp_path / "coverage.duckdb")
    yield s
    s.close()


def _docs(docs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, d in enumerate(docs):
        for k, v in d.items():
            out[f"retrieval.documents.{i}.document.{k}"] = json.dumps(v) if k == "metadata" else v
    return out


TRACES: dict[str, tuple[str, list[dict[str, Any]]]] = {
    # cites its own document by id; every candidate has text
    "a" * 32: ("Refunds take 30 days [kb-1].", [{"id": "kb-1", "content": "Refunds take 30 days."}]),
    # candidates without text, found in the registry by doc id; a marker only the registry knows
    "b" * 32: ("See [kb-9].", [{"id": "kb-2"}, {"id": "kb-3"}]),
    # one candidate's id the registry lacks; a marker naming nothing
    "c" * 32: ("Maybe [nothing-here].", [{"id": "kb-2"}, {"id": "kb-404"}]),
    # a candidate with neither id nor text; a marker naming a document of the trace by its metadata
    "d" * 32: (
        "Per [manual.pdf; kb-9]",
        [{"score": 0.5}, {"id": "kb-5", "content": "x", "metadata": {"source": "manual.pdf"}}],
    ),
    # no retrieval output: retrieval step, empty; no marker
    "e" * 32: ("I do not know.", []),
}


def _write(store: Any) -> None:
    con = store.cursor()
    for tid_hex, (answer, docs) in TRACES.items():
        tid = bytes.fromhex(tid_hex)
        root = new_span_id()
        spans = [
            span(tid, span_id=root, name="query", attrs={
                "openinference.span.kind": "CHAIN", "input.value": "refund?", "output.value": answer}),
            span(tid, parent=root, name="retrieve", attrs={"openinference.span.kind": "RETRIEVER", **_docs(docs)}),
        ]  # fmt: skip
        for s in spans:
            s.start_time_unix_nano, s.end_time_unix_nano = ns(T0), ns(T0) + 1_000_000
        batch = batch_to_arrow(
            flatten(request(spans, "shop"), source_keys=DEFAULT_SOURCE_KEYS, received_at=T0)
        )
        store.write_spans(con, batch)
    settler = Settler(store.cursor(), lambda job: job(con), settle_seconds=2, max_wait_seconds=60)
    assert settler.run_once(now=T0 + timedelta(seconds=3)) == len(TRACES)


def _same(store: Any) -> dict[str, tuple[int, int]]:
    """The bundled coverage equals its former form row for row; returns (carried, denominator) by field."""
    bundled = rows(
        store, f"SELECT * FROM ({all_queries()['coverage'].sql}) ORDER BY ALL", service=None, since=None
    )
    former = rows(
        store, f"SELECT * FROM ({references()['coverage'].sql}) ORDER BY ALL", service=None, since=None
    )
    assert bundled == former
    view = rows(store, "SELECT * FROM trace_coverage ORDER BY trace_id")
    assert view == rows(store, f"SELECT * FROM ({all_queries()['trace_coverage'].sql}) ORDER BY trace_id")
    assert len(view) == len(TRACES)
    kept = rows(store, "SELECT count(*) FROM trace_coverage_facts")[0][0]
    changed = rows(store, "SELECT count(DISTINCT trace_id) FROM facts_changed")[0][0]
    assert len(TRACES) in (kept, changed)  # kept as facts, or computed when read
    return {r[3]: (r[5], r[6]) for r in bundled}


def test_coverage_counts_what_the_registry_supplies_as_its_former_form_did(store: Any) -> None:
    _write(store)
    fields = _same(store)
    assert fields["candidate_text"] == (
        1,
        4,
    )  # a only: b, c lack text the registry has not got yet; d has no id
    assert fields["candidate_ids"] == (3, 4)
    assert fields["citations"] == (2, 5)  # a by its id, d by its metadata
    assert fields["retrieval"] == (5, 5)

    # the registry, loaded after the traces: b's candidates and its marker now resolve; c's kb-404 does not
    docs = {"kb-2": "Refund window.", "kb-3": "Returns.", "kb-9": ""}
    loaded = T0 + timedelta(hours=1)
    refs.upsert_kb(store.cursor(), [kb_row(KBDocument(doc_id=k, content=v), loaded) for k, v in docs.items()])
    fields = _same(store)
    assert fields["candidate_text"] == (2, 4)
    assert fields["citations"] == (3, 5)
    # the load gave the stored documents the registry's text, and the kept facts follow (kb-404 has none)
    untexted = dict(rows(store, "SELECT trace_id, untexted_candidates FROM trace_coverage"))
    assert untexted["c" * 32] == [{"doc_id": "kb-404", "chunk_id": "kb-404"}]
    assert untexted["b" * 32] == untexted["a" * 32] == []
    assert untexted["d" * 32] == [{"doc_id": None, "chunk_id": None}]
