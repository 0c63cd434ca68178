"""Experiment settings (config file table ``[experiments]``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragfault_core.errors import ConfigError
from ragfault_core.settings import load_toml

Reliance = Literal["strong", "supplementary"]


def _default_reliance() -> dict[str, Reliance]:
    return {"policy": "strong", "pricing": "strong"}


class ExperimentSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    reliance: dict[str, Reliance] = Field(
        default_factory=_default_reliance,
        description=(
            "Default reliance per gold-case category, for cases that set none; categories not listed "
            "are supplementary. Strong: answers must rest on the knowledge base."
        ),
    )
    resamples: int = Field(10_000, ge=0, le=1_000_000, description="Bootstrap resamples of run comparisons.")
    seed: int = Field(0, description="Bootstrap seed of run comparisons.")

    @property
    def strong_categories(self) -> str:
        """The $strong_categories parameter of the closed_book query."""
        return ",".join(sorted(c for c, r in self.reliance.items() if r == "strong"))


def load_experiment_settings(config_file: str | Path | None) -> ExperimentSettings:
    data = load_toml(config_file).get("experiments", {})
    try:
        return ExperimentSettings(**data)
    except ValidationError as exc:
        raise ConfigError(f"invalid [experiments] settings: {exc}") from exc
