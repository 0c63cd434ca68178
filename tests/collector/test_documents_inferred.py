"""Document fields under names nobody listed (``collector.normalize.documents``): a list of objects is
read for its text, id and score by what the values look like across the items, whatever the keys
are called; records, content blocks and search listings stay what they are."""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from collector.normalize import doclists, documents, normalize_span
from collector.normalize.docvalues import json_docs, tool_docs

DOCS = [
    ("refund-window", "Refunds are accepted within 30 days of delivery for unused items.", 0.91),
    ("warranty-term", "Hardware carries a two year warranty covering manufacturing defects.", 0.52),
    ("shop-hours", "Opening times at Alexanderplatz: 9 until 19, Monday to Saturday.", 0.2),
]
EXPECTED = [(d, t, s) for d, t, s in DOCS]

# keys a reader may meet that name none of the usual fields and no search-listing field
_RESERVED = {
    *documents.TEXT_FIELDS,
    *documents.ID_FIELDS,
    *documents.SCORE_FIELDS,
    *documents.META_FIELDS,
    *documents.LISTING_ID_FIELDS,
    *documents.LISTING_URL_FIELDS,
    *documents.LISTING_TITLE_FIELDS,
    *documents.LISTING_SNIPPET_FIELDS,
}
_names = st.text(string.ascii_lowercase + "_", min_size=2, max_size=12).filter(
    lambda k: k not in _RESERVED and k.strip("_") != ""
)


def _items(text_key: str, id_key: str, score_key: str) -> list[dict[str, Any]]:
    return [{id_key: d, text_key: t, score_key: s} for d, t, s in DOCS]


def _read(docs: list[Any] | None) -> list[tuple[Any, Any, Any]]:
    return [(d.doc_id, d.content, d.score) for d in docs or []]


@given(text_key=_names, id_stem=_names, score_stem=_names)
def test_renamed_fields_read_as_the_usual_ones(text_key: str, id_stem: str, score_stem: str) -> None:
    """The text is the passage every item holds, the id the distinct identifier whose name says it
    identifies, the score the field whose name says it scores: the same documents as under the usual
    names, wherever the list sits and whatever wraps it."""
    id_key, score_key = f"{id_stem}_id", f"{score_stem}Score"
    if len({text_key, id_key, score_key}) < 3:
        return
    items = _items(text_key, id_key, score_key)
    assert _read(doclists.documents_in(items, "candidate", ())) == EXPECTED
    wrapped = json.dumps({"response": json.dumps({"hits": items, "took": 3})})
    assert _read(doclists.documents_in(wrapped, "candidate", ())) == EXPECTED
    assert _read(json_docs(items, "candidate", ())) == EXPECTED
    assert _read(tool_docs(json.dumps(items), ())) == EXPECTED


@given(text_key=_names, other=_names)
def test_the_id_is_the_one_distinct_identifier_when_no_name_says_so(text_key: str, other: str) -> None:
    if text_key == other:
        return
    items = [{other: d, text_key: t} for d, t, _ in DOCS]
    assert [d.doc_id for d in doclists.documents_in(items, "candidate", ()) or []] == [d for d, _, _ in DOCS]


def test_the_passage_is_the_longest_wordy_field() -> None:
    items = [
        {"uid": d, "heading": f"Section {i}", "snippet": t, "lang": "en"} for i, (d, t, _) in enumerate(DOCS)
    ]
    docs = doclists.documents_in(items, "candidate", ())
    assert [(d.doc_id, d.content) for d in docs or []] == [(d, t) for d, t, _ in DOCS]


def test_chinese_passages_are_text_without_spaces() -> None:
    items = [
        {"ref": "kb-1", "snippet": "退货须在收货后三十天内提出申请，商品需未使用。"},
        {"ref": "kb-2", "snippet": "硬件享有两年保修，覆盖制造缺陷。"},
    ]
    docs = doclists.documents_in(items, "candidate", ())
    assert [d.doc_id for d in docs or []] == ["kb-1", "kb-2"]


