"""The documentation is complete and every example in it runs."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from plugyard.manifest import model
from plugyard.manifest.load import load_text
from plugyard.manifest.safeload import parse

ROOT = Path(__file__).resolve().parents[1]
MANIFEST_DOC = (ROOT / "docs" / "manifest.md").read_text()
DOCUMENTED_MODELS = [
    model.PluginDescriptor, model.Operation, model.Placement, model.PlannerHints,
    model.PythonRuntime, model.SubprocessRuntime, model.HttpRuntime, model.McpRuntime,
    model.NoRuntime, model.OpAuth, model.SecretRequirement, model.IdentityRequirement,
]  # fmt: skip
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _blocks(path: Path, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(), re.DOTALL)


@pytest.mark.parametrize("cls", DOCUMENTED_MODELS, ids=lambda c: c.__name__)
def test_every_descriptor_field_is_documented(cls: type[BaseModel]) -> None:
    missing = [f for f in cls.model_fields if f != "kind" and f"`{f}`" not in MANIFEST_DOC]
    assert missing == []


def test_every_runtime_kind_is_documented() -> None:
    for kind in ("python", "subprocess", "http", "mcp", "none"):
        assert f"| `{kind}` |" in MANIFEST_DOC


@pytest.mark.parametrize(
    ("path", "index"),
    [(p, i) for p in DOC_FILES for i, _ in enumerate(_blocks(p, "python"))],
    ids=lambda v: v.name if isinstance(v, Path) else str(v),
)
def test_python_examples_run(path: Path, index: int) -> None:
    code = _blocks(path, "python")[index]
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    # Comments of the form "# value" after a print state what it prints.
    expected = [m.group(1).strip() for m in re.finditer(r"print\(.*\)\s+#\s*(.+)$", code, re.M)]
    assert result.stdout.splitlines() == expected


@pytest.mark.parametrize(
    ("path", "index"),
    [(p, i) for p in DOC_FILES for i, _ in enumerate(_blocks(p, "yaml"))],
    ids=lambda v: v.name if isinstance(v, Path) else str(v),
)
def test_yaml_examples_are_valid_manifests(path: Path, index: int) -> None:
    block = _blocks(path, "yaml")[index]
    if re.match(r"#.*\bconfig\.ya?ml\b", block):
        assert parse(block).documents  # a HomeClaw runtime-config sidecar, not a manifest
    else:
        assert load_text(block).plugins


def test_readme_manifest_example_is_the_bundled_one() -> None:
    shown = _blocks(ROOT / "README.md", "yaml")[0].split("\n", 1)[1]
    bundled = (ROOT / "examples" / "plugins" / "tool" / "weather" / "plugin.yaml").read_text()
    assert shown == bundled


def test_readme_weather_command_registers_the_example_folder_and_calls_its_code(
    tmp_path: Path,
) -> None:
    """The README's command line as typed in the checkout, on a data folder of its own."""
    line = next(
        x for b in _blocks(ROOT / "README.md", "sh") for x in b.splitlines() if "call weather" in x
    )
    assignment, program, *args = shlex.split(line)
    name, _, value = assignment.partition("=")
    assert (program, name) == ("plugyard", "PLUGYARD_PLUGIN_DIRS")
    assert (ROOT / value / "plugin.yaml").is_file() and (ROOT / value / "plugin.py").is_file()
    main = "import sys; from plugyard.cli.main import main; sys.exit(main())"
    env = {**os.environ, name: value, "PLUGYARD_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", main, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["data"]["conditions"] == "sunny"
