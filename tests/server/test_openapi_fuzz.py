"""schemathesis against the published OpenAPI document: every operation, a bounded
number of generated requests each (positive and negative), every default check.

Documented exceptions: an execute whose plugin failed answers the 5xx of its error code
(docs/server.md, "How an execute maps"), so ``not_a_server_error`` is not asked of
execute; its response must then be a result envelope carrying one of those codes.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    ignored_auth,
    negative_data_rejection,
    positive_data_acceptance,
)

from plugyard.server import ServerSettings, create_app
from plugyard.yard import Settings, Yard

from .conftest import PLUGINS

#: Examples per operation and mode: ~14 operations × 2 modes × 15 ≈ 400 requests.
EXAMPLES = 15
PLUGIN_FAILURES = {"plugin_error", "invalid_output", "timeout", "plugin_unavailable"}


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FastAPI, str]]:
    db = tmp_path_factory.mktemp("fuzz") / "yard.db"
    with Yard.from_settings(Settings(database=str(db), plugin_dirs=(PLUGINS,))) as yard:
        key = yard.keys.bootstrap_admin()
        assert key is not None
        yield create_app(yard, ServerSettings(health_checks=False)), key


def _check(case: schemathesis.Case, key: str) -> None:
    headers = {"X-API-Key": key}
    # These judge auth and data generation rather than the server: the key is sent on
    # every call (ignored_auth would need calls without it), and negative/positive data
    # acceptance disagree with free-form bodies (a registration is any manifest).
    excluded = [ignored_auth, negative_data_rejection, positive_data_acceptance]
    if case.path.endswith(("/execute", "/execute/stream")):
        response = case.call(headers=headers)
        if response.status_code > 500:
            code = response.json().get("error", {}).get("code")
            assert code in PLUGIN_FAILURES, response.text
        excluded.append(not_a_server_error)
        case.validate_response(response, excluded_checks=excluded, headers=headers)
    else:
        case.call_and_validate(headers=headers, excluded_checks=excluded)


@pytest.mark.parametrize("mode", list(GenerationMode), ids=lambda m: m.value)
def test_the_api_honours_its_openapi_document(
    fuzzed: tuple[FastAPI, str], mode: GenerationMode
) -> None:
    app, key = fuzzed
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 12
    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        def run(case: schemathesis.Case) -> None:
            _check(case, key)

        try:
            run()
        except Unsatisfiable:
            # Nothing of this operation can be made invalid (no parameters, no body).
            assert mode is GenerationMode.NEGATIVE
