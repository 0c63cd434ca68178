"""Every place that names the root causes in order agrees with the one table of them
(``queries.taxonomy``): the views' layer lists, the statements that sort by cause, the web UI's cause
lists and colours, the causes a triage promotion accepts, the gate's ``layer:`` and ``root_cause:``
metrics, and the documentation's order."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest
from pydantic import ValidationError

from collector.store.sqlfiles import statement
from evaluators.service.promote import PromoteRequest
from queries import load_query
from queries.taxonomy import (
    CAUSES,
    LAYERS,
    NONE_SEEN,
    OK,
    RootCause,
    attribution_order,
    cause,
    cause_names,
    live_order,
)
from ragfault.gate import Rule
from ragfault.gate_metrics import metric_of
from ragfault.ui.api import ROOT_CAUSES
from ragfault.ui.live import LIVE_CAUSES

ROOT = Path(__file__).resolve().parents[2]


def flagged(sql: str) -> list[str]:
    """The layers of a view's ``failing_layers`` list, in the order it lists them."""
    return re.findall(r"CASE WHEN \w+ THEN '(\w+)' END", sql)


def ordered(sql: str, function: str) -> list[list[str]]:
    """Each list literal a statement sorts by (``array_position([...], root_cause)``)."""
    lists = re.findall(rf"{function}\(\s*\[(.*?)\]", sql, re.DOTALL)
    return [re.findall(r"'(\w+)'", body) for body in lists]


def test_the_table_is_well_formed() -> None:
    names = cause_names()
    assert len(set(names)) == len(names) == len(CAUSES)
    assert OK not in names and NONE_SEEN not in names
    assert names[-1] == "insufficient_trace"  # after every real layer: a trace that cannot tell is never ok
    assert set(LAYERS) == {c.layer for c in CAUSES} and all(c.description and c.metrics for c in CAUSES)
    assert cause("stale_context").layer == "freshness"
    with pytest.raises(KeyError, match="permission_violation"):
        cause("gremlins")


def test_the_views_list_their_layers_in_the_tables_order() -> None:
    attribution = load_query("attribution").sql
    assert flagged(attribution) == list(cause_names())
    # the evidence object has one key per layer, in the same order
    assert re.findall(r"'(\w+)', CASE WHEN f\.", attribution) == list(cause_names())
    live = load_query("live_attribution").sql
    assert flagged(live) == list(live_order()[:-1])
    # the outcome when no layer failed
    assert f"coalesce(f.failing_layers[1], '{OK}') AS root_cause" in attribution
    assert f"coalesce(f.failing_layers[1], '{NONE_SEEN}') AS root_cause" in live


def test_the_header_of_attribution_says_the_order() -> None:
    header = load_query("attribution").description
    said = re.search(r"in the order: (.*?); else ok", header)
    assert said is not None
    assert [w.strip() for w in said.group(1).split(",")] == list(cause_names())


def test_the_statements_that_sort_by_cause_use_the_tables_order() -> None:
    report_cases = statement("report", "cases").sql
    for sql in (load_query("root_causes").sql, statement("ui", "dash_root_causes").sql, report_cases):
        assert ordered(sql, "array_position") == [list(attribution_order())]
    assert ordered(load_query("triage").sql, "list_position") == [list(live_order())]


def test_the_ui_and_triage_name_the_causes_in_order() -> None:
    assert tuple(ROOT_CAUSES) == attribution_order()
    assert tuple(LIVE_CAUSES) == live_order()
    assert typing.get_args(RootCause) == attribution_order()
    colours = (ROOT / "ragfault/ui/static/util.js").read_text(encoding="utf-8")
    block = re.search(r"CAUSE_COLOURS = \{(.*?)\};", colours, re.DOTALL)
    assert block is not None
    assert tuple(re.findall(r"(\w+): \"#", block.group(1))) == attribution_order()


def test_a_promotion_accepts_exactly_the_causes() -> None:
    for name in attribution_order():
        assert PromoteRequest(trace_id="ab" * 16, cause=name).cause == name
    for wrong in (NONE_SEEN, "gremlins"):
        with pytest.raises(ValidationError):
            PromoteRequest(trace_id="ab" * 16, cause=wrong)


def test_the_gate_knows_every_layer_and_cause_and_refuses_others() -> None:
    for name in cause_names():
        assert metric_of(f"layer:{name}") is not None
    for name in attribution_order():
        assert metric_of(f"root_cause:{name}") is not None
    assert metric_of("layer:ok") is None  # ok is an outcome, never a failing layer
    with pytest.raises(ValidationError, match="layer: takes one of permission_violation"):
        Rule(metric="layer:permision_violation", max=0)
    with pytest.raises(ValidationError, match="root_cause: takes one of .*insufficient_trace, ok"):
        Rule(metric="root_cause:none_seen", max=0)


def test_the_documentation_gives_the_same_order() -> None:
    metrics = (ROOT / "docs/metrics.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \d+ \| `(\w+)` \|", metrics, re.MULTILINE)
    assert tuple(rows) == attribution_order()
    architecture = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    chart = architecture.split("## Attribution order", 1)[1].split("```", 2)[1]
    assert tuple(re.findall(r"\[(\w+)\]", chart)) == attribution_order()
