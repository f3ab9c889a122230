"""One yard for the pipeline tests: the bundled plugins plus the test plugins."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.python import InProcessRuntime, definition_of
from plugyard.yard import Settings, Yard

from .plugins import ALL, GATE, Gate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "pipelines"


@pytest.fixture(scope="session")
def yard() -> Iterator[Yard]:
    with Yard.from_settings(Settings(database=":memory:")) as opened:
        runtime = opened.runtimes["python"]
        assert isinstance(runtime, InProcessRuntime)
        for code in ALL:
            definition = definition_of(code)
            assert definition is not None
            runtime.provide(code)
            opened.registry.register(RegisteredPlugin.of(definition.descriptor, "code"))
        yield opened


@pytest.fixture
def gate() -> Gate:
    GATE.reset()
    return GATE
