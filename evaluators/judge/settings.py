"""Settings of the judge tier: the ``[judge]`` table of the TOML config file.

No ``[judge]`` table means no judge: the judge evaluators are not run and ``build_judge_runner``
returns None. Example::

    [judge]
    base_url = "http://127.0.0.1:8000/v1"   # OpenAI, vLLM, Ollama (/v1), llama.cpp server
    model = "qwen2.5-7b-instruct"
    api_key_env = "JUDGE_API_KEY"
    tokens_per_hour = 2_000_000
    budget_usd_per_hour = 5.0
    cost_per_1k_input = 0.00015
    cost_per_1k_output = 0.0006
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ragfault_core.errors import ConfigError
from ragfault_core.settings import explain, load_toml


class JudgeSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = Field(..., description="OpenAI-compatible API root, e.g. https://api.openai.com/v1.")
    model: str = Field(..., min_length=1, description="Judge model name sent in each request.")
    api_key: str | None = Field(None, description="API key (prefer api_key_env).")
    api_key_env: str | None = Field(None, description="Environment variable holding the API key.")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra HTTP headers on every call.")
    prompt_version: str = Field(
        "v1", description="Prompt files used: evaluators/prompts/<task>_<version>.txt."
    )
    timeout_s: float = Field(60.0, gt=0, description="Time limit of one HTTP call.")
    max_retries: int = Field(3, ge=0, description="Retries after malformed JSON, 429, 5xx, timeouts.")
    backoff_base_s: float = Field(1.0, ge=0, description="First backoff; doubles per retry.")
    backoff_max_s: float = Field(60.0, ge=0, description="Longest wait between retries (caps Retry-After).")
    concurrency: int = Field(4, gt=0, description="Judge calls in flight at once.")
    requests_per_minute: float | None = Field(None, gt=0, description="Client-side rate limit.")
    tokens_per_hour: int | None = Field(None, gt=0, description="Token budget per rolling hour.")
    budget_usd_per_hour: float | None = Field(None, gt=0, description="Cost budget per rolling hour.")
    cost_per_1k_input: float = Field(0.0, ge=0, description="USD per 1,000 prompt tokens.")
    cost_per_1k_output: float = Field(0.0, ge=0, description="USD per 1,000 completion tokens.")
    temperature: float = Field(0.0, ge=0, le=2)
    max_output_tokens: int = Field(1024, gt=0)
    json_mode: bool = Field(
        True, description="Send response_format json_object (off for servers without it)."
    )
    rescore_anchors: bool = Field(True, description="Re-score the anchor set when the judge version is new.")
    max_context_chars: int = Field(24_000, gt=0, description="Context beyond this is cut before judging.")

    @model_validator(mode="after")
    def _check(self) -> JudgeSettings:
        if self.api_key and self.api_key_env:
            raise ValueError("give api_key or api_key_env, not both")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError("base_url must start with http:// or https://")
        return self

    def key(self) -> str | None:
        if self.api_key_env:
            value = os.environ.get(self.api_key_env)
            if not value:
                raise ConfigError(f"[judge] api_key_env {self.api_key_env} is not set")
            return value
        return self.api_key

    @property
    def version(self) -> str:
        """The judge version: model and prompt version together."""
        return f"{self.model}@{self.prompt_version}"


def load_judge_settings(config_file: str | Path | None) -> JudgeSettings | None:
    data = load_toml(config_file).get("judge")
    if data is None:
        return None
    try:
        return JudgeSettings(**data)
    except ValidationError as exc:
        raise ConfigError(f"invalid settings: {explain(exc, 'judge')}") from exc
