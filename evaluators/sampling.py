"""Which settled traces the judge tier sees (config file table ``[sampling]``).

The cheap tier runs on every trace. The judge tier runs on a sample, decided per trace by a pure
function of the trace's facts and the settings, in this order:

1. an ``exclude`` rule that matches → ``filtered`` (health checks, synthetic traffic);
2. an always-evaluate trigger that fires → selected (negative user feedback, error status, empty
   retrieval, a stale or forbidden document in the cheap-tier verdicts just written, answer claims
   the lexical tier left undecided) — triggers override every rate;
3. the first ``sample`` rule that matches → its rate;
4. experiment traffic (a trace with a run id) → ``experiment_rate`` (default: all);
5. production traffic → ``production_rate``.

A rate is applied deterministically: a trace is in when ``bucket(trace_id) < rate``, where the bucket
is a keyed hash of the trace id mapped to [0, 1). Every instance with the same ``salt`` makes the
same decision, and a trace sampled at 10% is also in at 20%.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

import orjson
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from collector.config import explain, load_toml
from collector.errors import ConfigError
from collector.store import sampling as store_sampling
from collector.store.base import Tx
from collector.store.reader import Window
from collector.store.verdicts import TraceTables

TRIGGERS = (
    "negative_feedback",
    "error_status",
    "empty_retrieval",
    "stale_document",
    "forbidden_document",
    "undecided_claims",
)


class SamplingRule(BaseModel):
    """Matches a trace when every given field matches (glob patterns, case-sensitive)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(..., min_length=1, description="Shown in eval_log reasons.")
    service: str | None = Field(None, description="Glob on the trace's service.name.")
    run: str | None = Field(None, description="Glob on ragfault.run_id ('' matches traces without one).")
    route: str | None = Field(None, description="Glob on the root span's name.")
    attributes: dict[str, str] = Field(
        default_factory=dict, description="Glob per attribute of the root span or the resource."
    )
    action: Literal["sample", "exclude"] = Field("sample", description="Sample at `rate`, or exclude.")
    rate: float | None = Field(None, ge=0, le=1, description="Share of matching traces judged.")

    @model_validator(mode="after")
    def _check(self) -> SamplingRule:
        if self.action == "sample" and self.rate is None:
            raise ValueError(f"rule {self.name}: a sample rule needs a rate")
        if self.action == "exclude" and self.rate is not None:
            raise ValueError(f"rule {self.name}: an exclude rule takes no rate")
        return self

    def needs_attributes(self) -> bool:
        return bool(self.attributes)

    def matches(self, facts: TraceFacts) -> bool:
        if self.service is not None and not fnmatchcase(facts.service_name or "", self.service):
            return False
        if self.run is not None and not fnmatchcase(facts.run_id or "", self.run):
            return False
        if self.route is not None and not fnmatchcase(facts.route or "", self.route):
            return False
        for key, pattern in self.attributes.items():
            value = facts.attributes.get(key)
            if value is None or not fnmatchcase(_text(value), pattern):
                return False
        return True


class TriggerSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    negative_feedback: bool = Field(True, description="Negative user feedback on the trace or a span of it.")
    error_status: bool = Field(True, description="A span of the trace has status ERROR.")
    empty_retrieval: bool = Field(True, description="A retrieval step ran and returned no documents.")
    stale_document: bool = Field(True, description="A cheap-tier stale-document metric counted one.")
    forbidden_document: bool = Field(True, description="A cheap-tier permission metric counted one.")
    undecided_claims: bool = Field(
        True, description="The lexical tier left answer claims undecided (the judge decides them)."
    )


class SamplingSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    production_rate: float = Field(0.1, ge=0, le=1, description="Share of production traces judged.")
    experiment_rate: float = Field(1.0, ge=0, le=1, description="Share of traces with a run id judged.")
    salt: str = Field("", description="Mixed into the hash; change it to draw a different sample.")
    rules: tuple[SamplingRule, ...] = Field((), description="[[sampling.rules]]: first matching rule wins.")
    triggers: TriggerSettings = Field(default_factory=TriggerSettings)
    stale_metrics: tuple[str, ...] = Field(
        ("stale_context",), description="Metrics whose numerator > 0 means stale."
    )
    forbidden_metrics: tuple[str, ...] = Field(
        ("permission_violations",), description="Metrics whose numerator > 0 means a forbidden document."
    )
    undecided_metrics: tuple[str, ...] = Field(
        ("answer_support_undecided",), description="Metrics whose numerator > 0 mean claims left undecided."
    )
    negative_score_below: float = Field(0.5, description="A feedback score below this is negative.")
    negative_labels: tuple[str, ...] = Field(
        (
            "thumbs_down",
            "down",
            "negative",
            "bad",
            "incorrect",
            "wrong",
            "unhelpful",
            "hallucinated",
            "not_helpful",
        ),
        description="Feedback labels (case-insensitive) that are negative.",
    )
    feedback_annotator_kinds: tuple[str, ...] = Field(
        ("HUMAN",), description="Annotator kinds whose negative feedback triggers (API feedback is HUMAN)."
    )
    judge_factory: str | None = Field(
        None,
        description="'module:function' building the judge runner; default evaluators.judge.service:build_judge_runner.",
    )
    judge_queue_max: int = Field(2000, gt=0, description="Traces waiting for the judge before load is shed.")
    judge_max_wait_seconds: float = Field(
        300.0, gt=0, description="A trace that waited longer for the judge is shed (over_budget, backlog)."
    )
    judge_batch_size: int = Field(20, gt=0, description="Traces handed to the judge runner at once.")

    def needs_attributes(self) -> bool:
        return any(r.needs_attributes() for r in self.rules)


def load_sampling_settings(config_file: str | Path | None) -> SamplingSettings:
    data = load_toml(config_file).get("sampling", {})
    try:
        return SamplingSettings(**data)
    except ValidationError as exc:
        raise ConfigError(f"invalid settings: {explain(exc, 'sampling')}") from exc


def bucket(trace_id: str, salt: str = "") -> float:
    """A number in [0, 1) fixed by the trace id (lowercase hex) and the salt; uniform over ids."""
    digest = hashlib.blake2b(trace_id.lower().encode(), digest_size=8, key=salt.encode()[:64]).digest()
    return int.from_bytes(digest, "big") / 2**64


@dataclass(frozen=True)
class TraceFacts:
    """What sampling reads about one trace."""

    trace_id: str
    service_name: str | None = None
    run_id: str | None = None
    route: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)
    error_count: int = 0
    empty_retrieval: bool = False
    stale: bool = False
    forbidden: bool = False
    negative_feedback: bool = False
    undecided: bool = False
    generation: int = 0

    def triggers(self, enabled: TriggerSettings) -> list[str]:
        fired = []
        if enabled.negative_feedback and self.negative_feedback:
            fired.append("negative_feedback")
        if enabled.error_status and self.error_count > 0:
            fired.append("error_status")
        if enabled.empty_retrieval and self.empty_retrieval:
            fired.append("empty_retrieval")
        if enabled.stale_document and self.stale:
            fired.append("stale_document")
        if enabled.forbidden_document and self.forbidden:
            fired.append("forbidden_document")
        if enabled.undecided_claims and self.undecided:
            fired.append("undecided_claims")
        return fired


@dataclass(frozen=True)
class Decision:
    selected: bool
    decision: str  # evaluated (once judged), sampled_out, filtered
    reason: str


def decide(facts: TraceFacts, settings: SamplingSettings) -> Decision:
    """The judge-tier decision for one trace (pure)."""
    rule = next((r for r in settings.rules if r.matches(facts)), None)
    if rule is not None and rule.action == "exclude":
        return Decision(False, "filtered", f"rule {rule.name}")
    fired = facts.triggers(settings.triggers)
    if fired:
        return Decision(True, "evaluated", "trigger:" + ",".join(fired))
    if rule is not None:
        rate, why = float(rule.rate or 0.0), f"rule {rule.name}"
    elif facts.run_id:
        rate, why = settings.experiment_rate, "experiment"
    else:
        rate, why = settings.production_rate, "production"
    b = bucket(facts.trace_id, settings.salt)
    if b < rate:
        return Decision(True, "evaluated", f"sampled: {why} rate {rate:g}")
    return Decision(False, "sampled_out", f"{why} rate {rate:g}")


