"""The surfaced and opened stages read from tool steps (``collector.settling.search_stages``)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from collector.settling.assemble import StepView
from collector.settling.search_stages import argument_names, opened_text, search_results, search_stages

T0 = datetime(2026, 9, 1, 10, 0, 0)


def tool(span: str, name: str, arguments: Any, result: str, at: int, status: str | None = None) -> StepView:
    return StepView(
        span, "root", "tool", T0 + timedelta(seconds=at), T0 + timedelta(seconds=at, milliseconds=500),
        None, json.dumps(arguments) if not isinstance(arguments, str) else arguments, result, None, False,
        tool_name=name, tool_arguments=json.dumps(arguments) if not isinstance(arguments, str) else arguments,
        tool_result=result, status_code=status,
    )  # fmt: skip


LISTED = json.dumps(
    {
        "results": [
            {"id": "a", "url": "https://x.test/a", "title": "A", "snippet": "about a"},
            {"url": "https://x.test/b/", "title": "B", "description": "about b"},
        ]
    }
)


def test_search_results_shapes() -> None:
    assert [(r.rank, r.key, r.title, r.snippet) for r in search_results(LISTED)] == [
        (0, "a", "A", "about a"),
        (1, "https://x.test/b/", "B", "about b"),
    ]
    assert [r.key for r in search_results(json.dumps([{"link": "https://y.test", "title": "Y"}]))] == [
        "https://y.test"
    ]
    # retrieved documents with their text are no search results (the normalizer's candidates)
    assert search_results(json.dumps([{"id": "a", "title": "A", "page_content": "the text"}])) == []
    for not_results in ('["Paris", "Rome"]', '[{"city": "Paris"}]', "plain text", "{}", "[]", "", None,
                        json.dumps([{"id": "a"}]), json.dumps([{"title": "no id"}])):  # fmt: skip
        assert search_results(not_results) == [], not_results


def test_opened_text_and_arguments() -> None:
    assert opened_text("Full text here.") == "Full text here."
    assert opened_text(json.dumps({"url": "u", "content": "The body."})) == "The body."
    assert opened_text(json.dumps(["a", "b"])) is None and opened_text("  ") is None
    assert argument_names(json.dumps({"url": "https://x.test/b/", "n": 2})) == {"https://x.test/b", "2"}
    assert argument_names("https://x.test/a") == {"https://x.test/a"}


def test_stages_link_opened_results() -> None:
    steps = [
        tool("fetch-early", "fetch", {"url": "https://x.test/a"}, "too early", 0),
        tool("search", "web_search", {"query": "q"}, LISTED, 1),
        tool("fetch-b", "fetch", {"url": "https://x.test/b"}, "Text of b.", 2),  # url without the slash
        tool("open-a", "open", {"id": "a"}, json.dumps({"content": "Text of a."}), 3),
        tool("fetch-failed", "fetch", {"id": "a"}, "404", 4, status="ERROR"),
        tool("unrelated", "clock", {}, "2026-09-01T10:00:00Z", 5),
    ]
    rows = search_stages(steps)
    assert [(d.span_id, d.stage, d.position, d.doc_id, d.content, d.source) for d in rows] == [
        ("search", "surfaced", 0, "a", None, "derived"),
        ("search", "surfaced", 1, "https://x.test/b/", None, "derived"),
        ("fetch-b", "opened", 0, "https://x.test/b/", "Text of b.", "derived"),
        ("open-a", "opened", 0, "a", "Text of a.", "derived"),
    ]
    meta = json.loads(rows[3].metadata or "{}")
    assert meta["surfaced_span_id"] == "search" and meta["surfaced_rank"] == 1


@given(st.text(max_size=300))
def test_any_tool_output_is_read_without_error(text: str) -> None:
    search_results(text)
    opened_text(text)
    argument_names(text)
    search_stages([tool("s", "web_search", text, text, 0), tool("f", "fetch", text, text, 1)])
