"""Deploy settings of the collector: one frozen model, built once in ``main()`` and passed down.

Sources, lowest precedence first: the model defaults, a TOML config file (table ``[server]``),
environment variables ``RAGFAULT_<FIELD>`` (e.g. ``RAGFAULT_HTTP_PORT``), command-line flags.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from collector.normalize import DEFAULT_SOURCE_KEYS
from collector.receivers.bodies import ApiBodyLimits
from ragfault_core.errors import ConfigError
from ragfault_core.settings import env_values, explain, load_toml


class ServerSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    store: Literal["duckdb", "ducklake"] = Field(
        "duckdb",
        description="Backend: one DuckDB file (db), or a DuckLake (catalog + data_path) shared by collectors.",
    )
    db: str = Field("./ragfault.duckdb", description="DuckDB file the server owns.")
    catalog: str | None = Field(
        None, description="DuckLake catalog, postgresql://USER@HOST:PORT/DB (store = ducklake)."
    )
    data_path: str | None = Field(
        None,
        description="Directory of the lake's Parquet files, shared by every collector (store = ducklake).",
    )
    extension_repository: bool = Field(
        True,
        description="Try DuckDB's extension repository before the installed packages (store = ducklake).",
    )
    extension_dir: str | None = Field(
        None, description="Local directory of ducklake and postgres_scanner extension files, tried last."
    )
    lake_maintenance_seconds: float = Field(
        600,
        ge=0,
        description="How often one lake collector (a lease decides which) removes duplicate copies, "
        "merges small files and expires snapshots; 0 = never (store = ducklake).",
    )
    lake_keep_snapshots_seconds: float = Field(
        3600, ge=0, description="How far back the lake's snapshots (time travel) are kept by maintenance."
    )
    lake_claim_seconds: float = Field(
        120,
        gt=0,
        description="How long a lake collector's claim to settle or evaluate a trace lasts; a killed "
        "collector's claims are free at once, this is the fallback for one alive but stuck (store = ducklake).",
    )
    lake_claim_max_traces: int = Field(
        500,
        gt=0,
        description="How many traces one settle or evaluation round of a lake collector claims at most, "
        "so a backlog spreads over the collectors (store = ducklake).",
    )
    host: str = Field("127.0.0.1", description="Address both receivers bind to (0.0.0.0 for all).")
    http_port: int = Field(4318, ge=0, le=65535, description="OTLP/HTTP, API and metrics port.")
    grpc_port: int = Field(4317, ge=0, le=65535, description="OTLP/gRPC port; 0 picks a free port.")
    settle_seconds: float = Field(
        3.0, gt=0, description="A trace is complete after this long without new spans."
    )
    max_trace_wait_seconds: float = Field(
        300.0, gt=0, description="Settle a trace whose root never arrived after this long."
    )
    max_resettles_per_minute: int = Field(
        10,
        ge=1,
        description="A settled trace re-opened (late spans, content events) is settled and evaluated "
        "again at most this often a minute; beyond it it waits until the minute has passed.",
    )
    trusted_content_sources: tuple[str, ...] = Field(
        (),
        description="service.name values whose GenAI content events (log records) may fill spans of "
        "any service; by default a record fills only a span of its own service.",
    )
    max_body_bytes: int = Field(32 << 20, gt=0, description="Largest compressed request body.")
    max_decompressed_bytes: int = Field(128 << 20, gt=0, description="Largest body after inflating.")
    max_decoded_bytes: int | None = Field(
        None,
        gt=0,
        description="Largest request once decoded into rows (Arrow bytes: every copy of its resource, "
        "scope and metric descriptions included); a request over it is refused with 413 before its "
        "rows are built. At most max_inflight_bytes, which is the default.",
    )
    future_grace_seconds: float | None = Field(
        600.0,
        ge=0,
        description="Spans, log records and data points dated more than this after they were received "
        "are stored with the receive time in their TIMESTAMP columns (the *_unix_nano columns keep "
        "what was sent, partial_success says so); unset to store times as sent.",
    )
    max_queue_spans: int = Field(200_000, gt=0, description="Spans waiting for the writer before 503.")
    max_inflight_bytes: int = Field(
        256 << 20,
        gt=0,
        description="Ingest bytes held at once (bodies read and decoding, batches waiting to commit), "
        "HTTP and gRPC together; beyond it 503 + Retry-After / UNAVAILABLE.",
    )
    grpc_max_concurrent_rpcs: int = Field(
        4, ge=1, le=256, description="gRPC calls served at once (threads); beyond it RESOURCE_EXHAUSTED."
    )
    body_timeout_seconds: float = Field(
        30.0, gt=0, description="An OTLP/HTTP or API body that sends nothing for this long ends with 408."
    )
    api_body_bytes: ApiBodyLimits = Field(
        default_factory=ApiBodyLimits,
        description="Largest request body of each API route (kb, gold, labels, evaluate, feedback, "
        "default); beyond it 413 naming the limit, refused before the body is held "
        "(collector.receivers.bodies.ApiBodyLimits has the defaults).",
    )
    header_timeout_seconds: float = Field(
        10.0, gt=0, description="A connection that has not sent a complete request head by then is closed."
    )
    keep_alive_seconds: float = Field(
        5.0, gt=0, description="An idle keep-alive HTTP connection is closed after this."
    )
    max_connections: int | None = Field(
        None,
        ge=1,
        description="Open HTTP connections; past it the oldest idle one is closed. "
        "Default: a quarter of the file-descriptor limit (at most 4096).",
    )
    max_batch_spans: int = Field(20_000, gt=0, description="Most spans committed in one transaction.")
    decode_workers: int | None = Field(
        None,
        ge=0,
        le=64,
        description="Worker processes that decode and flatten export requests; "
        "default one a core (at most 4), 0 decodes in the server process.",
    )
    ingest_token: str | None = Field(None, description="Bearer token required on /v1/traces and gRPC.")
    api_token: str | None = Field(None, description="Bearer token required on /api/*.")
    protect_ui: bool = Field(
        False,
        description="With api_token set, the pages (/ui, /docs, /openapi.json) require it too (HTTP Basic, the token as password).",
    )
    protect_metrics: bool = Field(False, description="With api_token set, /metrics requires it too.")
    trusted_hosts: tuple[str, ...] | None = Field(
        None,
        description="Host names the API and pages answer to (DNS-rebinding defence); default localhost, "
        "127.0.0.1, ::1 and host; '*.example.com' matches subdomains, '*' any.",
    )
    sql_row_cap: int = Field(10_000, gt=0, description="Most rows one SQL API call returns.")
    sql_timeout_seconds: float = Field(
        30.0, gt=0, description="Time limit of one SQL API call, fetching and serializing its rows included."
    )
    sql_max_result_bytes: int = Field(
        32 << 20, gt=0, description="Largest SQL API result (its rows as Arrow bytes); beyond it 413."
    )
    sql_max_value_bytes: int = Field(
        64 << 10,
        gt=0,
        description="Widest value one call may build in an SQL API query (repeat, lpad, rpad, range, "
        "generate_series, list_resize), and most bytes joining values (||, concat, list_concat) may add "
        "to the widest of them; beyond it 413. DuckDB holds 2,048 of them at once.",
    )
    sql_max_concurrent: int = Field(
        4, ge=1, le=64, description="SQL API calls running at once; beyond it 429."
    )
    sql_nice: int = Field(
        10,
        ge=0,
        le=19,
        description="How much lower the scheduling priority of the threads running SQL API calls is "
        "(Linux nice), so that ingest keeps its share of the cores while a heavy query runs.",
    )
    sql_operator_memory: str = Field(
        "256MB",
        description="DuckDB memory for one SQL API call's sorts, joins and aggregates (they spill past it).",
    )
    memory_limit: str | None = Field("4GB", description="DuckDB memory limit.")
    duckdb_threads: int | None = Field(
        None,
        ge=1,
        le=256,
        description="DuckDB's worker threads; default the cores the decode workers leave (at least 1).",
    )
    checkpoint_wal_bytes: int = Field(
        256 << 20,
        ge=1 << 20,
        description="Under steady ingest, checkpoint once the WAL holds this many bytes (its data is "
        "held in memory until then).",
    )
    idle_checkpoint_wal_bytes: int = Field(
        64 << 20,
        ge=1 << 20,
        description="Once ingest has paused for a second, checkpoint if the WAL holds this many bytes.",
    )
    writer_threads: int = Field(
        1,
        ge=1,
        le=16,
        description="Threads that commit ingest batches side by side, each with its own connection.",
    )
    source_keys: tuple[str, ...] = Field(
        DEFAULT_SOURCE_KEYS, description="Document metadata keys that name the source document."
    )
    log_level: str = Field("info", description="debug, info, warning or error.")
    config_file: str | None = Field(None, description="The TOML file these settings came from, if any.")

    @model_validator(mode="after")
    def _check(self) -> ServerSettings:
        if self.max_decompressed_bytes < self.max_body_bytes:
            raise ValueError("max_decompressed_bytes must be at least max_body_bytes")
        if self.max_inflight_bytes < self.max_decompressed_bytes:
            raise ValueError(
                "max_inflight_bytes must be at least max_decompressed_bytes (one request must fit)"
            )
        if self.max_decoded_bytes is not None and self.max_decoded_bytes > self.max_inflight_bytes:
            raise ValueError("max_decoded_bytes must be at most max_inflight_bytes (one request must fit)")
        if self.http_port and self.http_port == self.grpc_port:
            raise ValueError("http_port and grpc_port must differ")
        if self.store == "ducklake" and not (self.catalog and self.data_path):
            raise ValueError("store ducklake needs catalog and data_path")
        return self


# ``[store]`` keys -> settings: ``backend`` is the ``store`` setting, the others keep their names
STORE_KEYS = {"backend": "store", "db": "db", "catalog": "catalog", "data_path": "data_path",
              "extension_repository": "extension_repository", "extension_dir": "extension_dir",
              "maintenance_seconds": "lake_maintenance_seconds",
              "keep_snapshots_seconds": "lake_keep_snapshots_seconds",
              "claim_seconds": "lake_claim_seconds", "claim_max_traces": "lake_claim_max_traces"}  # fmt: skip


def store_table(table: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(table) - set(STORE_KEYS))
    if unknown:
        raise ConfigError(f"unknown [store] keys: {', '.join(unknown)} (known: {', '.join(STORE_KEYS)})")
    return {STORE_KEYS[k]: v for k, v in table.items()}


def build_settings(
    config_file: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    toml: dict[str, Any] | None = None,
) -> ServerSettings:
    """Defaults < config file [server] and [store] < RAGFAULT_* environment < explicit overrides (flags).

    ``toml`` is the config file already read (``ragfault.settings.load_settings`` reads it once)."""
    toml = load_toml(config_file) if toml is None else toml
    data: dict[str, Any] = dict(toml.get("server", {}))
    data.update(store_table(toml.get("store", {})))
    data.update(env_values(ServerSettings))
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    if config_file:
        data["config_file"] = str(config_file)
    try:
        return ServerSettings(**data)
    except ValidationError as exc:
        raise ConfigError(f"invalid settings: {explain(exc, 'server')}") from exc
