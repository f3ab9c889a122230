"""Installed packages offering plugins through ``plugyard.plugins``, behind an allowlist.

Each test installs a real (tiny) distribution into its own folder — a package plus a
``.dist-info`` with ``entry_points.txt`` — and puts that folder on ``sys.path``.
"""

from __future__ import annotations

import json
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from textwrap import dedent

import pytest

from plugyard.registry.entrypoints import EntryPointSource

from .conftest import FIXTURES


class Site:
    """A site-packages folder of this test's own."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.modules: list[str] = []
        monkeypatch.syspath_prepend(str(root))

    def install(self, dist: str, module: str, code: str, entries: dict[str, str]) -> Path:
        package = self.root / module
        package.mkdir()
        (package / "__init__.py").write_text(dedent(code))
        info = self.root / f"{dist.replace('-', '_')}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
        lines = "".join(f"{name} = {target}\n" for name, target in entries.items())
        (info / "entry_points.txt").write_text(f"[plugyard.plugins]\n{lines}")
        self.modules.append(module)
        return package

    def source(self, *allow: str) -> EntryPointSource:
        return EntryPointSource.of(allow, path=[str(self.root)])


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    root = tmp_path / "site"
    root.mkdir()
    installed = Site(root, monkeypatch)
    yield installed
    for module in installed.modules:
        sys.modules.pop(module, None)


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


DESCRIBING = """
from plugyard.manifest.model import PluginDescriptor

def plugins():
    return [
        PluginDescriptor(id="ep-clock", name="Clock", version="1.0"),
        {"plugin": {"id": "ep-guard", "name": "Guard", "capability": "ACCESS"}},
    ]
"""


def test_an_allowlisted_callable_gives_descriptors_and_raw_manifests(site: Site) -> None:
    module = unique("acme_tools")
    package = site.install("acme-tools", module, DESCRIBING, {"tools": f"{module}:plugins"})
    result = site.source("Acme_Tools").load()
    found = {p.id: p for p in result.plugins}
    assert sorted(found) == ["ep-clock", "ep-guard"]
    assert found["ep-guard"].dialect == "olo"
    assert {p.source for p in found.values()} == {"entrypoint"}
    assert {p.location for p in found.values()} == {str(package.resolve())}
    assert result.failures == ()


def test_an_entry_point_may_name_a_folder_of_plugins(site: Site) -> None:
    module = unique("acme_folder")
    package = site.install(
        "acme-folder",
        module,
        "from pathlib import Path\nPLUGINS = Path(__file__).parent / 'plugins'\n",
        {"bundle": f"{module}:PLUGINS"},
    )
    shutil.copytree(
        FIXTURES / "yard" / "plugins" / "tool" / "weather", package / "plugins" / "weather"
    )
    (plugin,) = site.source("acme-folder").load().plugins
    assert (plugin.id, plugin.dialect, plugin.source) == ("weather", "homeclaw", "entrypoint")
    assert plugin.location == str((package / "plugins" / "weather").resolve())


def test_an_entry_point_may_name_a_package_that_ships_its_manifest(site: Site) -> None:
    module = unique("acme_pkg")
    package = site.install("acme-pkg", module, "", {"self": module})
    (package / "plugin.json").write_text(
        json.dumps({"id": "pkg-val", "type": "val-plugin", "name": "Pkg validator"})
    )
    (plugin,) = site.source("acme-pkg").load().plugins
    assert (plugin.id, plugin.family) == ("pkg-val", "val")


def test_only_allowlisted_names_are_loaded(site: Site) -> None:
    loaded = unique("loaded")
    ignored = unique("ignored")
    site.install(
        "one-dist", loaded, DESCRIBING, {"a": f"{loaded}:plugins", "b": f"{loaded}:plugins"}
    )
    site.install("other-dist", ignored, "raise RuntimeError('must never be imported')\n",
                 {"c": f"{ignored}:x"})  # fmt: skip
    result = site.source("one-dist:a").load()
    assert sorted(p.id for p in result.plugins) == ["ep-clock", "ep-guard"]
    assert result.skipped == ("one-dist:b", "other-dist:c")
    assert ignored not in sys.modules
    assert site.source().load().plugins == ()


@pytest.mark.parametrize(
    ("code", "target", "failure"),
    [
        ("raise ImportError('missing dependency')\n", "{m}:plugins", "plugin_load_error"),
        ("def plugins():\n    raise ValueError('bad')\n", "{m}:plugins", "plugin_load_error"),
        ("def plugins():\n    return 42\n", "{m}:plugins", "plugin_load_error"),
        ("PATH = 'relative/folder'\n", "{m}:PATH", "plugin_load_error"),
        ("def plugins():\n    return [{'id': 'x', 'type': 'cache-plugin', 'name': 'X'}]\n",
         "{m}:plugins", "unsupported_type"),
        ("def plugins():\n    return [{'plugin': {'name': 'no id'}}]\n", "{m}:plugins",
         "manifest_missing_field"),
    ],
    ids=["import-fails", "callable-raises", "not-plugins", "relative-path", "unknown-type",
         "bad-manifest"],
)  # fmt: skip
def test_a_broken_entry_point_is_reported_and_the_others_still_load(
    site: Site, code: str, target: str, failure: str
) -> None:
    broken, good = unique("broken"), unique("good")
    site.install("broken-dist", broken, code, {"bad": target.format(m=broken)})
    site.install("good-dist", good, DESCRIBING, {"good": f"{good}:plugins"})
    result = site.source("broken-dist", "good-dist").load()
    assert sorted(p.id for p in result.plugins) == ["ep-clock", "ep-guard"]
    assert [(f.source, f.code) for f in result.failures] == [
        ("entrypoint:broken-dist:bad", failure)
    ]


def test_trust_comes_from_the_source(site: Site) -> None:
    module = unique("acme_trust")
    site.install("acme-trust", module, DESCRIBING, {"tools": f"{module}:plugins"})
    source = EntryPointSource.of(["acme-trust"], trust="untrusted", path=[str(site.root)])
    assert {p.trust for p in source.load().plugins} == {"untrusted"}
