"""Reading settings, shared by every part that has some: a TOML file read once, ``RAGFAULT_*``
environment values, a pydantic validation error told as one line a field, and the table a component
runs with (the settings tree's, else its config file's). The models themselves live beside what they
configure (``collector.config.ServerSettings``, ``evaluators.service.config``, ``ragfault.settings``)."""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ragfault_core.errors import ConfigError


def explain(exc: ValidationError, table: str | None = None) -> str:
    """A validation error as one line a field: the field, the value given and what is allowed
    (pydantic's own text carries its documentation links and internal names)."""
    lines = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err.get("loc", ()))
        field = f"[{table}] {loc}" if table else loc
        kind = err.get("type", "")
        ctx = err.get("ctx") or {}
        if kind == "extra_forbidden":
            lines.append(f"{field}: unknown setting")
            continue
        if kind == "missing":
            lines.append(f"{field}: required")
            continue
        allowed = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        if "expected" in ctx:
            allowed = f"allowed: {ctx['expected']}"
        given = err.get("input")
        if kind == "value_error" or isinstance(given, dict):  # a check of the whole table or rule
            lines.append(f"{field or 'settings'}: {allowed}")
        else:
            lines.append(f"{field} = {given!r}: {allowed}")
    return "; ".join(lines)


def load_toml(path: str | Path | None) -> dict[str, Any]:
    if not path:
        return {}
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc


def env_values(model: type[BaseModel], prefix: str = "RAGFAULT_") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        raw = os.environ.get(prefix + name.upper())
        if raw is None:
            continue
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):  # a table of its own: JSON
            try:
                out[name] = json.loads(raw)
            except ValueError as exc:
                raise ConfigError(f"{prefix}{name.upper()} must be a JSON object: {exc}") from exc
            continue
        is_list = ann in (tuple[str, ...], tuple[str, ...] | None)
        out[name] = tuple(s.strip() for s in raw.split(",") if s.strip()) if is_list else raw
    return out


_T = TypeVar("_T")


def settings_table(
    tree: object | None, config_file: str | Path | None, name: str, load: Callable[[str | None], _T]
) -> _T:
    """The ``[name]`` table a component runs with: the one of the settings tree the server was
    started with (a ``ragfault.settings.Settings``), so every value comes from the tree read once
    at startup. Without a tree (a test's runtime, a local store), or for a table the tree does not
    hold (a third-party component's), ``load`` reads it from the config file."""
    if tree is not None and name in getattr(type(tree), "model_fields", {}):
        value: _T = getattr(tree, name)
        return value
    return load(None if config_file is None else str(config_file))
