"""Evaluation settings: which evaluators run and the policy of each (config file table ``[evaluation]``).

Each evaluator's own options live in its config model (``EvaluatorSpec.config``), filled from
``[evaluation.evaluators.<name>]``; unknown options are refused at startup.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluators.spec import EvaluatorSpec
from ragfault_core.errors import ConfigError
from ragfault_core.settings import explain, load_toml


class EvaluationSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: list[str] | None = Field(None, description="Evaluators to run (default: every installed one).")
    disabled: list[str] = Field(default_factory=list, description="Evaluators never to run.")
    evaluators: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Options per evaluator, by name ([evaluation.evaluators.NAME])."
    )
    batch_size: int = Field(500, gt=0, description="Traces evaluated per round.")
    workers: int | None = Field(
        None,
        ge=0,
        description=(
            "Worker processes for cheap-tier evaluation (0: in-process). `ragfault evaluate` on a "
            "database file uses them when the run has more than two batches, the server when more "
            "than one batch is waiting; default one a core, at most 4."
        ),
    )


def load_evaluation_settings(config_file: str | Path | None) -> EvaluationSettings:
    data = load_toml(config_file).get("evaluation", {})
    try:
        return EvaluationSettings(**data)
    except ValidationError as exc:
        raise ConfigError(f"invalid settings: {explain(exc, 'evaluation')}") from exc


def evaluator_configs(settings: EvaluationSettings, specs: dict[str, EvaluatorSpec]) -> dict[str, BaseModel]:
    """Validated config objects of the evaluators that will run."""
    unknown = set(settings.evaluators) - set(specs)
    if unknown:
        raise ConfigError(f"options given for unknown evaluators: {sorted(unknown)}")
    names = settings.enabled if settings.enabled is not None else list(specs)
    out: dict[str, BaseModel] = {}
    for name in names:
        if name not in specs:
            raise ConfigError(f"enabled evaluator {name!r} is not installed")
        if name in settings.disabled:
            continue
        try:
            out[name] = specs[name].config(**settings.evaluators.get(name, {}))
        except ValidationError as exc:
            raise ConfigError(f"invalid options for evaluator {name}: {exc}") from exc
    return out
