"""What every framework test asserts about the scenario's three questions (see ``apps/scenario.py``)."""

from __future__ import annotations

from tests.frameworks.apps import scenario
from tests.frameworks.conftest import Run, dump

# the documents the app retrieves per question, in rank order, and what the budget keeps
CANDIDATES = {
    "ok": ["refund-window"],
    "dropped": ["warranty-claims", "warranty-shipping", "warranty-term"],
    "miss": ["berlin-delivery", "berlin-pickup", "warranty-claims"],
}
# the same from the apps' keyword ranking (``scenario.words``), whose ties keep the knowledge base's order
KEYWORD_CANDIDATES = {**CANDIDATES, "miss": ["berlin-pickup", "berlin-delivery", "warranty-claims"]}
ROOT_CAUSE = {"ok": "ok", "dropped": "dropped_before_context", "miss": "candidate_miss"}
CONTENT = {d["doc_id"]: d["content"] for d in scenario.KB}


def check_question(run: Run, key: str, candidates: list[str] | None = None, exact: bool = True) -> None:
    """Query, candidates with ids, final context, answer and root cause of one question.

    ``candidates``: the expected candidate ids in rank order (the scenario's BM25 order by default);
    ``exact=False`` checks the set only (retrievers whose ties order differently).
    """
    expected = candidates if candidates is not None else CANDIDATES[key]
    info = dump(run, key)
    trace = run.trace(key)
    assert trace["query_text"] == scenario.QUESTIONS[key], info
    got = list(dict.fromkeys(run.doc_ids(key, "candidate")))  # nested retrievals report the same nodes
    if key == "ok":  # retrievers differ in whether they return documents sharing no word with the query
        assert got[:1] == expected[:1], info
    elif exact:
        assert got == expected, info
    else:
        assert sorted(got) == sorted(expected), info
    # the budget keeps the first candidate only; the context is what the answering prompt held
    context = run.doc_ids(key, "context")
    assert context == got[: scenario.BUDGET], info
    # the model answered with the sentence of the prompt closest to the question: the kept document
    assert trace["answer_text"] == CONTENT[context[0]], info
    root, case = run.root_cause(key)
    assert case == scenario.CASE_OF[key], info
    assert root == ROOT_CAUSE[key], info


def check_all(run: Run, candidates: dict[str, list[str]] | None = None, exact: bool = True) -> None:
    for key in scenario.QUESTIONS:
        check_question(run, key, (candidates or {}).get(key), exact)
