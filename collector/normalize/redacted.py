"""Placeholders an instrumentation writes where it hid content (docs/architecture.md, Conventions
and readers).

Instrumentations that can hide inputs or outputs often keep the attribute and write a placeholder
in it (OpenInference's ``__REDACTED__`` under ``OPENINFERENCE_HIDE_OUTPUTS``; others write
``[REDACTED]``, ``<hidden>``, ``***OMITTED***``). Such a value is not what the user asked or the
model answered: read as text, a hidden answer is an answer no context supports, and a hidden
question joins no gold case. ``clear`` empties every text field and document text that holds one,
and names it in the step's provenance (``redacted``), so that the trace says the field was not
recorded (``insufficient_trace`` naming it) instead of blaming a layer for a placeholder.

A placeholder is one word of hiding (``redacted``, ``hidden``, ``omitted``, ``masked``, ``removed``,
``scrubbed``, ``suppressed``, ``filtered``), upper case or set off by punctuation, and nothing else:
``Removed.`` as a model's whole answer is no placeholder, ``REMOVED`` and ``<removed>`` are.
"""

from __future__ import annotations

import re

from collector.normalize.step import Step

MAX_CHARS = 40
_WORD = r"(?:redacted|hidden|omitted|masked|removed|scrubbed|suppressed|filtered)"
_DECORATED = re.compile(
    rf"[\W_]*[\[<({{*_#-]+[\W_]*{_WORD}[\W_]*|[\W_]*{_WORD}[\W_]*[\]>)}}*_#-]+[\W_]*", re.I
)
_BARE_UPPER = re.compile(rf"[\W_]*{_WORD.upper()}[\W_]*")
_TEXT_FIELDS = ("query_text", "input_text", "output_text", "tool_arguments", "tool_result")
NOTE = "redacted"


def placeholder(value: str | None) -> bool:
    """Whether ``value`` is a hiding placeholder and nothing else (see the module doc)."""
    if not value or len(value) > MAX_CHARS or len(value) < 6:
        return False
    v = value.strip().strip('"')
    if " " in v:
        return False  # words: text, not a placeholder
    return _DECORATED.fullmatch(v) is not None or _BARE_UPPER.fullmatch(v) is not None


def clear(step: Step) -> None:
    """Empty each text field and document text of ``step`` that holds a placeholder, naming it."""
    for name in _TEXT_FIELDS:
        v = getattr(step, name)
        if v is not None and len(v) <= MAX_CHARS and placeholder(v):
            setattr(step, name, None)
            if step.provenance is None:
                step.provenance = {}
            step.provenance[name] = NOTE
    for doc in step.docs:
        c = doc.content
        if c is not None and len(c) <= MAX_CHARS and placeholder(c):
            doc.content = None