def is_negative(settings: SamplingSettings, kind: str, value: float | None, label: str | None) -> bool:
    """The feedback policy: thumbs down, a score below the threshold, or a negative label."""
    if label is not None and label.strip().lower() in {x.lower() for x in settings.negative_labels}:
        return True
    if kind == "thumbs":
        return value is not None and value <= 0
    if kind == "score":
        return value is not None and value < settings.negative_score_below
    return False


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _loads(raw: Any) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        out = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    return out if isinstance(out, dict) else {}


@dataclass(frozen=True)
class WrittenFacts:
    """What a trace's batch, as fetched and evaluated, tells the sampler once its cheap verdicts
    are written (``written_facts``), or the same read back from the tables: every fact but negative
    feedback and the root attributes."""

    service_name: str | None
    run_id: str | None
    route: str | None
    error_count: int
    empty_retrieval: bool
    flagged: frozenset[str]  # the stale, forbidden and undecided-claim metrics that counted something
    generation: int  # the generation written


_DOC_STAGES = pa.array(["candidate", "rerank_input"])  # a retrieval with none of these retrieved nothing


def written_facts(
    tables: TraceTables, evals: pa.Table, log: pa.Table, settings: SamplingSettings
) -> dict[str, WrittenFacts]:
    """The sampler's facts of a batch's traces from the rows it was evaluated from (``tables``) and
    the rows written for it (``evals``, ``log``: ``evaluators.running.EvalTables``), so that
    deciding the judge tier of a written batch reads only feedback (and root attributes) back.
    The same facts as ``collector.store.sampling.fact_rows`` reads from the tables after the write:
    the trace's row, whether a retrieval step has no candidate or reranker-input document, the
    flagged metrics among its cheap verdicts just written, the generation written. Empty when the
    tables carry no root spans (fetched by another path)."""
    if tables.roots is None:
        return {}
    roots = dict(
        zip(
            tables.roots.column("trace_id").to_pylist(),
            tables.roots.column("root_name").to_pylist(),
            strict=True,
        )
    )
    steps, docs = tables.steps, tables.docs
    # traces with a retrieval step that recorded its output: one that recorded neither documents
    # nor an output value is unknown, not empty (``evaluators.builtin._recorded``)
    recorded = pc.or_kleene(
        pc.greater(pc.utf8_length(steps.column("output_text")), 0),
        pc.greater(pc.utf8_length(steps.column("tool_result")), 0),
    )
    is_retrieval = pc.and_kleene(pc.equal(steps.column("step_type"), "retrieval"), recorded)
    retrieving = set(pc.filter(steps.column("trace_id"), is_retrieval).to_pylist())
    stage = docs.column("stage")
    if pa.types.is_dictionary(stage.type):
        stage = stage.cast(pa.string())
    retrieved = set(pc.filter(docs.column("trace_id"), pc.is_in(stage, value_set=_DOC_STAGES)).to_pylist())
    flagged: dict[str, set[str]] = {}
    metrics = (
        list(settings.stale_metrics) + list(settings.forbidden_metrics) + list(settings.undecided_metrics)
    )
    if metrics and evals.num_rows:
        ok = pc.and_(
            pc.and_(
                pc.is_in(evals.column("metric"), value_set=pa.array(metrics, pa.string())),
                pc.equal(evals.column("status"), "ok"),
            ),
            pc.greater(evals.column("numerator"), 0),
        )
        hits = evals.select(["trace_id", "metric"]).filter(ok)  # a NULL numerator is no hit, as in SQL
        for tid, metric in zip(
            hits.column("trace_id").to_pylist(), hits.column("metric").to_pylist(), strict=True
        ):
            flagged.setdefault(tid, set()).add(metric)
    written = dict(zip(log.column("trace_id").to_pylist(), log.column("generation").to_pylist(), strict=True))
    t = tables.traces
    out = {}
    for tid, service, run_id, errors in zip(
        t.column("trace_id").to_pylist(),
        t.column("service_name").to_pylist(),
        t.column("run_id").to_pylist(),
        t.column("error_count").to_pylist(),
        strict=True,
    ):
        gen = written.get(tid)
        if gen is None:  # not written with this batch
            continue
        out[tid] = WrittenFacts(
            service_name=service,
            run_id=run_id,
            route=roots.get(tid),
            error_count=int(errors or 0),
            empty_retrieval=tid in retrieving and tid not in retrieved,
            flagged=frozenset(flagged.get(tid, ())),
            generation=int(gen),
        )
    return out


