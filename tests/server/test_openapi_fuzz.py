"""schemathesis in strict mode against the published OpenAPI document: every operation,
every check, positive and negative data, every phase (examples, coverage, fuzzing,
stateful), a fixed seed.

Documented exceptions, each asserted where it applies:

- an execute whose plugin failed answers the 5xx of its error code (docs/server.md,
  "How an execute maps"), so ``not_a_server_error`` accepts those statuses on execute,
  and the answer must then be the error envelope of one of ``PLUGIN_FAILURES``, the
  call's result envelope in its ``details``;
- a document no JSON Schema can judge whole (a manifest, a policy, a pipeline, a package
  zip, an execute's parameters) is read by its own reader, so a schema-valid one may
  still be refused — with 422 and that reader's code only (docs/server.md, "Documents").

The same strict run is made again on the execute routes with real plugins, so calls get
past ``plugin_not_found`` to the executor.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from schemathesis import Case, CheckContext, Response

from plugyard.llm.testing import Reply, ScriptedModel
from plugyard.server import ServerSettings, create_app
from plugyard.yard import Settings, Yard

from .conftest import PLUGINS
from .strict_run import Outcome, config, only, run

#: Examples per operation and mode in the fuzzing phase (coverage and stateful add theirs).
EXAMPLES = 15
SEED = 20_240_613
PLUGIN_FAILURES = {
    "plugin_error",
    "invalid_output",
    "output_validation_error",
    "timeout",
    "plugin_unavailable",
    "worker_lost",
}
_EXECUTE = r"/execute(/stream)?$"
#: The operations whose body a reader judges beyond its schema, and the codes it answers.
DOCUMENT_CODES: dict[str, tuple[str, ...]] = {
    "POST /api/v1/plugins/{plugin_id}/execute": ("invalid_parameters",),
    "POST /api/v1/plugins/{plugin_id}/execute/stream": ("invalid_parameters",),
    "POST /api/v1/plugins/register": ("manifest_", "unsupported_type"),
    "POST /api/plugins/register": ("manifest_", "unsupported_type"),
    "PUT /api/v1/policy": ("policy_invalid",),
    "PUT /api/v1/pipelines/{name}": ("pipeline_invalid",),
    "POST /api/v1/pipelines/run": ("pipeline_invalid",),
    "POST /api/v1/packages": ("package_invalid", "package_refused"),
}
_ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]


def _operations() -> list[dict[str, Any]]:
    plugin_failed = {"expected-statuses": ["2xx", "3xx", "4xx", "500", "502", "503", "504"]}
    return [
        {"include-path-regex": _EXECUTE, "checks": {"not_a_server_error": plugin_failed}},
        *(
            {
                "include-name": name,
                "checks": {"positive_data_acceptance": {"expected-statuses": [*_ACCEPTED, "422"]}},
            }
            for name in DOCUMENT_CODES
        ),
    ]


def _error_code(body: Any) -> str | None:
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    code = message.get("error") if isinstance(message, dict) else None
    return code if isinstance(code, str) else None


@schemathesis.check
def plugin_failures_answer_their_envelope(
    ctx: CheckContext, response: Response, case: Case
) -> bool | None:
    """The one 5xx an execute may answer: its plugin failed, and the body says how."""
    if not case.path.endswith(("/execute", "/execute/stream")) or response.status_code < 500:
        return None
    body = response.json()
    code = _error_code(body)
    assert code in PLUGIN_FAILURES, response.text
    result = body["error"]["details"]["result"]
    assert result["error"]["code"] == code and result["request_id"], response.text
    return True


@schemathesis.check
def documents_are_refused_by_their_reader(
    ctx: CheckContext, response: Response, case: Case
) -> bool | None:
    """A 422 to a document route names its reader's code and what it found."""
    prefixes = DOCUMENT_CODES.get(f"{case.method} {case.path}")
    if prefixes is None or response.status_code != 422:
        return None
    body = response.json()
    code = _error_code(body)
    assert code is not None and code.startswith(prefixes), response.text
    assert body["error"]["error_id"].startswith("ERR-"), response.text
    if code == "invalid_parameters":  # every fault with its pointer, and the call's result
        details = body["error"]["details"]
        assert details["errors"] and details["result"]["request_id"], response.text
    return True


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FastAPI, str]]:
    db = tmp_path_factory.mktemp("fuzz") / "yard.db"
    # The model of /api/v1/ask answers "none of these" to every request, at once.
    with ScriptedModel.running(otherwise=Reply.choice("none")) as model:
        settings = Settings(database=str(db), plugin_dirs=(PLUGINS,), llm=model.spec,
                            outbound_allow=(model.allow,))  # fmt: skip
        with Yard.from_settings(settings) as yard:
            key = yard.keys.bootstrap_admin()
            assert key is not None
            yield create_app(yard, ServerSettings(health_checks=False)), key


def _assert_clean(outcome: Outcome) -> None:
    print(f"{outcome.cases} requests in {outcome.seconds:.1f} s")
    assert not outcome.errors, "\n".join(outcome.errors)
    assert not outcome.failures, f"{len(outcome.failures)} mismatches:\n" + "\n".join(
        outcome.failures
    )


def test_the_api_honours_its_openapi_document(fuzzed: tuple[FastAPI, str]) -> None:
    app, key = fuzzed
    _assert_clean(run(app, config(key, examples=EXAMPLES, seed=SEED, operations=_operations())))


@pytest.mark.parametrize("plugin", ["calculator", "liar", "mailer"])
def test_calls_that_reach_a_plugin_honour_the_document(
    fuzzed: tuple[FastAPI, str], plugin: str
) -> None:
    app, key = fuzzed
    operations = [only(_EXECUTE), *_operations()]
    pinned = {"plugin_id": plugin}
    settings = config(key, examples=EXAMPLES, seed=SEED, operations=operations, parameters=pinned)
    _assert_clean(run(app, settings))
