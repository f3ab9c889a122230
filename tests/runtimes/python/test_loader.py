"""Finding and importing plugin code: private names, vendor/, entrypoints, the cache."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from plugyard.runtimes.base import Target
from plugyard.runtimes.python import InProcessRuntime

from .conftest import call, target, write

MANIFEST = """
    id: {id}
    name: {id}
    description: Answers which copy of the code runs.
    capabilities:
      - {{id: which, description: Which copy.}}
"""


def plugin_folder(root: Path, plugin_id: str, files: dict[str, str]) -> Path:
    return write(root / plugin_id, {"plugin.yaml": MANIFEST.format(id=plugin_id), **files})


def test_two_plugins_plugin_py_never_collide(tmp_path: Path, runtime: InProcessRuntime) -> None:
    first = plugin_folder(tmp_path, "one", {"plugin.py": "def which():\n    return 1\n"})
    second = plugin_folder(tmp_path, "two", {"plugin.py": "def which():\n    return 2\n"})
    assert call(runtime, target(first), "which").data == 1
    assert call(runtime, target(second), "which").data == 2
    assert "plugin" not in sys.modules or not str(
        getattr(sys.modules["plugin"], "__file__", "")
    ).startswith(str(tmp_path))


def test_each_plugin_sees_its_own_vendored_dependency(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    code = "import shared_dep\n\ndef which():\n    return shared_dep.VERSION\n"
    first = plugin_folder(
        tmp_path, "one", {"plugin.py": code, "vendor/shared_dep/__init__.py": "VERSION = 1\n"}
    )
    second = plugin_folder(
        tmp_path, "two", {"plugin.py": code, "vendor/shared_dep/__init__.py": "VERSION = 2\n"}
    )
    assert call(runtime, target(first), "which").data == 1
    assert call(runtime, target(second), "which").data == 2
    assert "shared_dep" not in sys.modules
    assert not any(str(tmp_path) in entry for entry in sys.path)


def test_pth_files_in_vendor_are_never_run(tmp_path: Path, runtime: InProcessRuntime) -> None:
    marker = tmp_path / "pth-ran"
    folder = plugin_folder(
        tmp_path,
        "pth",
        {
            "plugin.py": "def which():\n    return 'ok'\n",
            "vendor/evil.pth": f"import pathlib; pathlib.Path({str(marker)!r}).touch()\n",
        },
    )
    assert call(runtime, target(folder), "which").data == "ok"
    assert not marker.exists()


def test_relative_imports_work_inside_a_plugin_package(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    folder = plugin_folder(
        tmp_path,
        "pkg",
        {
            "plugin/__init__.py": "from .impl import which\n",
            "plugin/impl.py": "from . import values\n\ndef which():\n    return values.X\n",
            "plugin/values.py": "X = 'relative'\n",
        },
    )
    assert call(runtime, target(folder), "which").data == "relative"


@pytest.mark.parametrize(
    "entrypoint",
    ["code.Which", "code:Which", "vendorlike.code:Which", "plugins.dir.code:Which"],
)
def test_entrypoints_are_found_in_the_folder(
    entrypoint: str, tmp_path: Path, runtime: InProcessRuntime
) -> None:
    manifest = f"""
        plugin:
          id: olo.which
          name: Which
          className: {entrypoint}
    """
    code = "class Which:\n    def execute(self, params, context, host):\n        return 'found'\n"
    folder = write(tmp_path, {"plugin.yaml": manifest, "code.py": code})
    assert call(runtime, target(folder), "execute").data == "found"


def test_an_entrypoint_without_a_folder_is_an_installed_module(
    tmp_path: Path, runtime: InProcessRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, {"installed_demo_mod.py": "def greet(name):\n    return f'hi {name}'\n"})
    monkeypatch.syspath_prepend(str(tmp_path))
    folder = write(
        tmp_path / "manifest",
        {
            "manifest.yaml": """
                name: greeter
                module: installed_demo_mod:greet
            """
        },
    )
    plugin = target(folder, "manifest.yaml")
    unplaced = Target(plugin.descriptor, None, content_hash=plugin.content_hash)
    assert call(runtime, unplaced, "execute", name="Ada").data == "hi Ada"


def test_code_is_loaded_once_and_again_after_forget(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    code = "TOKEN = object()\n\ndef which():\n    return id(TOKEN)\n"
    plugin = target(plugin_folder(tmp_path, "cached", {"plugin.py": code}))
    first = call(runtime, plugin, "which").data
    assert runtime.check(plugin) is None
    assert call(runtime, plugin, "which").data == first
    runtime.forget("cached")
    assert call(runtime, plugin, "which").data != first


def test_provided_code_answers_for_its_plugin(runtime: InProcessRuntime) -> None:
    from plugyard.manifest.model import Operation, PluginDescriptor, PythonRuntime

    class Greeter:
        def hello(self, name: str) -> str:
            return f"hello {name}"

    descriptor = PluginDescriptor(
        id="greeter", name="Greeter", runtime=PythonRuntime(), operations=(Operation(id="hello"),)
    )
    runtime.provide(Greeter(), "greeter")
    assert call(runtime, Target(descriptor), "hello", name="Bo").data == "hello Bo"


def test_provide_needs_a_plugin_id_for_plain_code(runtime: InProcessRuntime) -> None:
    with pytest.raises(ValueError, match="plugin id"):
        runtime.provide(object())
