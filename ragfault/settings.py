"""The settings tree: every table of the config file, read once at startup into one frozen model.

``load_settings(config_file, overrides)`` reads the TOML file once and validates every table
against its component's model (each a frozen pydantic model with ``extra="forbid"``, beside its
component): an unknown table or key is a ``ConfigError`` naming it, and a bad value names the
field, the value and what is allowed. ``ragfault serve`` calls it before anything starts and
passes the tree down (``ragfault.server.build`` -> ``Runtime.tree``): each component takes its
table from there (``Context.table``), none reads the file again. A table an installed component
declares that the tree does not know (a third party's) is left in the file for it to read.

A new table is one entry in ``Settings`` (its model, default and description) and one row per
setting in the site's configuration page, docs/configuration.md (``tests/test_docs.py`` checks every setting).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from collector.components import installed
from collector.config import ServerSettings, build_settings
from collector.maintenance.retention import RetentionSettings
from collector.normalize.mapping import ConventionSettings
from evaluators.judge.settings import JudgeSettings
from evaluators.service.config import EvaluationSettings
from evaluators.service.sampling_settings import SamplingSettings
from ragfault.experiments.config import ExperimentSettings
from ragfault_core.errors import ConfigError
from ragfault_core.settings import explain, load_toml


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    server: ServerSettings = Field(
        default_factory=ServerSettings, description="The collector: ports, limits, tokens."
    )
    evaluation: EvaluationSettings = Field(
        default_factory=EvaluationSettings, description="Which evaluators run and their options."
    )
    sampling: SamplingSettings = Field(
        default_factory=SamplingSettings, description="Which live traces the judge tier sees."
    )
    judge: JudgeSettings | None = Field(None, description="The LLM judge; none without the table.")
    retention: RetentionSettings = Field(
        default_factory=RetentionSettings, description="Deleting and exporting old traces."
    )
    experiments: ExperimentSettings = Field(
        default_factory=ExperimentSettings, description="Run comparisons and gold-case reliance."
    )
    conventions: ConventionSettings = Field(
        default_factory=ConventionSettings, description="Mappings of spans no convention reader knows."
    )


# ``[store]`` is read into ``[server]``'s settings (``collector.config.store_table``: ``backend`` is
# the ``store`` setting); it is a table of the file all the same
TABLES = (*Settings.model_fields, "store")
_MODELS: dict[str, type[BaseModel]] = {
    "evaluation": EvaluationSettings, "sampling": SamplingSettings, "judge": JudgeSettings,
    "retention": RetentionSettings, "experiments": ExperimentSettings, "conventions": ConventionSettings,
}  # fmt: skip


def load_settings(config_file: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """The whole tree: defaults < config file < ``RAGFAULT_*`` environment (``[server]``) < flags.
    The file is read once."""
    data = _read(config_file)
    return _tree(build_settings(config_file, overrides, toml=data), data)


def tree_for(server: ServerSettings) -> Settings:
    """The tree of a server started from ``ServerSettings`` alone (tests, ``demo``): its
    ``[server]`` as given, the other tables from its config file, read once and checked as
    ``load_settings`` checks them; tables of the file that are not the tree's are left to whoever
    reads them (a ``judge_factory``'s own table)."""
    return _tree(server, _read(server.config_file, strict=False))


def _read(config_file: str | Path | None, strict: bool = True) -> dict[str, Any]:
    data = load_toml(config_file)
    unknown = [k for k in data if k not in TABLES]
    if not strict:
        data = {k: v for k, v in data.items() if k in TABLES}
    elif unknown:
        others = _component_tables()  # a third party's component may declare its own table
        unknown = [k for k in unknown if k not in others]
        if unknown:
            raise ConfigError(
                f"unknown table [{unknown[0]}] in {config_file}; the tables are "
                + ", ".join(f"[{t}]" for t in (*TABLES, *sorted(others)))
            )
    for name, value in data.items():
        if not isinstance(value, dict):
            raise ConfigError(f"[{name}] in {config_file} must be a table, not a value")
    return data


def _component_tables() -> set[str]:
    """The tables installed components declare beyond the tree's (a third party's): each such
    component reads and checks its own table when it starts (``Context.table``). Looked up only
    when a file has a table the tree does not know."""
    return {c.table for c in installed() if c.table} - set(TABLES)


def _tree(server: ServerSettings, data: dict[str, Any]) -> Settings:
    tables: dict[str, Any] = {"server": server}
    for name, model in _MODELS.items():
        if name not in data:
            continue
        try:
            tables[name] = model(**data[name])
        except ValidationError as exc:
            raise ConfigError(f"invalid settings: {explain(exc, name)}") from exc
    return Settings(**tables)
