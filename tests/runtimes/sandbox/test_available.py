"""The sandbox tests skip where bubblewrap is not installed; where it is (CI installs it),
a sandbox that cannot start is a failure, not a skip."""

from __future__ import annotations

import pytest

from plugyard.runtimes.sandbox import unavailable_reason
from plugyard.runtimes.sandbox.bwrap import bwrap_path


@pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap is not installed")
def test_an_installed_bubblewrap_makes_a_working_sandbox() -> None:
    assert unavailable_reason() is None
