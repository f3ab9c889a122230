"""One routed request with the real embedded model, when it is installed: whatever the
small model chooses, the answer has a documented status and calls only a candidate."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from plugyard.routing import STATUSES
from plugyard.yard import Yard

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(
        importlib.util.find_spec("xllamacpp") is None, reason="xllamacpp is not installed"
    ),
]


def test_the_embedded_model_routes_a_conversion(yard: Yard) -> None:
    from plugyard.llm.embedded import EmbeddedChatModel
    from plugyard.llm.pinned import SMOLLM2_135M

    try:
        SMOLLM2_135M.locate()
    except Exception as exc:  # the model package is installed by scripts/setup.sh
        pytest.skip(str(exc))
    answer = asyncio.run(
        yard.ask("convert 5 km to miles", llm=EmbeddedChatModel(SMOLLM2_135M), k=3, max_steps=1)
    )
    assert answer.status in STATUSES
    for step in answer.steps:
        offered = {(r.plugin, r.operation) for r in step.retrieved}
        if step.choice and "plugin" in step.choice:
            assert (step.choice["plugin"], step.choice["operation"]) in offered
    assert answer.cost["llm_calls"] >= 1