def load_facts(
    con: Tx,
    trace_ids: list[str],
    settings: SamplingSettings,
    hint: Window = None,
    written_since: datetime | None = None,
    written: Mapping[str, WrittenFacts] | None = None,
) -> list[TraceFacts]:
    """Facts of the given traces (after their cheap tier ran), in one pass per table. ``hint``:
    the range of the traces' ``first_received_at`` read with their ids (``traces_in_range``).
    ``written_since``: the caller wrote the traces' cheap verdicts after this time, so only
    ``evaluations`` rows written since are read (the table is in the order rows were written: the
    scan skips the rest of it, which holds dozens of rows for every trace ever evaluated).
    ``written``: what the caller knows of some of them from their batches (``written_facts``);
    of those, only feedback and root attributes are read."""
    if not trace_ids:
        return []
    known = {t: written[t] for t in dict.fromkeys(trace_ids) if t in written} if written else {}
    rest = [t for t in trace_ids if t not in known]
    out = _read_facts(con, rest, settings, hint, written_since) if rest else []
    if known:
        negative, attribute_rows = store_sampling.feedback_rows(
            con, list(known), list(settings.feedback_annotator_kinds), settings.needs_attributes()
        )
        out += _trace_facts(known, negative, attribute_rows, settings)
    return out


def _trace_facts(
    facts: Mapping[str, WrittenFacts],
    negative: set[str],
    attribute_rows: Mapping[str, tuple[Any, Any]],
    settings: SamplingSettings,
) -> list[TraceFacts]:
    """The sampler's facts of each trace: what its batch (or the tables) told, its feedback and its
    root attributes."""
    attrs = _merged_attributes(attribute_rows)
    stale_m, forbidden_m = set(settings.stale_metrics), set(settings.forbidden_metrics)
    undecided_m = set(settings.undecided_metrics)
    return [
        TraceFacts(
            trace_id=tid,
            service_name=w.service_name,
            run_id=w.run_id,
            route=w.route,
            attributes=attrs.get(tid, {}),
            error_count=w.error_count,
            empty_retrieval=w.empty_retrieval,
            stale=bool(w.flagged & stale_m),
            forbidden=bool(w.flagged & forbidden_m),
            negative_feedback=tid in negative,
            undecided=bool(w.flagged & undecided_m),
            generation=w.generation,
        )  # fmt: skip
        for tid, w in facts.items()
    ]


def _merged_attributes(rows: Mapping[str, tuple[Any, Any]]) -> dict[str, dict[str, Any]]:
    """Each trace's resource attributes, overridden by its root span's."""
    attrs: dict[str, dict[str, Any]] = {}
    for tid, (a, ra) in rows.items():
        merged = _loads(ra)
        merged.update(_loads(a))
        attrs[tid] = merged
    return attrs


def _read_facts(
    con: Tx, trace_ids: list[str], settings: SamplingSettings, hint: Window, written_since: datetime | None
) -> list[TraceFacts]:
    """The facts read back from the tables (``collector.store.sampling.fact_rows``)."""
    metrics = (
        list(settings.stale_metrics) + list(settings.forbidden_metrics) + list(settings.undecided_metrics)
    )
    found = store_sampling.fact_rows(
        con,
        trace_ids,
        metrics,
        list(settings.feedback_annotator_kinds),
        settings.needs_attributes(),
        hint,
        written_since,
    )
    facts = {
        tid: WrittenFacts(
            service_name=service,
            run_id=run_id,
            route=route,
            error_count=int(errors),
            empty_retrieval=tid in found.empty_retrieval,
            flagged=frozenset(found.flagged.get(tid, ())),
            generation=int(gen),
        )
        for tid, service, run_id, route, errors, _root, gen in found.traces
    }
    return _trace_facts(facts, found.negative, found.attributes, settings)
