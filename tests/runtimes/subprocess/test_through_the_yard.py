"""An MRP-VM wrapper manifest in a plugin folder runs as it is, through the executor."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from plugyard.manifest.load import load_file
from plugyard.runtimes.base import Target
from plugyard.runtimes.sandbox import unavailable_reason
from plugyard.runtimes.subprocess import SubprocessPluginRuntime
from plugyard.yard import Settings, Yard
from runtimes.subprocess.helpers import call

EXAMPLES = Path(__file__).parents[3] / "examples" / "wrappers"


def test_the_python_example_wrapper_is_called_through_the_executor(tmp_path: Path) -> None:
    folder = tmp_path / "plugins" / "shout"
    shutil.copytree(EXAMPLES / "python", folder)
    settings = Settings(database=str(tmp_path / "y.db"), builtins=False,
                        plugin_dirs=(tmp_path / "plugins",), governed=False)  # fmt: skip
    with Yard.from_settings(settings) as yard:
        plugin = yard.registry.find("shout")
        assert plugin is not None
        assert plugin.available, plugin.unavailable_reason
        result = asyncio.run(yard.call("shout", "solve", {"prompt": "hi"}))
        assert result.status == "success", result.error
        assert result.data == {"status": "success", "responseMarkdown": "HI"}


def test_the_node_example_wrapper_speaks_the_same_protocol(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        return
    import subprocess

    params = {"operation": "solve", "parameters": {"prompt": "hi"}, "context": {}}
    request = {"protocolVersion": 1, "id": 1, "method": "execute", "params": params}
    done = subprocess.run([node, str(EXAMPLES / "node" / "wrapper.js")],
                          input=json.dumps(request) + "\n", capture_output=True, text=True,
                          timeout=20, check=True)  # fmt: skip
    assert json.loads(done.stdout) == {
        "id": 1,
        "result": {"data": {"status": "success", "responseMarkdown": "HI"}},
    }


def test_the_node_example_runs_sandboxed_as_an_untrusted_plugin(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    if shutil.which("node") is None or unavailable_reason() is not None:
        pytest.skip("needs node and bubblewrap")
    folder = tmp_path / "shout-node"
    shutil.copytree(EXAMPLES / "node", folder)
    folder.chmod(0o755)
    descriptor = load_file(folder / "manifest.json").plugins[0]
    target = Target(descriptor, str(folder), "untrusted", "node-example")
    assert SubprocessPluginRuntime().check(target) is None
    outcome = call(runtime, target, {"prompt": "hi"})
    assert outcome.data == {"status": "success", "responseMarkdown": "HI"}
