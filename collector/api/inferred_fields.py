"""The fields of recent steps that no convention reader read, and what read them (``ragfault doctor``,
``GET /api/v1/coverage``, ``"inferred"``).

A reader is exact where it applies; the structural layer infers by shape, a mapping reads what the
user said, and either can be wrong. Every step names the reader or rule behind each field
(``steps.provenance``, ``collector.normalize.provenance``): this report counts, per span name, the
fields an inference or a mapping filled (a source with a rule and a key, ``shape:...@<key>``,
``mapping:<name>@<key>``, or a reader's fill from log records, ``genai@log_records``), so a wrong
inference can be traced to the rule and the key it came from, and a mapping written for it.
"""

from __future__ import annotations

from typing import Any

from collector.store import doctor

MAX_TRACES = 500  # recent settled traces looked at
MAX_ROWS = 200


def inferred(cursor: Any, service: str | None = None, since: Any = None) -> list[dict[str, Any]]:
    """Per span name, field and source: how many recent steps had the field inferred or mapped."""
    params = {"service": service, "since": since, "traces": MAX_TRACES, "rows": MAX_ROWS}
    rows = doctor.inferred_fields(cursor, params, MAX_ROWS)
    return [{"span_name": r[0], "field": r[1], "source": r[2], "steps": int(r[3])} for r in rows]


def render(rows: list[dict[str, Any]]) -> list[str]:
    """The report's lines (``ragfault doctor``'s text output)."""
    if not rows:
        return []
    out = [f"== fields no reader read, and what read them (the last {MAX_TRACES} traces at most) =="]
    name = None
    for r in rows:
        if r["span_name"] != name:
            name = r["span_name"]
            out.append(f"  {name or '(no name)'}:")
        out.append(f"    {r['field']:<14} <- {r['source']} ({r['steps']} steps)")
    out.append("")
    return out
