"""How the runner knows an evaluator: ``EvaluatorSpec`` (its name, version, function, config model,
the steps it applies to, its tier), and what a config model may use (``NoConfig``, ``Regexes``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict

from evaluators.eval_input import EvalInput
from evaluators.metric import Metric

Tier = Literal["cheap", "judge"]


def _valid_regexes(patterns: tuple[str, ...]) -> tuple[str, ...]:
    for p in patterns:
        try:
            re.compile(p)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {p!r}: {exc}") from exc
    return patterns


Regexes = Annotated[tuple[str, ...], AfterValidator(_valid_regexes)]
"""A config option holding regular expressions, each checked to compile at startup."""


class NoConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True)
class EvaluatorSpec:
    """How the runner knows an evaluator. ``applies_to`` names step types, or ``trace``."""

    name: str
    version: str
    fn: Callable[[EvalInput, Any], list[Metric]]
    config: type[BaseModel] = NoConfig
    applies_to: tuple[str, ...] = ("trace",)
    tier: Tier = "cheap"
    needs_case: bool = False
    description: str = ""
