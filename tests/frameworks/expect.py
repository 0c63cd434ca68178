"""What every framework test asserts about the scenario's three questions (see ``apps/scenario.py``)."""

from __future__ import annotations

import os

from tests.frameworks import renamed
from tests.frameworks.apps import scenario
from tests.frameworks.conftest import TWINS, Run, dump, wait_evaluated
from tests.frameworks.renamed import send_twin

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
    check_twin(run)


def check_twin(run: Run) -> None:
    """The run's spans with their keys renamed, sent to the module's twin server
    (``tests.frameworks.renamed``): each root cause the original's, or ``insufficient_trace``."""
    twin = TWINS.get(run.server.url)
    if twin is None:
        return
    for key, trace_id in run.trace_ids.items():
        send_twin(twin, run.rows(renamed.SPANS, t=trace_id), scenario.CASE_OF[key])
    wait_evaluated(twin, list(run.trace_ids.values()))
    blind = Run(twin, run.trace_ids)
    test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
    for key in scenario.QUESTIONS:
        original, _ = run.root_cause(key)
        got, case = blind.root_cause(key)
        missing = blind.rows(
            "SELECT missing_fields FROM attribution WHERE trace_id = $t", t=run.trace_ids[key]
        )
        renamed.report({
            "test": test, "question": key, "original": original, "twin": got,
            "missing": missing[0]["missing_fields"] if missing else None,
        })  # fmt: skip
        assert case == scenario.CASE_OF[key], dump(blind, key)
        assert got in (original, "insufficient_trace"), (
            f"renamed keys: {got} where the original is {original}\n{dump(blind, key)}"
        )
