"""schemathesis's own engine (what ``st run`` drives) over the app in process, every phase
and every check on: the run an attacker with the published document would make.

The failures come back as text, one per unique failure, so a test can assert there are
none and show them all when there are.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import schemathesis
from fastapi import FastAPI
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import events, from_schema
from schemathesis.engine.statistic import Statistic

PHASES = ("examples", "coverage", "fuzzing", "stateful")


@dataclass(frozen=True)
class Outcome:
    failures: list[str]
    errors: list[str]
    cases: int
    seconds: float


def config(
    key: str,
    *,
    examples: int,
    seed: int,
    operations: list[dict[str, Any]] | None = None,
    parameters: dict[str, Any] | None = None,
) -> SchemathesisConfig:
    """Strict: all phases, both generation modes, every check; fixed seed, no example
    database and no cache, so a run depends on the code only."""
    return SchemathesisConfig.from_dict(
        {
            "seed": seed,
            "headers": {"X-API-Key": key},
            "workers": 1,
            "continue-on-failure": True,
            "cache": {"enabled": False},
            "generation": {"mode": "all", "max-examples": examples, "database": "none"},
            "phases": {
                **{phase: {"enabled": True} for phase in PHASES},
                "coverage": {"enabled": True, "generate-duplicate-query-parameters": True},
            },
            "checks": {"enabled": True},
            "operations": operations or [],
            "parameters": parameters or {},
        }
    )


def only(path_regex: str) -> dict[str, Any]:
    """An ``operations`` entry that leaves out every path not matching ``path_regex``."""
    return {"exclude-path-regex": path_regex, "enabled": False}


def run(app: FastAPI, settings: SchemathesisConfig) -> Outcome:
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, config=settings)
    stats = Statistic()
    errors: list[str] = []
    started = time.perf_counter()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            stats.on_scenario_finished(event.recorder)
        elif isinstance(event, events.NonFatalError):
            errors.append(f"{event.label}: {event.value!r}")
        elif isinstance(event, events.FatalError):
            errors.append(f"fatal: {event.exception!r}")
    seconds = time.perf_counter() - started
    failures = []
    for label, grouped in stats.failures.items():
        for group in grouped.values():
            response = group.response
            answer = f"{response.status_code} {response.content[:300]!r}" if response else ""
            for failure in group.failures:
                failures.append(
                    f"{label}: {failure.title}\n  {failure.message}\n  {answer}\n"
                    f"  {(group.code_sample or '')[:500]}"
                )
    return Outcome(failures, errors, stats.total_cases, seconds)
