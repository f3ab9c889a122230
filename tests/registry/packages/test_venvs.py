"""Per-plugin virtual environments: off by default (a package with a requirements.txt is
refused), and when an operator turns them on, the requirements come from the operator's
wheel folder into a venv of the package's own, which its worker imports from."""

from __future__ import annotations

import asyncio
import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugyard.errors import PlugyardError
from plugyard.manifest.model import SubprocessRuntime
from plugyard.yard import Settings, Yard

from .zips import build

MANIFEST = """
name: needs_dep
version: 1.0.0
entrypoints:
  needs_dep: needs_dep.plugin:Plugin
"""
CODE = """
import tinydep


class Plugin:
    async def execute(self, params, context, host):
        return {"status": "success", "data": {"answer": tinydep.ANSWER, "at": tinydep.__file__}}
"""


def wheel(folder: Path, version: str = "1.0") -> Path:
    """A pure-Python wheel of ``tinydep``, written by hand."""
    info = f"tinydep-{version}.dist-info"
    members = {
        "tinydep/__init__.py": "ANSWER = 42\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: tinydep\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    members[f"{info}/RECORD"] = "".join(f"{name},,\n" for name in members) + f"{info}/RECORD,,\n"
    path = folder / f"tinydep-{version}-py3-none-any.whl"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    path.write_bytes(buffer.getvalue())
    return path


def package(requirement: str = "tinydep==1.0") -> bytes:
    return build(
        {
            "manifest.yaml": MANIFEST,
            "requirements.txt": requirement + "\n",
            "needs_dep/__init__.py": "",
            "needs_dep/plugin.py": CODE,
        }
    )


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    folder = tmp_path / "wheels"
    folder.mkdir()
    wheel(folder)
    return folder


def open_yard(tmp_path: Path, **options: object) -> Yard:
    settings = Settings(database=str(tmp_path / "y.db"), builtins=False, governed=False, **options)  # type: ignore[arg-type]
    return Yard.from_settings(settings)


@pytest.fixture
def yard(tmp_path: Path, wheels: Path) -> Iterator[Yard]:
    with open_yard(tmp_path, plugin_venvs=True, venv_wheels=wheels) as opened:
        yield opened


def test_requirements_are_refused_while_venvs_are_off(tmp_path: Path) -> None:
    with open_yard(tmp_path) as yard:
        with pytest.raises(PlugyardError) as caught:
            yard.packages.install(package(), trust="trusted")
        assert caught.value.code == "venv_disabled"
        assert yard.packages.installed() == []
        assert yard.registry.find("needs_dep") is None


def test_the_plugin_runs_from_its_own_venv(yard: Yard) -> None:
    done = yard.packages.install(package(), trust="trusted")
    assert done.package.venv is True
    plugin = yard.registry.require("needs_dep")
    assert isinstance(plugin.descriptor.runtime, SubprocessRuntime)

    async def go() -> object:
        try:
            return await yard.call("needs_dep", "execute", {})
        finally:
            await yard.runtimes["subprocess"].aclose()  # type: ignore[attr-defined]

    result = asyncio.run(go())
    assert result.ok, result.error  # type: ignore[attr-defined]
    data = result.data  # type: ignore[attr-defined]
    assert data["answer"] == 42
    assert f"{done.package.folder}/files/.venv/" in data["at"]


def test_a_requirement_the_wheel_folder_lacks_fails_and_leaves_nothing(yard: Yard) -> None:
    with pytest.raises(PlugyardError) as caught:
        yard.packages.install(package("tinydep==9.9"), trust="trusted")
    assert caught.value.code == "venv_failed"
    assert yard.packages.installed() == []
    assert not any(
        p.name.startswith(".staging") and p.is_dir() for p in yard.packages.root.iterdir()
    )
