"""Which reader or rule produced each field of a step (``steps.provenance``, docs/architecture.md,
Conventions and readers).

A step is filled in passes: the convention reader, the tool-result rule, the structural layer, the
user's mappings, the project's own ``ragfault.*`` attributes. Every pass but the reader names the
fields it sets as it sets them, with the rule and the key where there is one
(``shape:documents@search.output``, ``mapping:acme@acme.final``, ``ragfault``); the reader is exact
and says nothing. So once a span is read (``complete``), a field that holds a value and that no
pass named was set by the reader, and is named by its convention. A reader's decision to leave a
field empty on purpose (``traceloop:...``) is kept as it said it. When a wrong inference shows in a
step, its provenance says which reader or rule to look at.

Field names are the step's columns (``query_text``, ``input_text``, ``output_text``, ``step_type``,
``model``, ``tool_name`` ...), and for documents ``docs`` (candidates) or ``docs.<stage>`` (the
other stages), as ``collector.normalize.mapping.docs_field`` names them.
"""

from __future__ import annotations

from operator import attrgetter

import orjson

from collector.normalize.step import Step

# the step's fields a pass may set, beside its type (its documents are named by stage)
FIELDS = (
    "model", "input_tokens", "output_tokens", "total_tokens", "query_text", "input_text", "output_text",
    "tool_name", "tool_arguments", "tool_result", "top_k", "session_id", "user_id", "case_id", "run_id",
    "user_scope", "citations", "data_source_id",
)  # fmt: skip
# the fields only the project's own attributes set (``normalize_span``'s last pass)
OWN_FIELDS = frozenset(("case_id", "run_id", "user_scope", "citations"))
OWN = "ragfault"

_values = attrgetter(*FIELDS)  # the fields' values in one call (this runs for every span)


def docs_key(stage: str) -> str:
    """The provenance key of a stage's documents (``docs`` for candidates, ``docs.<stage>``)."""
    return "docs" if stage == "candidate" else f"docs.{stage}"


def note(step: Step, field: str, source: str) -> None:
    """Name ``source`` as what set ``field`` (a pass other than the reader, as it sets it)."""
    if step.provenance is None:
        step.provenance = {}
    step.provenance[field] = source


def complete(step: Step) -> None:
    """Name every field that holds a value and that no pass named: the reader's (by its convention),
    or the project's own attributes' (``OWN_FIELDS``). A step of type ``other`` is of no type."""
    given = [name for name, value in zip(FIELDS, _values(step), strict=True) if value is not None]
    if step.step_type != "other":
        given.append("step_type")
    given += [docs_key(stage) for stage in {d.stage for d in step.docs}] if step.docs else ()
    if not given:
        return
    noted = step.provenance
    if noted is None:
        noted = step.provenance = {}
    reader = step.convention
    for name in given:
        if name not in noted:
            noted[name] = OWN if name in OWN_FIELDS else reader


def as_json(provenance: dict[str, str] | None) -> str | None:
    """The ``steps.provenance`` column: a JSON object of field -> reader or rule, None for none."""
    return orjson.dumps(provenance).decode() if provenance else None
