"""``plugyard sandbox`` says whether untrusted code can run here and what bounds each
sandbox's processes and memory."""

from __future__ import annotations

from click.testing import CliRunner

from plugyard.cli.main import cli
from plugyard.runtimes.sandbox import mechanism, unavailable_reason


def test_it_names_the_mechanism_this_host_offers() -> None:
    result = CliRunner().invoke(cli, ["sandbox"])
    assert result.exit_code == 0
    first, second = result.output.splitlines()
    assert first.startswith("bubblewrap: available" if unavailable_reason() is None
                            else "bubblewrap: unavailable")  # fmt: skip
    assert second == f"limits per sandbox: {mechanism()}"
