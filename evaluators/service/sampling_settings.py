"""The sampler's settings (config file table ``[sampling]``): the rates, the rules that exclude or
sample matching traces, the always-evaluate triggers, what counts as negative feedback, and the
judge tier's queue. ``evaluators.service.sampling_decision`` decides by them."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ragfault_core.errors import ConfigError
from ragfault_core.settings import explain, load_toml

if TYPE_CHECKING:
    from evaluators.service.sampling_decision import TraceFacts

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


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
