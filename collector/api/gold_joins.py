"""Why traces joined no gold case (``ragfault doctor``, ``GET /api/v1/coverage``, ``"gold_joins"``).

A trace joins a gold case by the case id it names (``ragfault.case_id``) or by its question, the
normalized text equal to a case's. A trace that joins none gets no ``attribution`` row (it is live
traffic: ``live_attribution`` speaks for it), which is right for production traffic and a silent gap
for a gold-set replay. This report says, per service, how many of the recent traces joined, how many
recorded no question at all (the framework records none where ragfault can read it: the coverage
section above names the field), and how many recorded one no case asks; for those, it names the
traces whose recorded question holds a case's question inside a longer text (a framework that
records its whole task prompt, ``"Current Task: <question> ..."``), with the fix.
"""

from __future__ import annotations

from typing import Any

from collector.store.doctor import gold_joins

MAX_TRACES = 5000  # recent settled traces looked at
MAX_EXAMPLES = 5
FIX_INSIDE = (
    "the recorded question is a longer text holding the case's question: name the case on the root span "
    "(ragfault.case_id), or record the question alone as the root span's input"
)
FIX_NONE = (
    "no question was found: record the user's question as the root span's input (or a user message "
    "of the first model call), or name the case (ragfault.case_id)"
)


def report(cursor: Any, service: str | None = None, since: Any = None) -> dict[str, Any] | None:
    """The section (None when there are no gold cases, or every trace looked at joined one)."""
    counts, misses = gold_joins(cursor, service, since, MAX_TRACES, MAX_EXAMPLES)
    if not counts or all(c["joined"] == c["traces"] for c in counts):
        return None
    return {
        "traces_looked_at": MAX_TRACES,
        "services": [{k: (int(v) if k != "service_name" else v) for k, v in c.items()} for c in counts],
        "examples": [
            {
                "trace_id": m["trace_id"],
                "service_name": m["service_name"],
                "question": _short(m["query_text"]),
                "holds_case": m["inside_case"],
                "case_question": m["inside_query"],
                "fix": FIX_INSIDE if m["inside_case"] else None,
            }
            for m in misses
        ],
        "fix_no_question": FIX_NONE,
    }


def _short(text: str | None, n: int = 120) -> str | None:
    if text is None or len(text) <= n:
        return text
    return text[:n] + "…"


def render(section: dict[str, Any] | None) -> list[str]:
    """The section's lines (``ragfault doctor``'s text output)."""
    if not section:
        return []
    out = [
        f"== gold cases: which traces joined one (the last {section['traces_looked_at']} traces at most) =="
    ]
    for s in section["services"]:
        out.append(
            f"  {s['service_name']}: {s['joined']} of {s['traces']} joined a case; "
            f"{s['no_question']} recorded no question; {s['unmatched']} recorded one no case asks"
        )
    if any(s["no_question"] for s in section["services"]):
        out.append(f"  - no question: {section['fix_no_question']}")
    for e in section["examples"]:
        if e["holds_case"]:
            out.append(
                f"  - trace {e['trace_id']} ({e['service_name']}): {e['question']!r} holds the question of case "
                f"{e['holds_case']} ({e['case_question']!r}): {e['fix']}"
            )
        else:
            out.append(
                f"  - trace {e['trace_id']} ({e['service_name']}): {e['question']!r} asks what no case asks"
            )
    out.append("")
    return out
