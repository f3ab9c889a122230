"""Call the bundled plugins through the in-process runtime, as the executor would, and
check every successful result against the output schema the plugin declares."""

from __future__ import annotations

import asyncio
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs
import msgspec

from plugyard.builtins import BUILTINS_DIR
from plugyard.manifest.load import load_file, manifest_files
from plugyard.manifest.model import PluginDescriptor
from plugyard.runtimes.base import CallContext, Outcome, Target
from plugyard.runtimes.python import InProcessRuntime

RUNTIME = InProcessRuntime()


@cache
def bundled() -> dict[str, tuple[PluginDescriptor, Path]]:
    found: dict[str, tuple[PluginDescriptor, Path]] = {}
    for path in manifest_files(BUILTINS_DIR):
        for descriptor in load_file(path).plugins:
            found[descriptor.id] = (descriptor, path)
    return found


def plugin_target(plugin_id: str, **config: Any) -> Target:
    descriptor, path = bundled()[plugin_id]
    if config:
        descriptor = descriptor.model_copy(update={"config": {**descriptor.config, **config}})
    return Target(descriptor, str(path.parent))


def run(plugin_id: str, op: str, /, config: dict[str, Any] | None = None, **params: Any) -> Outcome:
    """One call; a successful result must match the operation's declared output schema."""
    target = plugin_target(plugin_id, **(config or {}))
    refined = RUNTIME.describe(target) or target.descriptor
    operation = refined.operation(op)
    assert operation is not None, op
    answer = asyncio.run(
        RUNTIME.invoke(target, operation, params, CallContext(request_id="t"), None)
    )
    assert isinstance(answer, Outcome)
    if answer.error is None and operation.output_schema is not None:
        data = msgspec.json.decode(msgspec.json.encode(answer.data))
        errors = list(jsonschema_rs.validator_for(operation.output_schema).iter_errors(data))
        assert errors == [], [e.message for e in errors]
    return answer


def data(plugin_id: str, op: str, /, config: dict[str, Any] | None = None, **params: Any) -> Any:
    outcome = run(plugin_id, op, config=config, **params)
    assert outcome.error is None, outcome.error
    return outcome.data


def code(plugin_id: str, op: str, /, config: dict[str, Any] | None = None, **params: Any) -> str:
    """The error code of a call that must fail."""
    outcome = run(plugin_id, op, config=config, **params)
    assert outcome.status == "error" and outcome.error is not None, outcome
    return outcome.error.code
