"""A document whose score sits only in its metadata (LangChain's ``Document`` has no score field:
vector stores write ``metadata["score"]``, a reranking compressor ``metadata["relevance_score"]``)
has that score, whichever reader or rule read the document; a score of its own comes first."""

from __future__ import annotations

import json

from collector.normalize import normalize_span
from collector.normalize.docvalues import metadata_score

LC_DOCS = [
    {"page_content": "Refunds within 30 days.", "metadata": {"doc_id": "refund", "relevance_score": 0.91}},
    {"page_content": "Shipping is free.", "metadata": {"doc_id": "shipping", "score": "0.5"}},
    {"page_content": "Gift cards never expire.", "metadata": {"doc_id": "gift", "score": "high"}},
]


def scores(attrs: dict[str, object]) -> list[tuple[str | None, float | None]]:
    return [(d.doc_id, d.score) for d in normalize_span(attrs).docs]


def test_the_metadata_score_rule() -> None:
    assert metadata_score({"relevance_score": 0.9, "score": 0.1}) == 0.9  # the reranker's first
    assert metadata_score({"score": 3}) == 3.0
    assert metadata_score({"score": True}) is None and metadata_score({"score": "n/a"}) is None
    assert metadata_score({"rank": 1}) is None and metadata_score(None) is None


def test_openinference_flattened_documents() -> None:
    attrs: dict[str, object] = {"openinference.span.kind": "RETRIEVER", "input.value": "refund?"}
    for i, d in enumerate(LC_DOCS):
        attrs[f"retrieval.documents.{i}.document.content"] = d["page_content"]
        attrs[f"retrieval.documents.{i}.document.metadata"] = json.dumps(d["metadata"])
    assert scores(attrs) == [("refund", 0.91), ("shipping", 0.5), ("gift", None)]
    attrs["retrieval.documents.0.document.score"] = 0.2  # its own score wins
    assert scores(attrs)[0] == ("refund", 0.2)


def test_serialized_langchain_documents_by_shape_and_by_reader() -> None:
    serialized = [
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "document", "Document"], "kwargs": d}
        for d in LC_DOCS
    ]
    expected = [("refund", 0.91), ("shipping", 0.5), ("gift", None)]
    # OpenLLMetry's LangChain retriever: the documents only in its output
    traceloop = {
        "traceloop.span.kind": "task",
        "gen_ai.operation.name": "vector_db_retrieve",
        "traceloop.entity.input": json.dumps({"inputs": {"query": "refund?"}}),
        "traceloop.entity.output": json.dumps({"outputs": {"documents": serialized}}),
    }
    assert scores(traceloop) == expected
    # no convention: the structural layer, in an unnamed key
    assert scores({"acme.hits": json.dumps(serialized), "acme.query": "refund?"}) == expected


def test_python_repr_of_langchain_documents() -> None:
    """A tool message recorded with ``str()``: its artifact's documents, parsed, never run."""
    docs = ", ".join(
        f"Document(metadata={d['metadata']!r}, page_content={d['page_content']!r})" for d in LC_DOCS[:2]
    )
    result = f"content='Refunds within 30 days.' name='search' tool_call_id='c1' artifact=[{docs}]"
    attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "search",
        "gen_ai.tool.call.result": result,
    }
    assert scores(attrs) == [("refund", 0.91), ("shipping", 0.5)]
