"""What a yard is built from, and the places on disk that follow from it.

Settings are read by every collaborator of the yard and by the CLI and server before
any yard exists, so they stand apart from what they configure.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from plugyard.kb.budgets import Budgets, CageLimits
from plugyard.store.home import data_home
from plugyard.store.urls import DATABASE_URL_ENV
from plugyard.telemetry import TelemetrySettings


@dataclass(frozen=True)
class Settings:
    """Everything a yard is built from; :meth:`from_env` reads ``PLUGYARD_*``."""

    # A URL or a SQLite path; None → PLUGYARD_DATABASE_URL, else plugyard.db in the data
    # folder (plugyard.store.home: PLUGYARD_HOME, else ~/.local/share/plugyard).
    database: str | None = None
    builtins: bool = True
    plugin_dirs: tuple[Path, ...] = ()
    catalog: Path | None = None
    entrypoints: tuple[str, ...] = ()  # allowlisted distributions or "dist:entry" names
    default_timeout_ms: int = 30_000
    # External HTTP plugins (docs/server.md): what the outbound guard lets through despite
    # its rules ("127.0.0.1:8765", "10.0.0.0/8"), and the health checks' hysteresis.
    outbound_allow: tuple[str, ...] = ()
    # Subprocess wrappers (docs/subprocess.md): executables allowed beside the running
    # Python interpreter and node (names on PATH or absolute paths).
    subprocess_allow: tuple[str, ...] = ()
    health_interval_s: float = 10.0
    health_threshold: int = 3
    # Discovery's embedder (docs/discovery.md): minilm | hashing | openai:<url>:<model> |
    # ollama:<model>; None → PLUGYARD_EMBEDDER, else minilm.
    embedder: str | None = None
    embedder_api_key: str | None = None  # for openai:…; else OPENAI_API_KEY
    ollama_url: str | None = None  # for ollama:…; else OLLAMA_HOST
    # Discovery learning from accepted calls and feedback (docs/discovery.md, "Memory"):
    # PLUGYARD_DISCOVERY_LEARNING=off stops it; the rest bound what it keeps.
    discovery_learning: bool = True
    discovery_learning_per_subject: int = 20
    discovery_learning_quorum: int = 3
    discovery_learning_keep: int = 1000
    discovery_learning_days: float = 365.0
    # pgvector's hnsw.ef_search when discovery's dense candidates come from PostgreSQL
    # (docs/scaling.md): higher buys recall on very large catalogs for query time.
    pgvector_ef_search: int = 400
    # Governance (docs/governance.md): a policy file applied at start (else the stored
    # policy, else none: allow all); governed=False drops the durable audit and the rest.
    policy_file: Path | None = None
    governed: bool = True
    # Installed plugin packages (docs/packages.md); None → PLUGYARD_PACKAGES_DIR, else a
    # ``packages`` folder beside the SQLite file (in the data folder by default).
    packages_dir: Path | None = None
    # HomeClaw's file of external registrations (registry/external_file.py); None →
    # PLUGYARD_EXTERNAL_PLUGINS_FILE, else external_plugins.json beside the packages.
    external_plugins_file: Path | None = None
    # The chat model flows use (docs/llm.md): embedded | openai:<url>:<model> |
    # ollama:<model>; None → PLUGYARD_LLM, else embedded.
    llm: str | None = None
    llm_api_key: str | None = None  # for openai:…; else OPENAI_API_KEY
    # Requests that reach the model per minute and subject, across the fleet (docs/
    # governance.md#the-model-is-a-governed-resource); 0: no limit. The embedding
    # application (no subject) is never limited.
    model_rate_per_minute: int = 60
    # Identity providers behind Shu's host.auth (docs/shu.md): a YAML file of OAuth2
    # token endpoints; None → PLUGYARD_AUTH_PROVIDERS, else none.
    auth_providers: Path | None = None
    # Per-plugin virtual environments for packages with a requirements.txt (docs/shu.md):
    # off unless PLUGYARD_PLUGIN_VENVS=1; wheels from PLUGYARD_VENV_WHEELS (a folder) or
    # PLUGYARD_VENV_INDEX_URL, never from anywhere else.
    plugin_venvs: bool = False
    venv_index_url: str | None = None
    venv_wheels: Path | None = None
    # Where fan-out runs (docs/scaling.md#ray): local (asyncio here) | ray:local |
    # ray://host:port — pipeline branches and iterations, feed runs and heavy operations.
    execution: str = "local"
    execution_connect_timeout_s: float = 10.0
    # What one document may cost the knowledge base (docs/shu.md, "Budgets and the
    # cage"): PLUGYARD_KB_MAX_<BUDGET> for each budget, PLUGYARD_KB_WORKER_MEMORY_MB,
    # _CPU_S, _WALL_S and PLUGYARD_KB_WORKERS for the worker processes that read them.
    kb_budgets: Budgets = field(default_factory=Budgets)
    kb_cage: CageLimits = field(default_factory=CageLimits)
    # Traces and metrics over OTLP (docs/telemetry.md): PLUGYARD_OTEL_* / OTEL_*; off.
    telemetry: TelemetrySettings = field(default_factory=TelemetrySettings)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        env = os.environ if environ is None else environ
        dirs = tuple(Path(p) for p in env.get("PLUGYARD_PLUGIN_DIRS", "").split(os.pathsep) if p)
        allow = tuple(a for a in env.get("PLUGYARD_ENTRYPOINTS", "").split(",") if a)
        catalog = env.get("PLUGYARD_CATALOG")
        base = cls(
            database=env.get("PLUGYARD_DATABASE_URL"),
            builtins=env.get("PLUGYARD_BUILTINS", "1") not in {"0", "false", "no"},
            plugin_dirs=dirs,
            catalog=Path(catalog) if catalog else None,
            entrypoints=allow,
            outbound_allow=tuple(
                a for a in env.get("PLUGYARD_OUTBOUND_ALLOW", "").split(",") if a.strip()
            ),
            subprocess_allow=tuple(
                a for a in env.get("PLUGYARD_SUBPROCESS_ALLOW", "").split(",") if a.strip()
            ),
            embedder=env.get("PLUGYARD_EMBEDDER"),
            embedder_api_key=env.get("PLUGYARD_EMBEDDER_API_KEY") or env.get("OPENAI_API_KEY"),
            ollama_url=env.get("OLLAMA_HOST"),
            discovery_learning=env.get("PLUGYARD_DISCOVERY_LEARNING", "on").lower()
            not in {"0", "off", "false", "no"},
            discovery_learning_per_subject=int(
                env.get("PLUGYARD_DISCOVERY_LEARNING_PER_SUBJECT", "20")
            ),
            discovery_learning_quorum=int(env.get("PLUGYARD_DISCOVERY_LEARNING_QUORUM", "3")),
            discovery_learning_keep=int(env.get("PLUGYARD_DISCOVERY_LEARNING_KEEP", "1000")),
            discovery_learning_days=float(env.get("PLUGYARD_DISCOVERY_LEARNING_DAYS", "365")),
            pgvector_ef_search=int(env.get("PLUGYARD_PGVECTOR_EF_SEARCH", "400")),
            policy_file=Path(env["PLUGYARD_POLICY_FILE"])
            if env.get("PLUGYARD_POLICY_FILE")
            else None,
            packages_dir=Path(env["PLUGYARD_PACKAGES_DIR"])
            if env.get("PLUGYARD_PACKAGES_DIR")
            else None,
            external_plugins_file=Path(env["PLUGYARD_EXTERNAL_PLUGINS_FILE"])
            if env.get("PLUGYARD_EXTERNAL_PLUGINS_FILE")
            else None,
            llm=env.get("PLUGYARD_LLM"),
            llm_api_key=env.get("PLUGYARD_LLM_API_KEY") or env.get("OPENAI_API_KEY"),
            model_rate_per_minute=int(env.get("PLUGYARD_MODEL_RATE_PER_MINUTE") or 60),
            auth_providers=Path(env["PLUGYARD_AUTH_PROVIDERS"])
            if env.get("PLUGYARD_AUTH_PROVIDERS")
            else None,
            plugin_venvs=env.get("PLUGYARD_PLUGIN_VENVS", "0") in {"1", "true", "yes"},
            venv_index_url=env.get("PLUGYARD_VENV_INDEX_URL"),
            venv_wheels=Path(env["PLUGYARD_VENV_WHEELS"])
            if env.get("PLUGYARD_VENV_WHEELS")
            else None,
            execution=env.get("PLUGYARD_EXECUTION") or "local",
            execution_connect_timeout_s=float(
                env.get("PLUGYARD_EXECUTION_CONNECT_TIMEOUT_S") or 10.0
            ),
            kb_budgets=_kb_budgets(env),
            kb_cage=_kb_cage(env),
            telemetry=TelemetrySettings.from_env(env),
        )
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})


def _kb_budgets(env: Mapping[str, str]) -> Budgets:
    given = {
        name: int(env[f"PLUGYARD_KB_MAX_{name.upper()}"])
        for name in Budgets.__dataclass_fields__
        if env.get(f"PLUGYARD_KB_MAX_{name.upper()}")
    }
    return replace(Budgets(), **given)


def _kb_cage(env: Mapping[str, str]) -> CageLimits:
    limits = CageLimits()
    names = {"memory_mb": "PLUGYARD_KB_WORKER_MEMORY_MB", "cpu_s": "PLUGYARD_KB_WORKER_CPU_S",
             "wall_s": "PLUGYARD_KB_WORKER_WALL_S", "workers": "PLUGYARD_KB_WORKERS"}  # fmt: skip
    given = {
        key: type(getattr(limits, key))(env[name]) for key, name in names.items() if env.get(name)
    }
    return replace(limits, **given)


def packages_root(settings: Settings) -> Path | None:
    """Where installed packages live: beside a SQLite file, in the data folder for a
    server database; ``None`` for an in-memory store without a setting."""
    if settings.packages_dir is not None:
        return settings.packages_dir
    # The store's own rule (Store.open): no setting → the variable → the data folder.
    database = settings.database or os.environ.get(DATABASE_URL_ENV)
    if database is None:
        return data_home() / "packages"
    if database.startswith("sqlite:"):
        database = database.partition(":///")[2] or ":memory:"
    elif "://" in database:
        return data_home() / "packages"
    if database in ("", ":memory:"):
        return None
    return Path(database).expanduser().parent / "packages"


def external_plugins_path(settings: Settings) -> Path | None:
    """Where external registrations are mirrored; ``None`` for an in-memory store
    without a setting."""
    if settings.external_plugins_file is not None:
        return settings.external_plugins_file
    packages = packages_root(settings)
    return None if packages is None else packages.parent / "external_plugins.json"