def test_records_content_blocks_and_listings_are_no_documents() -> None:
    records = [
        {"id": 1, "name": "Alice Smith", "team": "Support desk"},
        {"id": 2, "name": "Bob Jones", "team": "Sales"},
    ]
    assert doclists.documents_in(records, "candidate", ()) is None
    assert tool_docs(json.dumps(records), ()) == []
    blocks = [{"type": "text", "text": "The refund window is thirty days from delivery, for unused items."}]
    assert doclists.documents_in(blocks, "candidate", ()) is None
    listing = [
        {"id": f"r{i}", "title": "A page", "snippet": t, "url": f"https://example.org/{i}"}
        for i, (_, t, _) in enumerate(DOCS)
    ]
    assert doclists.documents_in(listing, "candidate", ()) is None
    assert tool_docs(json.dumps(listing), ()) == []
    # a shared value is no identity (a source file two chunks come from)
    shared = [{"source": "policy.md", "passage_text": t, "similarity": s} for _, t, s in DOCS]
    docs = doclists.documents_in(shared, "candidate", ())
    assert [(d.doc_id, d.score) for d in docs or []] == [(None, s) for _, _, s in DOCS]


def test_a_claimed_span_s_documents_under_an_unknown_key() -> None:
    """A chain that recorded no output but a vendor attribute of hits retrieved them; one that
    recorded an answer keeps it and is no retrieval."""
    hits = json.dumps({"hits": [{"uid": d, "snippet": t, "relevance": s} for d, t, s in DOCS]})
    step = normalize_span(
        {"openinference.span.kind": "CHAIN", "input.value": "How long do refunds take?", "search.hits": hits}
    )
    assert step.step_type == "retrieval"
    assert _read(step.docs) == EXPECTED
    assert step.query_text == "How long do refunds take?"
    assert step.provenance is not None and step.provenance["docs"] == "shape:documents@search.hits"
    answered = normalize_span(
        {
            "openinference.span.kind": "CHAIN",
            "input.value": "How long do refunds take?",
            "output.value": "Thirty days.",
            "search.hits": hits,
        }
    )
    assert answered.step_type == "chain" and answered.docs == []
    # documents a step was given are none it retrieved
    given_only = normalize_span(
        {"openinference.span.kind": "CHAIN", "input.value": "q", "input.documents": hits}
    )
    assert given_only.docs == []


def test_relayed_messages_and_wrappers_of_documents_are_no_documents() -> None:
    """What an agent runtime relays (a message naming its speaker, an event typed so) is a message,
    and an item whose text is itself JSON wraps the documents inside it; a lone content block
    ``[{"text": ...}]`` is text. The documents inside a relayed tool result are still found."""
    task = [{"id": "7f3c", "source": "user", "content": "How many days after delivery are refunds accepted?",
             "type": "TextMessage"}]  # fmt: skip
    assert doclists.documents_in(task, "candidate", ()) is None
    assert tool_docs(json.dumps(task), ()) == []
    inner = json.dumps({"documents": [{"id": d, "content": t, "score": s} for d, t, s in DOCS]})
    relayed = {"message": {"source": "agent", "type": "ToolCallExecutionEvent",
                           "content": [{"content": inner, "call_id": "call_1", "name": "search_kb"}]}}  # fmt: skip
    assert _read(doclists.documents_in(relayed, "candidate", ())) == EXPECTED
    assert (
        tool_docs(json.dumps([{"text": "The inner agent says refunds take thirty days from delivery."}]), ())
        == []
    )
    # a document whose text is JSON (a retrieved config file) is a document
    configs = [
        {"id": f"cfg-{i}", "content": json.dumps({"timeout": i, "retries": 3}), "score": 0.9} for i in (1, 2)
    ]
    assert [d.doc_id for d in doclists.documents_in(configs, "candidate", ()) or []] == ["cfg-1", "cfg-2"]
    assert [d.doc_id for d in tool_docs(json.dumps(configs), ())] == ["cfg-1", "cfg-2"]
    # documents a user uploaded, their origin named ``source``, are still documents
    uploaded = [{"id": d, "content": t, "score": s, "source": "user"} for d, t, s in DOCS]
    assert _read(doclists.documents_in(uploaded, "candidate", ())) == EXPECTED
    assert _read(tool_docs(json.dumps(uploaded), ())) == EXPECTED
