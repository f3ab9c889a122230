"""The execute body is read by hand on the fast path (server/members.py): for any JSON
body, the reader accepts exactly what the documented schema (``ExecuteBody``) accepts."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plugyard.server import members
from plugyard.server.faults import InvalidRequest
from plugyard.server.inputs import ExecuteBody
from plugyard.server.routes import execute

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=8,
)  # fmt: skip
_MEMBERS = st.sampled_from(list(ExecuteBody.model_fields))
_BODIES = st.dictionaries(_MEMBERS | st.text(max_size=5), _JSON, max_size=6) | _JSON
_SCHEMA = jsonschema_rs.validator_for(ExecuteBody.model_json_schema())


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=_BODIES)
def test_the_execute_reader_judges_a_body_as_its_schema_does(body: Any) -> None:
    try:
        members.read(body, execute._MEMBERS)
        accepted = True
    except InvalidRequest:
        accepted = False
    assert accepted == _SCHEMA.is_valid(body), body
