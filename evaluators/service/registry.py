"""Evaluator discovery: built-ins and third-party packages register the same way, through the
``ragfault.evaluators`` entry-point group (value: ``module:SPEC``). A duplicate name fails at startup.
"""

from __future__ import annotations

from evaluators.spec import EvaluatorSpec
from ragfault_core.entrypoints import load_group
from ragfault_core.errors import ConfigError

GROUP = "ragfault.evaluators"


def discover(extra: list[EvaluatorSpec] | None = None) -> dict[str, EvaluatorSpec]:
    """Every installed evaluator by name, plus ``extra`` ones (tests, embedding apps)."""
    specs: dict[str, EvaluatorSpec] = {}
    sources: dict[str, str] = {}
    for origin, spec in load_group(GROUP, EvaluatorSpec, "evaluator"):
        _add(specs, sources, spec, origin)
    for spec in extra or []:
        _add(specs, sources, spec, "extra")
    return specs


def _add(specs: dict[str, EvaluatorSpec], sources: dict[str, str], spec: object, origin: str) -> None:
    if not isinstance(spec, EvaluatorSpec):
        raise ConfigError(f"{origin} is not an EvaluatorSpec")
    if spec.name in specs:
        raise ConfigError(f"duplicate evaluator name {spec.name!r}: {sources[spec.name]} and {origin}")
    specs[spec.name] = spec
    sources[spec.name] = origin
